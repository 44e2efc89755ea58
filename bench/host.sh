#!/usr/bin/env bash
# bench/host.sh [SECONDS]: cctop over the whole host against perf in the same
# run (issue 32). Two workloads of cctop's own run, four busy threads in all
# (`cctop workload spin -threads 2` and `cctop workload density -threads 2`),
# and each profiler samples every process at 999 Hz for SECONDS (default 15),
# one after the other:
#
#   cctop   cctop record -a -F 999 -d SECONDS -o FILE
#   perf    perf record -a -g -F 999 -o FILE -- sleep SECONDS
#
# It prints, for each, the samples and the records lost (cctop's summary;
# perf report --stats: perf's samples include the idle task's, which cctop
# does not take) and each workload's share of the samples of the tasks that
# ran (cctop's pid labels; perf report --sort pid without pid 0), and the
# difference of the shares in points.
set -euo pipefail

SECS=${1:-15}
die() { echo "host.sh: $*" >&2; exit 1; }
command -v go >/dev/null || die "go not found: install Go to build cctop"
command -v perf >/dev/null || die "perf not found: apt-get install linux-perf (the reference)"
[[ $SECS =~ ^[0-9]+$ && $SECS -gt 0 ]] || die "usage: bash bench/host.sh [SECONDS]"

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tmp=$(mktemp -d /tmp/cctop-host.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	rm -rf "$tmp"
}
trap cleanup EXIT
(cd "$root" && go build -o "$tmp/cctop" .)
cctop=$tmp/cctop

"$cctop" workload spin -threads 2 -loop >/dev/null 2>&1 & pids+=($!)
"$cctop" workload density -threads 2 -duration $((4 * SECS + 60))s >/dev/null 2>&1 & pids+=($!)
spin=${pids[0]} density=${pids[1]}
sleep 1

"$cctop" record -a -F 999 -d "${SECS}s" -o "$tmp/c.pb.gz" 2>"$tmp/c.err"
perf record -q -a -g -F 999 -o "$tmp/p.data" -- sleep "$SECS" 2>"$tmp/p.err"

c_lost=$(sed -n 's/.* \([0-9]*\) lost,.*/\1/p' "$tmp/c.err" | head -1)
c_samples=$(sed -n 's/^cctop: \([0-9]*\) samples in.*/\1/p' "$tmp/c.err" | head -1)
p_lost=$(perf report -i "$tmp/p.data" --stats 2>/dev/null | awk '/LOST /{n+=$NF} END{print n+0}')
p_samples=$(perf report -i "$tmp/p.data" --stats 2>/dev/null | awk '/SAMPLE events:/{print $3; exit}')

# A pid's share of the samples, in percent.
c_share() { go tool pprof -tags -sample_index=samples "$tmp/c.pb.gz" 2>/dev/null |
	awk -v pid="$1" '/^ *pid:/{p=1; next} p && /^ *$/{p=0} p && $NF==pid {gsub(/[(%):]/, "", $2); print $2}'; }
# perf samples the idle task too (pid 0, swapper), cctop does not: perf's
# shares are of the samples of other tasks. (perf report --sort pid sorts
# by thread: perf script says each sample's process.)
perf script -i "$tmp/p.data" -F pid 2>/dev/null | awk '{n[$1]++} END{for (p in n) print p, n[p]}' >"$tmp/p.pids"
p_share() { awk -v pid="$1" '$1=="0"{next} {all+=$2} $1==pid{s=$2} END{printf "%.2f", all ? 100*s/all : 0}' "$tmp/p.pids"; }

echo "| profiler | samples | lost | spin (pid $spin) | density (pid $density) |"
echo "|---|---|---|---|---|"
cs=$(c_share "$spin"); cd=$(c_share "$density")
ps=$(p_share "$spin"); pd=$(p_share "$density")
echo "| cctop record -a | ${c_samples:-?} | ${c_lost:-?} | ${cs:-0}% | ${cd:-0}% |"
echo "| perf record -a -g | ${p_samples:-?} | ${p_lost:-?} | ${ps}% | ${pd}% |"
awk -v a="${cs:-0}" -v b="$ps" -v c="${cd:-0}" -v d="$pd" 'BEGIN{
	x=a-b; if (x<0) x=-x; y=c-d; if (y<0) y=-y
	printf "difference of the shares: spin %.1f points, density %.1f points\n", x, y}'
