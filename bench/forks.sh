#!/usr/bin/env bash
# bench/forks.sh [SHORT LONG]: memory of cctop record on a target that forks
# without end, against `perf record -g` on the same target in the same run.
# The short version is TestForkLoopForgotten (and the fork case of
# TestRecordTargetFaults).
#
# The target is `bash -c 'while :; do /bin/true; done'`: about a thousand
# short-lived processes a second on the development VM, each exec'ing
# /bin/true, all of them sampled with the shell. Each tool records it twice,
# for SHORT and for LONG seconds (default 30 and 120):
#
#   cctop   cctop record --calls none -d SECONDS -o FILE -- bash -c LOOP
#   perf    timeout -s INT SECONDS perf record -g -o FILE -- bash -c LOOP
#
# and the script prints each run's processes, largest RSS (/usr/bin/time) and
# the RSS growth per thousand processes between the two runs: a tool that
# keeps something per exited process grows with the run; one that forgets
# them levels off. cctop forgets an ended process one drain of the rings
# after its last thread exits.
#
# PID_MAX=N sets kernel.pid_max for the run (root; restored after): with the
# kernel's default of 32768, PIDs come round again within half a minute here
# and a per-PID table stops growing there; systemd raises pid_max to 4194304.
set -euo pipefail

SHORT=${1:-30}
LONG=${2:-120}
PID_MAX=${PID_MAX:-}
LOOP='while :; do /bin/true; done'

die() { echo "forks.sh: $*" >&2; exit 1; }
command -v go >/dev/null || die "go not found: install Go to build cctop"
command -v perf >/dev/null || die "perf not found: apt-get install linux-perf (the reference)"
[[ -x /usr/bin/time ]] || die "/usr/bin/time not found: apt-get install time"
[[ $SHORT =~ ^[0-9]+$ && $LONG =~ ^[0-9]+$ && $SHORT -gt 0 && $LONG -gt $SHORT ]] || die "usage: bash bench/forks.sh [SHORT LONG] (seconds, SHORT < LONG)"

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tmp=$(mktemp -d /tmp/cctop-forks.XXXXXX)
old_pid_max=$(cat /proc/sys/kernel/pid_max)
cleanup() {
	[[ -n $PID_MAX ]] && echo "$old_pid_max" >/proc/sys/kernel/pid_max 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
if [[ -n $PID_MAX ]]; then
	echo "$PID_MAX" >/proc/sys/kernel/pid_max || die "cannot set kernel.pid_max (root needed)"
fi

echo "building cctop..." >&2
(cd "$root" && go build -o "$tmp/cctop" .) || die "go build failed"

declare -A PROCS RSS
run() { # run TOOL SECONDS
	local tool=$1 secs=$2 key=$1.$2
	echo "$tool, ${secs}s..." >&2
	case $tool in
	cctop)
		/usr/bin/time -f "%M" -o "$tmp/$key.time" "$tmp/cctop" record --calls none -d "$secs" -o "$tmp/$key.pb.gz" -- bash -c "$LOOP" 2>"$tmp/$key.err" ||
			die "cctop record failed: $(cat "$tmp/$key.err")"
		PROCS[$key]=$(grep -oE 'started [0-9]+ child' "$tmp/$key.err" | grep -oE '[0-9]+' || echo 0)
		;;
	perf)
		/usr/bin/time -f "%M" -o "$tmp/$key.time" timeout -s INT "$secs" perf record -g -o "$tmp/$key.data" -- bash -c "$LOOP" >/dev/null 2>"$tmp/$key.err" || true
		PROCS[$key]=$(perf report -i "$tmp/$key.data" --stats 2>/dev/null | awk '/^ *FORK events:/ {print $3}')
		rm -f "$tmp/$key.data"
		;;
	esac
	# For perf, /usr/bin/time measures timeout; its maximum RSS is the
	# largest of timeout and the children it waited for, perf included.
	RSS[$key]=$(($(tail -1 "$tmp/$key.time") / 1024))
}
for tool in cctop perf; do
	run "$tool" "$SHORT"
	run "$tool" "$LONG"
done

echo
echo "target: $LOOP; kernel.pid_max $(cat /proc/sys/kernel/pid_max); $(nproc) CPUs"
printf '%-6s %14s %14s %14s %14s %18s\n' tool "procs ${SHORT}s" "RSS MiB ${SHORT}s" "procs ${LONG}s" "RSS MiB ${LONG}s" "MiB per 1000 procs"
for tool in cctop perf; do
	s=$tool.$SHORT l=$tool.$LONG
	growth=$(awk -v a="${RSS[$s]}" -v b="${RSS[$l]}" -v p="${PROCS[$s]:-0}" -v q="${PROCS[$l]:-0}" 'BEGIN{ if (q > p) printf "%.2f", 1000 * (b - a) / (q - p); else print "-" }')
	printf '%-6s %14s %14s %14s %14s %18s\n' "$tool" "${PROCS[$s]:-?}" "${RSS[$s]}" "${PROCS[$l]:-?}" "${RSS[$l]}" "$growth"
done
echo "procs: child processes the target started (cctop's summary; perf report --stats FORK events, threads included);"
echo "RSS: largest resident set of the tool (/usr/bin/time)."
