#!/usr/bin/env bash
# Agreement with Linux perf: the same CPU-bound Python workload runs once
# under `perf record --all-user -F 999` and once under
# `cctop record --user -F 999`; their flat self-time distributions by
# function are compared with the overlap of design §4:
#   overlap = 100 * sum over functions of min(share_perf, share_cctop)
# Unnamed code ([unknown] in perf, [module] in cctop) counts as one key.
#
# usage: bench/perf_agree.sh [ROUNDS]     env: CCTOP (binary), PYTHON, OUT
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
rounds=${1:-1000}
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
if [ -z "${CCTOP:-}" ]; then
	CCTOP="$out/cctop"
	(cd "$here/.." && go build -o "$CCTOP" .)
fi
py=${PYTHON:-python3}
# Resolve shims (pyenv) to the real interpreter, so neither tool samples a
# wrapper script.
py=$("$py" -c 'import os, sys; print(os.path.realpath(sys.executable))')
command -v perf >/dev/null || { echo "perf is not installed" >&2; exit 2; }

perf record -q --all-user -F 999 -o "$out/perf.data" -- "$py" "$here/cpu_bound.py" "$rounds" >/dev/null 2>"$out/perf.err"
perf script -i "$out/perf.data" -F ip,sym 2>/dev/null |
	awk '{ s = $2; if (s == "" || s ~ /^\[/) s = "[unknown]"; n[s]++ } END { for (k in n) print n[k], k }' |
	sort -rn >"$out/perf.flat"

"$CCTOP" record --user -F 999 --format folded -o "$out/cctop.folded" -- "$py" "$here/cpu_bound.py" "$rounds" >/dev/null 2>"$out/cctop.err"
awk '{ c = $NF; $NF = ""; sub(/ $/, ""); m = split($0, f, ";"); s = f[m]; if (s ~ /^\[/) s = "[unknown]"; n[s] += c }
	END { for (k in n) print n[k], k }' "$out/cctop.folded" | sort -rn >"$out/cctop.flat"

awk '
	FNR == 1 { file++ }
	{ n = $1; $1 = ""; k = substr($0, 2); v[file, k] = n; tot[file] += n; keys[k] = 1 }
	END {
		for (k in keys) { a = v[1, k] / tot[1]; b = v[2, k] / tot[2]; o += (a < b ? a : b) }
		printf "perf samples: %d\ncctop samples: %d\noverlap: %.2f%%\n", tot[1], tot[2], 100 * o
	}' "$out/perf.flat" "$out/cctop.flat"
echo "top functions (perf | cctop), files in $out:"
paste <(head -8 "$out/perf.flat") <(head -8 "$out/cctop.flat") | sed 's/^/  /'
