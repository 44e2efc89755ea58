#!/usr/bin/env bash
# Agreement with Linux perf on a real program no one here wrote: the Python
# interpreter running bench/cpu_bound.py. The workload runs twice under
# `perf record --all-user -F 999` and once under `cctop record --user -F 999`
# (with --calls none: this compares sampling and symbols, and a call counter
# would add its own cost to the run; with --python off: perf names the
# interpreter's C functions, cctop would name the Python functions they run).
# Flat self-time distributions by function are compared with the overlap of
# design §4:  overlap = 100 * sum over functions of min(share_a, share_b).
# perf against perf is the reference measured in the same run: it is the
# ceiling that sampling noise leaves at this many samples.
# Unnamed code ([unknown] in perf, [module+0xOFFSET] in cctop) counts as one key.
# perf script names physical frames only: cctop's inlined frames (marked
# _[i] in folded output) give way to the function that holds them.
#
# usage: bench/perf_agree.sh [ROUNDS]      env: CCTOP (binary), PYTHON, OUT
# prints: "overlap perf/perf: X%" and "overlap cctop/perf: Y%" (mean of both perf runs)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
rounds=${1:-10000}
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
if [ -z "${CCTOP:-}" ]; then
	CCTOP="$out/cctop"
	(cd "$here/.." && go build -o "$CCTOP" .)
fi
command -v perf >/dev/null || { echo "perf is not installed" >&2; exit 2; }
# A fixed hash seed: with random seeds, dict layouts (and so the time spent
# in dict internals) differ from run to run by more than the tools do.
export PYTHONHASHSEED=0
py=${PYTHON:-python3}
# Resolve shims (pyenv) to the real interpreter, so neither tool samples a
# wrapper script.
py=$("$py" -c 'import os, sys; print(os.path.realpath(sys.executable))')

perf_flat() { # $1: name
	perf record -q --all-user -F 999 -o "$out/$1.data" -- "$py" "$here/cpu_bound.py" "$rounds" >/dev/null 2>"$out/$1.err"
	perf script -i "$out/$1.data" -F ip,sym 2>/dev/null |
		awk '{ s = $2; if (s == "" || s ~ /^\[/) s = "[unknown]"; n[s]++ } END { for (k in n) print n[k], k }' |
		sort -rn >"$out/$1.flat"
}

overlap() { # $1 $2: flat files; prints the overlap in percent
	awk '
		FNR == 1 { file++ }
		{ n = $1; $1 = ""; k = substr($0, 2); v[file, k] = n; tot[file] += n; keys[k] = 1 }
		END {
			for (k in keys) { a = v[1, k] / tot[1]; b = v[2, k] / tot[2]; o += (a < b ? a : b) }
			printf "%.2f\n", 100 * o
		}' "$1" "$2"
}

perf_flat perf1
"$CCTOP" record --user -F 999 --calls none --python off --format folded -o "$out/cctop.folded" -- "$py" "$here/cpu_bound.py" "$rounds" >/dev/null 2>"$out/cctop.err"
awk '{ c = $NF; $NF = ""; sub(/ $/, ""); m = split($0, f, ";"); while (m > 1 && f[m] ~ /_\[i\]$/) m--; s = f[m]; if (s ~ /^\[/) s = "[unknown]"; n[s] += c }
	END { for (k in n) print n[k], k }' "$out/cctop.folded" | sort -rn >"$out/cctop.flat"
perf_flat perf2

count() { awk '{ n += $1 } END { print n + 0 }' "$1"; }
ref=$(overlap "$out/perf1.flat" "$out/perf2.flat")
a=$(overlap "$out/perf1.flat" "$out/cctop.flat")
b=$(overlap "$out/perf2.flat" "$out/cctop.flat")
echo "python: $py, $rounds rounds"
echo "samples perf1/perf2/cctop: $(count "$out/perf1.flat") $(count "$out/perf2.flat") $(count "$out/cctop.flat")"
echo "overlap perf/perf: $ref%"
echo "overlap cctop/perf: $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", (a + b) / 2 }')% ($a% and $b%)"
echo "top functions (perf1 | cctop), files in $out:"
paste <(head -6 "$out/perf1.flat") <(head -6 "$out/cctop.flat") | sed 's/^/  /'
