#!/usr/bin/env bash
# The first batches of a --unwind dwarf recording, while the modules the
# first samples need load (issue 19: "the reader never waits on symbols").
# Each run launches a target under `cctop record --unwind dwarf -d 2` and
# reads from the profile's comments the longest time the builder took over
# one batch (while it works on one, the reader's queue fills), how many
# records waited for a module loading aside, and the records lost. The
# reference is perf record --call-graph dwarf on the same target, which
# names nothing while it records: its lost records are the floor. The load
# that used to stall the first batch is timed in the same run:
# BenchmarkDWARFLibc (libc's debug info from libc6-dbg).
#
# usage: bench/firstbatch.sh [RUNS]      env: CCTOP (binary), OUT
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
runs=${1:-5}
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
if [ -z "${CCTOP:-}" ]; then
	CCTOP="$out/cctop"
	(cd "$here/.." && go build -o "$CCTOP" .)
fi
(cd "$here/.." && go build -o "$out/profstat" ./bench/profstat)
command -v perf >/dev/null || { echo "perf is not installed" >&2; exit 2; }
gcc -O1 -g -o "$out/leaves" "$here/../testdata/leaves.c"
py=${PYTHON:-/usr/bin/python3.11}

echo "== libc's debug info, loaded alone (go test ./symbol -bench DWARFLibc)"
(cd "$here/.." && go test ./symbol -run '^$' -bench 'DWARFLibc$' -benchtime 3x -count 1 2>&1 | grep -E '^Benchmark' || true)

for target in leaves python; do
	case $target in
	leaves) cmd=("$out/leaves") ;;
	python) cmd=("$py" "$here/cpu_bound.py" 100000) ;;
	esac
	echo "== $target"
	for i in $(seq "$runs"); do
		"$CCTOP" record -F 999 --unwind dwarf -d 2 -o "$out/$target.$i.pb.gz" -- "${cmd[@]}" >/dev/null 2>"$out/$target.$i.err" || true
		stat=$("$out/profstat" "$out/$target.$i.pb.gz" | sed 's/ max_[^ ]*//g')
		case $stat in *lost_records=*) ;; *) stat="$stat; lost_records=0" ;; esac
		printf "cctop run %d: %s\n" "$i" "$stat"
	done
	perf record -q -F 999 --call-graph dwarf,8192 -o "$out/$target.perf.data" -- timeout 2 "${cmd[@]}" >/dev/null 2>"$out/$target.perf.err" || true
	printf "perf record: %s\n" "$(perf report -i "$out/$target.perf.data" --stats 2>/dev/null | grep -E 'LOST|SAMPLE events' | head -2 | tr -s ' ' | tr '\n' ';' || true)"
done
