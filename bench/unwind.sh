#!/usr/bin/env bash
# DWARF unwinding against Linux perf on a binary without frame pointers:
# the distribution's Python running bench/cpu_bound.py, sampled at 999 Hz
# in user space only.
#   - perf record --call-graph dwarf (8192-byte stack copies), twice: the
#     second run is the reference for the overlap that sampling noise
#     leaves between two runs of the same tool.
#   - cctop record with --unwind auto (which picks dwarf for this binary)
#     at several --stack-size values.
# For each run: samples, lost records, the share of samples whose stack
# reaches Py_BytesMain, and the profiler's CPU seconds (it attaches with -p,
# so the target's are not counted; perf unwinds later, in perf script,
# whose CPU seconds are the last column). Then the calling-context overlap
# of cctop (default stack size) with perf (bench/ctxoverlap).
#
# usage: bench/unwind.sh [ROUNDS]      env: CCTOP (binary), PYTHON, OUT, SIZES
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
rounds=${1:-3000}
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
if [ -z "${CCTOP:-}" ]; then
	CCTOP="$out/cctop"
	(cd "$here/.." && go build -o "$CCTOP" .)
fi
(cd "$here/.." && go build -o "$out/ctxoverlap" ./bench/ctxoverlap)
command -v perf >/dev/null || { echo "perf is not installed" >&2; exit 2; }
export PYTHONHASHSEED=0
py=${PYTHON:-/usr/bin/python3.11}
sizes=${SIZES:-"2048 4096 8192 16384 32768"}
timefmt="%U %S %e"

echo "python: $py, $rounds rounds"
printf "%-28s %8s %6s %8s %10s %10s\n" run samples lost "reach%" "cpu s" "+script s"
# Each tool attaches (-p) to a target started just before, so that its own
# CPU time is measured apart from the target's; it ends when the target
# exits.
start_target() { "$py" "$here/cpu_bound.py" "$rounds" >/dev/null & target=$!; sleep 0.05; }
perf_run() { # $1: name
	start_target
	/usr/bin/time -f "$timefmt" -o "$out/$1.time" perf record -q --all-user -F 999 --call-graph dwarf -p "$target" -o "$out/$1.data" >/dev/null 2>"$out/$1.err"
	wait "$target" || true
	# perf unwinds afterwards, in perf script: its time counts too.
	/usr/bin/time -f "$timefmt" -o "$out/$1.script.time" perf script -i "$out/$1.data" -F tid,ip,sym,dso --no-inline >"$out/$1.txt" 2>/dev/null
	local lost samples reach u s e su ss se
	lost=$(perf report -i "$out/$1.data" --stats 2>/dev/null | awk '/ LOST events:/ { print $3; f = 1 } END { if (!f) print 0 }' | head -1)
	read -r samples reach < <("$out/ctxoverlap" -reach Py_BytesMain "$out/$1.txt" "$out/$1.txt" | awk -F'[ ,%]+' 'NR == 1 { print $2, $6 }')
	read -r u s e <"$out/$1.time"
	read -r su ss se <"$out/$1.script.time"
	printf "%-28s %8s %6s %8s %10.2f %10.2f\n" "perf --call-graph dwarf" "$samples" "$lost" "$reach" "$(sum "$u" "$s")" "$(sum "$su" "$ss")"
}
cctop_run() { # $1: stack size
	start_target
	/usr/bin/time -f "$timefmt" -o "$out/cctop$1.time" "$CCTOP" record --user -F 999 --calls none --stack-size "$1" -p "$target" -o "$out/cctop$1.pb.gz" >/dev/null 2>"$out/cctop$1.err"
	wait "$target" || true
	local lost samples reach u s e
	lost=$(awk '/samples in/ { for (i = 1; i <= NF; i++) if ($i == "lost,") print $(i - 1) }' "$out/cctop$1.err")
	read -r samples reach < <("$out/ctxoverlap" -reach Py_BytesMain "$out/cctop$1.pb.gz" "$out/cctop$1.pb.gz" | awk -F'[ ,%]+' 'NR == 1 { print $2, $6 }')
	read -r u s e <"$out/cctop$1.time"
	printf "%-28s %8s %6s %8s %10.2f %10s\n" "cctop --stack-size $1" "$samples" "$lost" "$reach" "$(sum "$u" "$s")" -
}
sum() { awk -v a="$1" -v b="$2" 'BEGIN { print a + b }'; }
perf_run perf1
for size in $sizes; do cctop_run "$size"; done
perf_run perf2
echo "context overlap perf/perf:  $("$out/ctxoverlap" "$out/perf1.txt" "$out/perf2.txt" | tail -1 | awk '{ print $3 }')"
echo "context overlap cctop/perf: $("$out/ctxoverlap" "$out/cctop8192.pb.gz" "$out/perf1.txt" | tail -1 | awk '{ print $3 }') and $("$out/ctxoverlap" "$out/cctop8192.pb.gz" "$out/perf2.txt" | tail -1 | awk '{ print $3 }') (cctop at 8192 bytes against each perf run)"
echo "files in $out"
