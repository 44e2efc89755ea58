#!/usr/bin/env bash
# bench/manycore.sh [SIZES]: what counting probes cost in events and time
# against CPUs and threads, with tracefs probes (cctop's way where tracefs
# is writable) and with per-thread uprobe PMU events (the fallback, and what
# cctop did before). SIZES is "cpus:threads ..." (default "2:16 16:16 64:16
# 64:64"); CPU counts above this machine's are the fake CPU list of the
# sampler's kernel boundary, each event opened for real on CPU c mod the
# real count. Each run samples testdata/spinners.c with that many threads,
# arms four probes as automatic counting does (re-opening the events on
# every live thread), then releases them.
#
# Columns: events opened to arm; slow closes (each waits 70-110 ms for the
# kernel to unregister a uprobe, one after the other); time to arm; time to
# release (every close and the probes' removal: what `record` would wait
# for after its target exits, were it not handed to a child process).
# Needs root (uprobes), gcc, and tracefs mounted at /sys/kernel/tracing.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES=${1:-"2:16 16:16 64:16 64:64"}
echo "$(nproc) real CPUs; $(uname -r)"
MANYCORE="$SIZES" go test -v -run XXX -bench BenchmarkManyCore -benchtime 1x -timeout 60m ./sampler/ 2>&1 |
	awk '
	/^BenchmarkManyCore\/.*ns\/op/ {
		split($1, p, "/"); sub(/-[0-9]+$/, "", p[5])
		delete m
		for (i = 3; i < NF; i += 2) m[$(i+1)] = $i
		printf "%-8s %-7s %-9s %-11s %7d events %5d slow closes  arm %6d ms  release %6d ms\n", p[2], p[3], p[4], p[5], m["events"], m["slow-closes"], m["arm-ms"], m["release-ms"]
		next
	}
	/manycore_bench_test.go:[0-9]+: / { msg = $0; sub(/^ +manycore_bench_test.go:[0-9]+: /, "", msg); next }
	/--- SKIP: BenchmarkManyCore\// { name = $3; sub(/^BenchmarkManyCore\//, "", name); print "skipped " name ": " msg; next }
	/^(FAIL|ok|PASS)/ { print }'

# A real run on this machine's CPUs: a 16-thread CPU-bound target under
# default `cctop record` (automatic counting included), and how long record
# takes to return after its target exits (issue 13: at most 2 s).
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/cctop" .
gcc -O1 -pthread -o "$work/spinners" testdata/spinners.c
for i in 1 2 3; do
	"$work/cctop" record -o "$work/r.pb.gz" -- sh -c "'$work/spinners' 16 4; date +%s.%N > '$work/exited'" 2>"$work/log"
	end=$(date +%s.%N)
	printf 'record, 16 threads, run %d: returned %.2f s after the target exited; %s\n' "$i" \
		"$(awk -v a="$(cat "$work/exited")" -v b="$end" 'BEGIN {print b - a}')" \
		"$(grep -o 'armed on [^;]*\|not counting[^:]*' "$work/log" | head -1)"
done
