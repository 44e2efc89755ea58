#!/usr/bin/env bash
# bench/tui_ab.sh ROUNDS SECONDS CCTOP... : the live view's CPU of several
# cctop binaries (a branch's and main's, say) and of perf top, interleaved
# on one target process, ROUNDS times: each binary's `cctop top -F 999 -p
# PID` in a detached tmux session (160x50), then `perf top -F 999 -g -p
# PID` (--call-graph dwarf with TARGET=cxx), one after the other, each
# measured over SECONDS after a warm-up of WARM seconds (default 6: past
# cctop's start, its symbol tables and its counters' trial, which
# bench/tui_cpu.sh's 3 s take in). CPU is the tool's threads' schedstat
# run time, in percent of one core.
#
# Where bench/tui_cpu.sh measures one binary against the references in
# one run, this one puts two builds side by side on the same target, which
# a 2-CPU VM's noise (0.15 points between runs) otherwise hides.
#
# Environment: TARGET=go (default: `cctop workload density -threads 4
# -loop`, run from the first binary) or cxx (bench/tui_cpu.sh's spin4cxx,
# built with g++), WARM.
set -euo pipefail

[[ $# -ge 3 && $1 =~ ^[0-9]+$ && $2 =~ ^[0-9]+$ ]] || { echo "usage: bash bench/tui_ab.sh ROUNDS SECONDS CCTOP..." >&2; exit 2; }
rounds=$1 secs=$2
shift 2
bins=("$@")
TARGET=${TARGET:-go}
WARM=${WARM:-6}
for t in tmux perf; do command -v $t >/dev/null || { echo "tui_ab.sh: $t not found" >&2; exit 1; }; done
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tmp=$(mktemp -d /tmp/cctop-tui-ab.XXXXXX)
sess=cctop-tui-ab-$$
target_pid=
cleanup() {
	tmux kill-session -t "=$sess" 2>/dev/null || true
	[[ -n $target_pid ]] && kill "$target_pid" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

case $TARGET in
go)
	"${bins[0]}" workload density -threads 4 -loop >/dev/null 2>&1 &
	target_pid=$!
	callgraph=-g
	;;
cxx)
	# The C++ target of bench/tui_cpu.sh, taken from it.
	awk '/cat >"\$tmp\/spin4.cc" <<.EOF./{p=1; next} p && /^EOF$/{p=0} p' "$root/bench/tui_cpu.sh" >"$tmp/spin4.cc"
	g++ -O2 -std=c++17 -fomit-frame-pointer -pthread -o "$tmp/spin4cxx" "$tmp/spin4.cc"
	"$tmp/spin4cxx" &
	target_pid=$!
	callgraph="--call-graph dwarf"
	;;
*) echo "tui_ab.sh: TARGET must be go or cxx" >&2; exit 2 ;;
esac
sleep 1

nsec() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{n += $1} END {printf "%.0f", n}'; }
# run NAME CMD: the CPU of CMD in tmux over the interval.
run() {
	tmux new-session -d -s "$sess" -x 160 -y 50 "exec $2"
	sleep 1
	local pid a b t0 t1
	pid=$(tmux display-message -p -t "=$sess:" '#{pane_pid}')
	sleep "$WARM"
	a=$(nsec "$pid") t0=$(date +%s.%N)
	sleep "$secs"
	b=$(nsec "$pid") t1=$(date +%s.%N)
	awk -v a="$a" -v b="$b" -v t0="$t0" -v t1="$t1" -v n="$1" 'BEGIN {printf "%-24s %.3f%%\n", n, (b - a) / 1e7 / (t1 - t0)}'
	tmux send-keys -t "=$sess:" q
	sleep 2
	tmux kill-session -t "=$sess" 2>/dev/null || true
	sleep 1
}

echo "target: $TARGET (pid $target_pid); ${secs}s after ${WARM}s; % of one core"
for r in $(seq "$rounds"); do
	for b in "${bins[@]}"; do
		run "$b" "$b top -F 999 -p $target_pid"
	done
	run "perf top $callgraph" "perf top -F 999 $callgraph -p $target_pid"
done
