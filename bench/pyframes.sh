#!/usr/bin/env bash
# Python frames read from the interpreter (issue 31): what they cost, in
# one run, attached (record -p) at 999 Hz to a CPU-bound script
# (bench/pywork.py), interleaved RUNS times each:
#   cctop's own CPU time with --python off and with the default (auto),
#     measured over its whole life (bench/rusage), and their ratio;
#   the target's work (iterations) per second of each window, against a
#     window with no profiler, the same length, in the same run;
#   what the reads cost each (from the summary: system calls and µs per
#     stack read) and the torn share.
# usage: bench/pyframes.sh [CCTOP]   env: RUNS (3), SECONDS_EACH (8), PYTHONS
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
runs=${RUNS:-3}
secs=${SECONDS_EACH:-8}
cctop=${1:-}
if [ -z "$cctop" ]; then
	(cd "$here" && go build -o "$out/cctop" .)
	cctop=$out/cctop
fi
(cd "$here" && go build -o "$out/rusage" ./bench/rusage)
pythons=${PYTHONS:-"/usr/bin/python3.11 $(ls /root/.pyenv/versions/3.9.*/bin/python3.9 /root/.pyenv/versions/3.12.*/bin/python3.12 /root/.pyenv/versions/3.13.*/bin/python3.13 2>/dev/null | tr '\n' ' ')"}
cd "$out"
count() { cat "$1" 2>/dev/null || echo 0; }
# window CMD...: the target's iterations per second while CMD runs.
window() {
	local a b t0 t1
	a=$(count work); t0=$(date +%s.%N)
	"$@"
	b=$(count work); t1=$(date +%s.%N)
	echo "$a $b $t0 $t1" | awk '{printf "%.1f", ($2 - $1) / ($4 - $3)}'
}
echo "| python | run | target it/s, no profiler | --python off: cctop CPU s | target it/s | auto: cctop CPU s | target it/s | CPU ratio auto/off | reads | torn |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for py in $pythons; do
	[ -x "$py" ] || continue
	name=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
	[ "$py" = /usr/bin/python3.11 ] && name="debian $name" || name="pyenv $name"
	rm -f work
	"$py" "$here/bench/pywork.py" work & tpid=$!
	sleep 1.5
	for r in $(seq "$runs"); do
		base=$(window sleep "$secs")
		offr=$(window "$out/rusage" off.ru "$cctop" record -p "$tpid" -d "${secs}s" -o off.pb.gz --python off 2>off.err)
		autor=$(window "$out/rusage" auto.ru "$cctop" record -p "$tpid" -d "${secs}s" -o auto.pb.gz 2>auto.err)
		offc=$(cut -d' ' -f1 off.ru); autoc=$(cut -d' ' -f1 auto.ru)
		reads=$(sed -n 's/.*python reads: [0-9]* stacks, \(.*\) each/\1/p' auto.err)
		torn=$(sed -n 's/.*samples merged, \([0-9.]*%\) torn.*/\1/p' auto.err)
		ratio=$(awk -v a="$autoc" -v o="$offc" 'BEGIN{printf "%.2f", a / o}')
		echo "| $name | $r | $base | $offc | $offr | $autoc | $autor | $ratio | $reads | $torn |"
	done
	kill "$tpid"; wait "$tpid" 2>/dev/null || true
done
