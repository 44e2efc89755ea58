#!/usr/bin/env bash
# bench/targettime.sh [RUNS]: what profiling costs the target. A C program
# built with frame pointers does a fixed amount of work on two threads
# (stacks 12 calls deep, a call every few hundred nanoseconds) and its wall
# time is measured, RUNS times (default 5) interleaved:
#   none     the program alone
#   perf     under `perf record -F 999 -g` (the kernel's frame-pointer chains)
#   cctop    under `cctop record -F 999 --calls none` (default unwinding: the
#            learning plan, which starts each thread on 8 KiB stack copies and
#            moves it to the chain and 512 bytes once its stacks need no CFI)
#   cctop-auto  under `cctop record -F 999` (default counting too: uprobes on
#            the hottest functions where there is no PMU, paid by the target)
#   cctop-fp, cctop-dwarf  --calls none with --unwind fp (the chain and 512
#            bytes throughout) or dwarf (8 KiB throughout): the plan's bounds
# It prints each run's seconds and the medians, and each profiler's cost as
# points over the program alone: 100 * (median / median alone - 1). The
# acceptance (issue 34): cctop's points within 2 of perf's.
#
# The time is the target's own, from its threads' start to their end, as it
# prints it: the profilers' start and exit are not in it.
#
# Environment: WORK (iterations per thread, default 60000000), PHASES.
set -euo pipefail

RUNS=${1:-5}
WORK=${WORK:-60000000}
PHASES=${PHASES:-none perf cctop cctop-auto}

die() { echo "targettime.sh: $*" >&2; exit 1; }
need() { command -v "$1" >/dev/null 2>&1 || die "$1 not found: $2"; }
need go "install Go to build cctop"
need gcc "apt-get install gcc"
need perf "apt-get install linux-perf (the reference)"
[[ $RUNS =~ ^[0-9]+$ && $RUNS -gt 0 ]] || die "usage: bash bench/targettime.sh [RUNS]"

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tmp=$(mktemp -d /tmp/cctop-targettime.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

if [[ -n ${CCTOP:-} ]]; then
	cp "$CCTOP" "$tmp/cctop"
else
	(cd "$root" && go build -o "$tmp/cctop" .) || die "go build failed"
fi

cat >"$tmp/work.c" <<'EOF'
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static long work = 60000000;
static volatile uint64_t sink;
#define LEVEL(n, next) __attribute__((noinline)) uint64_t n(uint64_t x) { return next(x * 31 + 7) ^ x; }
__attribute__((noinline)) uint64_t leaf(uint64_t x) {
	for (int i = 0; i < 40; i++) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}
LEVEL(l10, leaf) LEVEL(l9, l10) LEVEL(l8, l9) LEVEL(l7, l8) LEVEL(l6, l7) LEVEL(l5, l6)
LEVEL(l4, l5) LEVEL(l3, l4) LEVEL(l2, l3) LEVEL(l1, l2)
static void *run(void *arg) {
	uint64_t x = (uintptr_t)arg;
	for (long i = 0; i < work; i++) x = l1(x);
	sink = x;
	return 0;
}
static double now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}
int main(int argc, char **argv) {
	if (argc > 1) work = atol(argv[1]);
	double t0 = now();
	pthread_t t[2];
	for (uintptr_t i = 0; i < 2; i++) pthread_create(&t[i], 0, run, (void *)i);
	for (int i = 0; i < 2; i++) pthread_join(t[i], 0);
	printf("elapsed %.4f\n", now() - t0);
	return 0;
}
EOF
gcc -O2 -fno-omit-frame-pointer -pthread -o "$tmp/work" "$tmp/work.c" || die "gcc failed"

# timed CMD...: the seconds the target says its work took (from its first
# thread's start to the last one's end: the profilers' own start and exit
# are not in it).
timed() {
	"$@" >"$tmp/out" 2>"$tmp/err" || die "$* failed: $(tail -3 "$tmp/err")"
	awk '/^elapsed /{printf "%.3f", $2}' "$tmp/out"
}

declare -A T
for ((r = 1; r <= RUNS; r++)); do
	for ph in $PHASES; do
		case $ph in
		none) s=$(timed "$tmp/work" "$WORK") ;;
		perf) s=$(timed perf record -q -F 999 -g -o "$tmp/perf.data" -- "$tmp/work" "$WORK") ;;
		cctop) s=$(timed "$tmp/cctop" record -F 999 --calls none -o "$tmp/c.pb.gz" -- "$tmp/work" "$WORK") ;;
		cctop-auto) s=$(timed "$tmp/cctop" record -F 999 -o "$tmp/c.pb.gz" -- "$tmp/work" "$WORK") ;;
		cctop-fp) s=$(timed "$tmp/cctop" record -F 999 --calls none --unwind fp -o "$tmp/c.pb.gz" -- "$tmp/work" "$WORK") ;;
		cctop-dwarf) s=$(timed "$tmp/cctop" record -F 999 --calls none --unwind dwarf -o "$tmp/c.pb.gz" -- "$tmp/work" "$WORK") ;;
		*) die "unknown phase $ph" ;;
		esac
		T[$ph]="${T[$ph]:-} $s"
		echo "run $r $ph ${s}s" >&2
	done
done
median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
base=$(echo "${T[none]:-}" | median)
echo "target: 2 threads x $WORK calls 12 deep (gcc -O2 -fno-omit-frame-pointer); $RUNS interleaved runs; $(nproc) CPUs"
printf '%-11s %9s %9s  %s\n' phase median points runs
for ph in $PHASES; do
	m=$(echo "${T[$ph]}" | median)
	pts=-
	[[ -n $base && $ph != none ]] && pts=$(awk -v m="$m" -v b="$base" 'BEGIN{printf "%+.1f", 100 * (m / b - 1)}')
	printf '%-11s %9s %9s %s\n' "$ph" "${m}s" "$pts" "${T[$ph]}"
done
echo "points: 100 * (median / median of the program alone - 1)."
