#!/usr/bin/env bash
# bench/ingest.sh: how fast cctop turns samples into its tree, against how
# fast perf report turns the same program's perf.data into its report, on
# stacks 20 calls deep (bench/deep20.c: C, frame pointers, two threads).
#
# Two cases, each for both tools:
#   fp     frame-pointer chains (cctop: the chain and its 512-byte leaf copy,
#          --unwind fp; perf: record -g, report symbolizes the chains)
#   dwarf  8 KiB user stack copies unwound with CFI (cctop: --unwind dwarf;
#          perf: record --call-graph dwarf,8192, report unwinds them)
#
# perf report's rate is per sample, start-up taken out: it reads a short and
# a long recording (SHORT and LONG seconds, default 2 and 12) and divides the
# difference in samples by the difference in CPU time (user+system, from
# bench/rusage). Its report is the default --stdio one: children and
# callchains, as a tree is. cctop's is BenchmarkIngestDeep (engine): batches
# it recorded itself from the same binary, replayed into a new tree with
# warm symbol caches, on one core.
#
# usage: bash bench/ingest.sh   (root, or perf_event_paranoid <= 1)
set -euo pipefail

SHORT=${SHORT:-2}
LONG=${LONG:-12}
die() { echo "ingest.sh: $*" >&2; exit 1; }
for t in go gcc perf awk; do command -v $t >/dev/null || die "$t not found"; done

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tmp=$(mktemp -d /tmp/cctop-ingest.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
gcc -O1 -g -fno-omit-frame-pointer -pthread -o "$tmp/deep20" "$root/bench/deep20.c"
(cd "$root" && go build -o "$tmp/rusage" ./bench/rusage)

# perf_case NAME CALLGRAPH...: prints "samples cpu_seconds" for each length.
declare -A PERF_RATE PERF_N
perf_case() {
	local name=$1
	shift
	local n=() c=()
	for secs in $SHORT $LONG; do
		local data=$tmp/$name-$secs.data
		perf record -q -F 999 "$@" -o "$data" -- "$tmp/deep20" "$secs" >/dev/null 2>&1 || die "perf record failed"
		local samples
		samples=$(perf report -i "$data" --stdio -D 2>/dev/null | grep -c 'PERF_RECORD_SAMPLE' || true)
		"$tmp/rusage" "$tmp/ru" perf report -i "$data" --stdio >/dev/null 2>&1 || die "perf report failed"
		n+=("$samples")
		c+=("$(awk '{print $1}' "$tmp/ru")")
	done
	PERF_N[$name]="${n[0]}/${n[1]}"
	PERF_RATE[$name]=$(awk -v n0="${n[0]}" -v n1="${n[1]}" -v c0="${c[0]}" -v c1="${c[1]}" \
		'BEGIN{ if (c1 > c0) printf "%.0f", (n1 - n0) / (c1 - c0); else print "?" }')
	echo "perf $name: samples ${n[*]}, report CPU ${c[*]} s" >&2
}
perf_case fp -g
perf_case dwarf --call-graph dwarf,8192

echo "cctop: go test ./engine -bench IngestDeep..." >&2
out=$(cd "$root" && CCTOP_DEEP20=$tmp/deep20 go test ./engine -run '^$' -bench 'IngestDeep' -benchtime 20x -count 1 2>&1) || { echo "$out" >&2; die "benchmark failed"; }
echo "$out" | grep Benchmark >&2
metric() { echo "$out" | awk -v c="BenchmarkIngestDeep/$1-" -v m="$2" 'index($1, c) == 1 { for (i = 2; i < NF; i++) if ($(i+1) == m) print $i }'; }

echo
printf '%-6s %14s %14s %10s %14s %12s %14s %10s\n' case cctop/s "perf report/s" ratio allocs/sample B/sample frames/sample unwound%
for c in fp dwarf; do
	cs=$(metric $c samples/s)
	printf '%-6s %14.0f %14s %10s %14s %12s %14s %10s\n' $c "$cs" "${PERF_RATE[$c]}" \
		"$(awk -v a="$cs" -v b="${PERF_RATE[$c]}" 'BEGIN{ if (b > 0) printf "%.1fx", a / b; else print "-" }')" \
		"$(metric $c allocs/sample)" "$(metric $c B/sample)" "$(metric $c frames/sample)" "$(metric $c unwound%)"
done
echo "cctop/s: samples a second into the tree (BenchmarkIngestDeep, warm caches, one core);"
echo "perf report/s: (samples of the ${LONG} s recording - the ${SHORT} s one) / (their difference in report CPU time)."
