#!/usr/bin/env bash
# Per-module unwinding (issue 13), with default flags, for one or more
# cctop binaries run one after the other (e.g. main's and a branch's):
#   1. testdata/unwmain.c calling testdata/unwlib.c built four ways
#      (program with/without frame pointers; library without frame
#      pointers, with them, with them but no CFI, with neither): the share
#      of samples that reach main through lib_entry, and through all three
#      library frames.
#   2. completeness ("stacks: N%" of the summary) of Debian's python3 on
#      bench/cpu_bound.py and of two C++ programs (testdata/templates.cc
#      with frame pointers, testdata/inline.cc without), RUNS times.
#
# usage: bench/unwindmod.sh CCTOP... [-- RECORD FLAGS]   env: RUNS (3), OUT
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
runs=${RUNS:-3}
bins=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do bins+=("$(realpath "$1")"); shift; done
[ "${1:-}" = "--" ] && shift
[ ${#bins[@]} -gt 0 ] || { echo "usage: $0 CCTOP... [-- RECORD FLAGS]" >&2; exit 2; }
cd "$out"
t=$here/testdata
gcc -O2 -shared -fPIC -fomit-frame-pointer -Wl,-soname,libunw_nofp.so -o libunw_nofp.so "$t/unwlib.c"
gcc -O2 -shared -fPIC -fno-omit-frame-pointer -Wl,-soname,libunw_fp.so -o libunw_fp.so "$t/unwlib.c"
for v in nocfi_fp:-fno-omit-frame-pointer nocfi:-fomit-frame-pointer; do
	n=${v%%:*}
	gcc -O2 -fPIC "${v#*:}" -fno-asynchronous-unwind-tables -fno-unwind-tables -c -o $n.o "$t/unwlib.c"
	gcc -shared -Wl,--no-ld-generated-unwind-info -Wl,-soname,libunw_$n.so -o libunw_$n.so $n.o
done
progs="fp:nofp nofp:fp fp:nocfi_fp fp:nocfi"
for pl in $progs; do
	f=-fno-omit-frame-pointer
	[ "${pl%%:*}" = nofp ] && f=-fomit-frame-pointer
	gcc -O2 $f -o prog_${pl/:/_} "$t/unwmain.c" -L. -lunw_${pl#*:} -Wl,-rpath,"$out"
done
g++ -O2 -g -fno-omit-frame-pointer -o templates "$t/templates.cc"
g++ -O2 -g -o inline "$t/inline.cc"

echo "| program | cctop | reach main through lib_entry | ... with lib_mid and lib_inner | samples |"
for pl in $progs; do
	p=prog_${pl/:/_}
	for b in "${bins[@]}"; do
		"$b" record "$@" --format folded -o $p.folded -- ./$p 2 >/dev/null 2>&1
		awk -v P=$p -v B="$b" '{n=$NF; tot+=n
			if ($0 !~ /^\[truncated\]/ && $0 ~ /main;run;lib_entry;/) w+=n
			if ($0 !~ /^\[truncated\]/ && $0 ~ /main;run;lib_entry;lib_mid;lib_inner/) a+=n}
			END {printf "| %s | %s | %.1f%% | %.1f%% | %d |\n", P, B, 100*w/tot, 100*a/tot, tot}' $p.folded
	done
done
for i in $(seq 1 "$runs"); do
	for b in "${bins[@]}"; do
		py=$("$b" record "$@" -d 5 -o m.pb.gz -- /usr/bin/python3 "$here/bench/cpu_bound.py" 100000 2>&1 | grep -oE "stacks: [0-9.]+%")
		tp=$("$b" record "$@" -o m.pb.gz -- ./templates 3 2>&1 | grep -oE "stacks: [0-9.]+%")
		il=$("$b" record "$@" -d 3 -o m.pb.gz -- ./inline 60 2>&1 | grep -oE "stacks: [0-9.]+%")
		echo "$b run $i: python3 $py | templates $tp | inline $il"
	done
done
