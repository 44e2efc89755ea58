#!/usr/bin/env bash
# bench/soak.sh [MINUTES]: memory of a long `cctop top` session. The recursive
# workload runs for MINUTES (default 60) under `cctop top -F 999 -p PID` in a
# detached tmux session, with cctop's default bounds (--max-nodes 250000,
# --max-log 2000000) unless CCTOP_FLAGS says otherwise; `perf top -F 999 -g -p
# PID` watches the same target in the same run as the reference (REF=0 leaves
# it out).
#
# Every INTERVAL seconds (default 60) it prints cctop's and perf top's
# resident memory (VmRSS, MB) and open descriptors, and the samples, lost
# records and bounds cctop's header shows. Every EXPORT minutes (default 10)
# and at the end it exports the profile with `x` and reads it back
# (bench/profstat): samples, contexts in the tree, the share of samples in
# [other], and the bounds' comments. At the end: peak RSS of both, RSS growth
# over the second half of the run, and how long cctop took to quit.
#
# The tree must stay within --max-nodes and RSS must level off: the log is a
# ring and the tree folds, so nothing grows with time past the caps.
set -euo pipefail

MINUTES=${1:-60}
INTERVAL=${INTERVAL:-60}
EXPORT=${EXPORT:-10}
REF=${REF:-1}
CCTOP_FLAGS=${CCTOP_FLAGS:-}
WORKLOAD_FLAGS=${WORKLOAD_FLAGS:-}

die() { echo "soak.sh: $*" >&2; exit 1; }
need() { command -v "$1" >/dev/null 2>&1 || die "$1 not found: $2"; }
need go "install Go to build cctop"
need tmux "apt-get install tmux (cctop top needs a terminal)"
[[ $REF == 1 ]] && need perf "apt-get install linux-perf (the reference), or REF=0"
[[ $MINUTES =~ ^[0-9]+$ && $MINUTES -gt 0 ]] || die "usage: bash bench/soak.sh [MINUTES]"

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tmp=$(mktemp -d /tmp/cctop-soak.XXXXXX)
sess=cctop-soak-$$
ref=cctop-soak-ref-$$
target_pid=
cctop_pid=
perf_pid=

alive() { [[ -r /proc/$1/stat ]] && [[ $(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1) != Z ]]; }

cleanup() {
	tmux kill-session -t "=$sess" 2>/dev/null || true
	tmux kill-session -t "=$ref" 2>/dev/null || true
	[[ -n $target_pid ]] && kill "$target_pid" 2>/dev/null || true
	for p in $cctop_pid $perf_pid $target_pid; do
		for _ in $(seq 100); do alive "$p" || break; sleep 0.1; done
		kill -KILL "$p" 2>/dev/null || true
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "building cctop..." >&2
(cd "$root" && go build -o "$tmp/cctop" . && go build -o "$tmp/profstat" ./bench/profstat) || die "go build failed"

# shellcheck disable=SC2086
"$tmp/cctop" workload recursive -loop $WORKLOAD_FLAGS >/dev/null 2>&1 &
target_pid=$!
sleep 1
alive "$target_pid" || die "the workload did not start"

rss() { awk '/^VmRSS/{printf "%.1f", $2 / 1024}' "/proc/$1/status" 2>/dev/null || echo -; }
hwm() { awk '/^VmHWM/{printf "%.1f", $2 / 1024}' "/proc/$1/status" 2>/dev/null || echo -; }
fds() { ls "/proc/$1/fd" 2>/dev/null | wc -l; }
screen() { tmux capture-pane -p -t "=$sess:" 2>/dev/null || true; }
# field LABEL: the value after LABEL in cctop's header ("lost 0", "folded 12k contexts").
field() { screen | head -2 | grep -oE "$1 [0-9.]+[kMG]?" | head -1 | awk '{print $NF}'; }
samples() { screen | head -1 | grep -oE '[0-9.]+[kMG]? samples' | head -1 | awk '{print $1}'; }
now() { date +%s; }

# shellcheck disable=SC2086
tmux new-session -d -s "$sess" -c "$tmp" -x 120 -y 40 "exec $tmp/cctop top -F 999 -p $target_pid $CCTOP_FLAGS 2>$tmp/cctop.err"
cctop_pid=$(tmux display-message -p -t "=$sess:" '#{pane_pid}')
if [[ $REF == 1 ]]; then
	tmux new-session -d -s "$ref" -x 120 -y 40 "exec perf top -F 999 -g -p $target_pid 2>$tmp/perf.err"
	perf_pid=$(tmux display-message -p -t "=$ref:" '#{pane_pid}')
fi
for _ in $(seq 150); do
	[[ -n $(samples) ]] && break
	alive "$cctop_pid" || die "cctop top ended: $(cat "$tmp/cctop.err")"
	sleep 0.1
done
[[ -n $(samples) ]] || die "no samples on cctop's screen after 15 s: $(screen)"

# export N: press x and enter, wait for the file, read it back.
export_profile() {
	rm -f "$tmp/cctop.pb.gz"
	tmux send-keys -t "=$sess:" x
	sleep 0.5
	tmux send-keys -t "=$sess:" Enter
	for _ in $(seq 100); do [[ -s $tmp/cctop.pb.gz ]] && break; sleep 0.1; done
	if [[ -s $tmp/cctop.pb.gz ]]; then
		echo "  export at $1 min: $("$tmp/profstat" "$tmp/cctop.pb.gz")"
	else
		echo "  export at $1 min: no file: $(screen | tail -2)"
	fi
}

echo "target: cctop workload recursive -loop $WORKLOAD_FLAGS (pid $target_pid); cctop top -F 999 $CCTOP_FLAGS; reference: $([[ $REF == 1 ]] && echo "perf top -F 999 -g" || echo none); $(nproc) CPUs; $MINUTES min"
printf '%6s %10s %10s %6s %10s %10s %8s %8s %10s %12s\n' min cctop_MB cctop_HWM fds perf_MB samples lost folded "log drop" ""
start=$(now)
end=$((start + MINUTES * 60))
next_export=$((start + EXPORT * 60))
declare -a rss_at
while :; do
	t=$(now)
	m=$(((t - start) / 60))
	alive "$cctop_pid" || die "cctop top ended after $m min: $(cat "$tmp/cctop.err")"
	alive "$target_pid" || die "the workload ended after $m min"
	r=$(rss "$cctop_pid")
	rss_at+=("$((t - start)) $r")
	printf '%6.1f %10s %10s %6s %10s %10s %8s %8s %10s\n' "$(awk -v s=$((t - start)) 'BEGIN{print s / 60}')" "$r" "$(hwm "$cctop_pid")" "$(fds "$cctop_pid")" \
		"$([[ -n $perf_pid ]] && rss "$perf_pid" || echo -)" "$(samples)" "$(field lost || true)" "$(field folded || true)" "$(field 'log dropped' || true)"
	if ((t >= next_export && t < end)); then
		export_profile "$m"
		next_export=$((next_export + EXPORT * 60))
	fi
	((t >= end)) && break
	sleep $((end - t < INTERVAL ? end - t : INTERVAL))
done

export_profile "$MINUTES"
echo "cctop's last header:"
screen | head -3 | sed 's/^/  /'
peak=$(hwm "$cctop_pid")
peak_perf=$([[ -n $perf_pid ]] && hwm "$perf_pid" || echo -)
half=$(printf '%s\n' "${rss_at[@]}" | awk -v h=$((MINUTES * 30)) '$1 >= h {print $2; exit}')
last=$(rss "$cctop_pid")
w0=$(date +%s.%N)
tmux send-keys -t "=$sess:" q
for _ in $(seq 600); do alive "$cctop_pid" || break; sleep 0.1; done
quit=$(awk -v a="$w0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b - a}')
alive "$cctop_pid" && quit="over 60"
echo
echo "cctop: peak RSS ${peak} MB; RSS ${half:-?} MB at half time, ${last} MB at the end; quit in ${quit}s"
[[ -n $perf_pid ]] && echo "perf top -g (reference): peak RSS ${peak_perf} MB; ratio cctop/perf top $(awk -v a="$peak" -v b="$peak_perf" 'BEGIN{if (b > 0) printf "%.2f", a / b; else print "-"}')"
exit 0
