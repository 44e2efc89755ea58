#!/usr/bin/env bash
# bench/offcpu.sh [ROUNDS] [TRIALS]: what off-CPU profiling costs a target
# that switches a hundred thousand times a second, against perf in the same
# run.
#
# The target is `cctop workload pingpong -rounds ROUNDS` (default 400000):
# two threads passing a byte over two pipes, every round two blocking reads,
# two switches out. It runs pinned to CPU 0 and the profilers to CPU 1 (on a
# machine with one CPU, everything shares it), so that what slows the target
# is what the kernel does for the profiler in the target's own context at
# each switch (records, stack copies, event scheduling), not the profiler
# competing for its CPU. Each phase runs TRIALS times (default 3); the
# median rounds/s is kept:
#
#   alone         the target with no profiler
#   perf-cs       perf record -e context-switches -g: a sample at every
#                 switch with a frame-pointer call chain (the reference)
#   perf-switch   perf record --switch-events -e cpu-clock -F 999 -g: what
#                 cctop's floor is, a clock and a record at every switch in
#                 and out (the time off the CPU, exact), and no stack
#   cctop-offcpu  cctop record --mode offcpu --calls none: a record at every
#                 switch (exact time off the CPU), stack samples of one
#                 switch in N, N kept near 1000 stacks a second per CPU
#   cctop-wall    cctop record --mode wall (defaults: counting calls too)
#   perf-cs-p / cctop-offcpu-p  the same two attached to a running target
#                 (-p): events opened per thread, as on a live server
#
# For each it prints rounds/s, the slowdown (alone / phase) and, for cctop,
# the records lost and the switches left unpaired, from its summary; the
# last line is cctop's slowdown over perf's, launched and attached.
set -euo pipefail

ROUNDS=${1:-400000}
TRIALS=${2:-3}
die() { echo "offcpu.sh: $*" >&2; exit 1; }
need() { command -v "$1" >/dev/null 2>&1 || die "$1 not found: $2"; }
need go "install Go to build cctop"
need perf "apt-get install linux-perf (the reference)"
need taskset "apt-get install util-linux"
[[ $ROUNDS =~ ^[0-9]+$ && $TRIALS =~ ^[0-9]+$ ]] || die "usage: bash bench/offcpu.sh [ROUNDS] [TRIALS]"

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tmp=$(mktemp -d /tmp/cctop-offcpu.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && go build -o "$tmp/cctop" .)
bin=$tmp/cctop
tgt="taskset -c 0"
tool="taskset -c 1"
if [[ $(nproc) -lt 2 ]]; then tgt=""; tool=""; fi
work=("$bin" workload pingpong -rounds "$ROUNDS")

rate() { awk '/^rounds\/s/ {print $2}' "$1"; }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# attached runs the target by itself for the same rounds and attaches the
# tool (the rest of the arguments, to which -p PID is added) once it runs.
attached() {
	local out=$1; shift
	$tgt "${work[@]}" >"$out" &
	local pid=$!
	sleep 0.2
	$tool "$@" -p "$pid" >"$out.tool" 2>&1 &
	local tp=$!
	wait "$pid"
	kill -INT "$tp" 2>/dev/null || true
	wait "$tp" || true
}

declare -A R LOST UNPAIRED
phases="alone perf-cs perf-switch cctop-offcpu cctop-wall perf-cs-p cctop-offcpu-p"
for phase in $phases; do
	vals=()
	lost=0
	unp=0
	for ((i = 0; i < TRIALS; i++)); do
		out=$tmp/$phase.$i
		case $phase in
		alone) $tgt "${work[@]}" >"$out" ;;
		perf-cs) $tool perf record -q -e context-switches -g -o "$tmp/perf.data" -- $tgt "${work[@]}" >"$out" 2>"$out.tool" ;;
		perf-switch) $tool perf record -q --switch-events -e cpu-clock -F 999 -g -o "$tmp/perf.data" -- $tgt "${work[@]}" >"$out" 2>"$out.tool" ;;
		cctop-offcpu) $tool "$bin" record --mode offcpu --calls none -o "$tmp/p.pb.gz" -- $tgt "${work[@]}" >"$out" 2>"$out.tool" ;;
		cctop-wall) $tool "$bin" record --mode wall -o "$tmp/p.pb.gz" -- $tgt "${work[@]}" >"$out" 2>"$out.tool" ;;
		perf-cs-p) attached "$out" perf record -q -e context-switches -g -o "$tmp/perf.data" ;;
		cctop-offcpu-p) attached "$out" "$bin" record --mode offcpu --calls none -o "$tmp/p.pb.gz" ;;
		esac
		# The workload's own lines and the tool's summary share the file
		# when the tool launched it.
		vals+=("$(rate "$out")")
		if [[ -f $out.tool ]]; then
			l=$(sed -n 's/.* \([0-9][0-9]*\) lost,.*/\1/p' "$out.tool" | head -1)
			u=$(sed -n 's/.*, \([0-9][0-9]*\) switches unpaired.*/\1/p' "$out.tool" | head -1)
			lost=$((lost + ${l:-0}))
			unp=$((unp + ${u:-0}))
		fi
	done
	R[$phase]=$(printf '%s\n' "${vals[@]}" | median)
	LOST[$phase]=$lost
	UNPAIRED[$phase]=$unp
done

printf '%-16s %12s %9s %12s %12s\n' phase rounds/s slowdown lost unpaired
for phase in $phases; do
	awk -v p="$phase" -v r="${R[$phase]}" -v a="${R[alone]}" -v l="${LOST[$phase]}" -v u="${UNPAIRED[$phase]}" \
		'BEGIN { printf "%-16s %12.0f %8.2fx %12d %12d\n", p, r, a / r, l, u }'
done
awk -v a="${R[alone]}" -v pc="${R[perf-cs]}" -v cc="${R[cctop-offcpu]}" -v pp="${R[perf-cs-p]}" -v cp="${R[cctop-offcpu-p]}" -v ps="${R[perf-switch]}" \
	'BEGIN { printf "cctop --mode offcpu slows the target %.2fx as much as perf record -e context-switches -g (launched), %.2fx (attached); %.2fx as much as perf record --switch-events (launched)\n", (a / cc) / (a / pc), (a / cp) / (a / pp), (a / cc) / (a / ps) }'
echo "(lost and unpaired are summed over $TRIALS trials; rounds/s is the median; $(nproc) CPUs)"
