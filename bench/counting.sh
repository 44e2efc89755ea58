#!/usr/bin/env bash
# bench/counting.sh [RUNS]: what automatic call counting costs the target
# under default flags, against the same recording with --calls none, on
# three targets a new user would profile (issue 29):
#
#   python   Debian's stripped /usr/bin/python3 running testdata/jsondumps.py
#            (json.dumps of 20,000 dicts, ROUNDS times; default 200)
#   gxx      g++ -O2 -c on bench/gxx.sh's generated C++ file
#   demo     the demo's workload (cctop workload density -size 12000
#            -calls 400), DEMO_ROUNDS rounds (default 150)
#
# Each target runs RUNS times (default 3) under both, interleaved (none,
# default, none, ...), so that a noisy machine hurts both alike. It prints
# each run's wall time of the whole `cctop record` command and, for the
# default runs, the summary's measured counting cost (share of the
# target's CPU time over the run, and in its worst 2 s window); then per
# target the medians of the command's and of the target's own wall time
# (/usr/bin/time around it), their ratios (goal: at most 1.07), the
# target's slowdown in percent and the summary's cost beside it (goal:
# within 2 points of each other). The command's time holds cctop's own
# start and end too (symbols, the control-flow pass), which differ between
# the two modes whatever counting costs. CCTOP_BIN: a cctop binary to measure (default:
# built from this tree).
set -euo pipefail

RUNS=${1:-3}
ROUNDS=${ROUNDS:-200}
DEMO_ROUNDS=${DEMO_ROUNDS:-150}
die() { echo "counting.sh: $*" >&2; exit 1; }
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
CCTOP_BIN=${CCTOP_BIN:-}
if [ -z "$CCTOP_BIN" ]; then
	(cd "$root" && go build -o "$work/cctop" .) || die "go build failed"
	CCTOP_BIN=$work/cctop
fi
[ -x /usr/bin/python3 ] || die "no /usr/bin/python3 (apt-get install python3)"
[ -x /usr/bin/time ] || die "no /usr/bin/time (apt-get install time)"
command -v g++ >/dev/null || die "g++ not found (apt-get install g++)"
CCTOP_BIN=$CCTOP_BIN GEN_ONLY=$work/gen.cc bash "$root/bench/gxx.sh" >/dev/null || die "generating the C++ file failed"
echo "$(nproc) CPUs; $(uname -r); $("$CCTOP_BIN" doctor 2>/dev/null | grep -m1 -i 'call counter' || true)"

targets=(python gxx demo)
cmd() { # target
	case $1 in
	python) echo /usr/bin/python3 "$root/testdata/jsondumps.py" "$ROUNDS" ;;
	gxx) echo g++ -O2 -c "$work/gen.cc" -o "$work/gen.o" ;;
	demo) echo "$CCTOP_BIN" workload density -size 12000 -calls 400 -rounds "$DEMO_ROUNDS" ;;
	esac
}
declare -A times ttimes costs
run() { # target mode run
	local log="$work/$1-$2.log" t0 t1 d flags=()
	[ "$2" = none ] && flags=(--calls none)
	# shellcheck disable=SC2046
	t0=$(date +%s.%N)
	"$CCTOP_BIN" record "${flags[@]}" -o "$work/$1-$2.pb.gz" -- /usr/bin/time -f %e -o "$work/target" $(cmd "$1") >/dev/null 2>"$log" || die "$1 $2: $(tail -3 "$log")"
	t1=$(date +%s.%N)
	d=$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')
	times[$1-$2]="${times[$1-$2]:-} $d"
	local tt
	tt=$(tail -1 "$work/target")
	ttimes[$1-$2]="${ttimes[$1-$2]:-} $tt"
	local cost="" line
	if line=$(grep -m1 '^cctop: counting cost' "$log"); then
		cost=$(sed -E 's/^cctop: counting cost ([0-9.]+)% .*, ([0-9.]+)% in its worst.*/\1 \2/' <<<"$line")
	fi
	if [ "$2" = default ]; then
		costs[$1]="${costs[$1]:-} ${cost%% *}"
		[ -n "$cost" ] || costs[$1]="${costs[$1]} 0" # nothing counted, nothing spent
	fi
	printf '%-7s %-8s run %d: %6.2f s (the target %5.2f s)%s\n' "$1" "$2" "$3" "$d" "$tt" "${cost:+  counting cost ${cost% *}% (worst 2 s: ${cost#* }%)}"
	[ "$2" = default ] && grep -h 'not counted any more\|trials count' "$log" | sed 's/^/        /' || true
}
for t in "${targets[@]}"; do
	for i in $(seq 1 "$RUNS"); do
		run "$t" none "$i"
		run "$t" default "$i"
	done
done
median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
echo
echo "medians: the record command's wall time, and the target's own (under /usr/bin/time); the slowdown and"
echo "the summary's counting cost are both the target's"
printf '%-7s %8s %8s %7s %8s %8s %7s %9s %13s %5s\n' target none default ratio "t none" "t dflt" ratio slowdown "summary cost" diff
for t in "${targets[@]}"; do
	n=$(echo "${times[$t-none]}" | median)
	d=$(echo "${times[$t-default]}" | median)
	tn=$(echo "${ttimes[$t-none]}" | median)
	td=$(echo "${ttimes[$t-default]}" | median)
	c=$(echo "${costs[$t]}" | median)
	awk -v t="$t" -v n="$n" -v d="$d" -v tn="$tn" -v td="$td" -v c="$c" 'BEGIN {
		s = 100 * (td - tn) / tn
		diff = s - c; if (diff < 0) diff = -diff
		printf "%-7s %7.2fs %7.2fs %6.3fx %7.2fs %7.2fs %6.3fx %8.1f%% %12.1f%% %5.1f\n", t, n, d, d / n, tn, td, td / tn, s, c, diff
	}'
done
echo "goals: ratios at most 1.07; the summary's cost within 2 points of the target's slowdown"
