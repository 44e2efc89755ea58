#!/usr/bin/env bash
# bench/gxx.sh [RUNS]: g++ compiling a generated C++ file of a few thousand
# lines (templates, std containers, lambdas), alone and under each tool,
# RUNS times each (default 3), interleaved so that a noisy machine hurts all
# of them alike:
#
#   alone         g++ -O2 -c gen.cc
#   cctop-none    cctop record --calls none -- g++ ...
#   cctop         cctop record -- g++ ...   (default flags: on a machine
#                 without a PMU, automatic uprobe counters within budget)
#   perf          perf record -g -F 999 -- g++ ...   (the reference line)
#
# It prints each run's wall time, the median per tool, and the ratios
# cctop/cctop-none (the cost of automatic counting; issue 13's goal is at
# most 1.15) and each tool against g++ alone. Environment: FUNCS (functions
# in the generated file, default 400), CCTOP_BIN (a cctop binary to
# measure; default: built from this tree), GEN_ONLY=FILE (write the
# generated file there and stop: bench/counting.sh compiles it).
set -euo pipefail

RUNS=${1:-3}
FUNCS=${FUNCS:-400}
die() { echo "gxx.sh: $*" >&2; exit 1; }
command -v g++ >/dev/null || die "g++ not found (apt-get install g++)"
command -v perf >/dev/null || die "perf not found (apt-get install linux-perf)"
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
CCTOP_BIN=${CCTOP_BIN:-}
if [ -z "$CCTOP_BIN" ]; then
	(cd "$root" && go build -o "$work/cctop" .) || die "go build failed"
	CCTOP_BIN=$work/cctop
fi

python3 - "$work/gen.cc" "$FUNCS" <<'PY'
import sys
out, n = sys.argv[1], int(sys.argv[2])
lines = ['#include <vector>', '#include <map>', '#include <string>', '#include <algorithm>',
         '#include <sstream>', '#include <unordered_map>', '']
for i in range(120):
    lines.append(f'template <typename T> struct Box{i} {{ T v; std::vector<T> xs; Box{i}(T a): v(a) {{ for (int k = 0; k < {i % 7 + 1}; k++) xs.push_back(a); }}')
    lines.append('  T sum() const { T s{}; for (auto& x : xs) s = s + x; return s; }')
    lines.append('  template <typename U> auto map(U f) const { std::vector<decltype(f(v))> r; for (auto& x : xs) r.push_back(f(x)); return r; }')
    lines.append('};')
for i in range(n):
    lines.append(f'std::string fn{i}(const std::map<std::string, int>& m, int n) {{')
    lines.append(f'  Box{i % 120}<long> b(n); auto r = b.map([&](long x) {{ return x * {i} + (long)m.size(); }});')
    lines.append('  std::ostringstream os; for (auto v : r) os << v << ","; std::sort(r.begin(), r.end());')
    lines.append('  std::unordered_map<int, std::string> u; u[n] = os.str(); return u[n] + std::to_string(b.sum());')
    lines.append('}')
open(out, 'w').write('\n'.join(lines) + '\n')
PY
if [ -n "${GEN_ONLY:-}" ]; then # bench/counting.sh wants the file alone
	cp "$work/gen.cc" "$GEN_ONLY"
	exit 0
fi
echo "gen.cc: $(wc -l <"$work/gen.cc") lines; $(nproc) CPUs; $(uname -r)"

gxx=(g++ -O2 -c "$work/gen.cc" -o "$work/gen.o")
declare -A times
run() { # tool
	local t0 t1 log="$work/$1.log"
	t0=$(date +%s.%N)
	case $1 in
	alone) "${gxx[@]}" ;;
	cctop-none) "$CCTOP_BIN" record --calls none -o "$work/none.pb.gz" -- "${gxx[@]}" 2>"$log" ;;
	cctop) "$CCTOP_BIN" record -o "$work/auto.pb.gz" -- "${gxx[@]}" 2>"$log" ;;
	perf) perf record -q -g -F 999 -o "$work/perf.data" -- "${gxx[@]}" 2>"$log" ;;
	esac
	t1=$(date +%s.%N)
	local d
	d=$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')
	times[$1]="${times[$1]:-} $d"
	printf '%-11s run %d: %6.2f s\n' "$1" "$2" "$d"
}
for i in $(seq 1 "$RUNS"); do
	for tool in alone cctop-none cctop perf; do
		run "$tool" "$i"
	done
	grep -h "counting\|not counting\|call counter" "$work/cctop.log" | sed 's/^/    /' || true
done
median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
declare -A med
for tool in alone cctop-none cctop perf; do
	med[$tool]=$(echo "${times[$tool]}" | median)
done
echo
printf '%-11s %8s %10s\n' tool median "vs alone"
for tool in alone cctop-none cctop perf; do
	printf '%-11s %7.2fs %9.2fx\n' "$tool" "${med[$tool]}" "$(awk -v a="${med[$tool]}" -v b="${med[alone]}" 'BEGIN {print a / b}')"
done
printf 'cctop / cctop-none: %.2fx (goal: at most 1.15)\n' "$(awk -v a="${med[cctop]}" -v b="${med[cctop-none]}" 'BEGIN {print a / b}')"
