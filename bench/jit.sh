#!/usr/bin/env bash
# JIT runtimes (issue 30), default flags, cctop against perf on the same
# programs in the same run, RUNS times each:
#   node --perf-basic-prof, a hot recursive JS function: stacks that reach
#     _start / node::Start, and the function's self share;
#   Java 17 -XX:+PreserveFramePointer -XX:+UnlockDiagnosticVMOptions
#     -XX:+DumpPerfMapAtExit: the hot method's self share;
#   pyenv's CPython 3.12 and 3.13, launched without flags (cctop turns the
#     trampolines on; perf is given -X perf and --call-graph dwarf, since
#     pyenv's builds keep no frame pointers): complete stacks, and the two
#     hot functions' shares against the script's own clock.
# usage: bench/jit.sh [CCTOP]   env: RUNS (3), OUT
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
runs=${RUNS:-3}
cctop=${1:-}
if [ -z "$cctop" ]; then
	(cd "$here" && go build -o "$out/cctop" .)
	cctop=$out/cctop
fi
(cd "$here" && go build -o "$out/stackshare" ./bench/stackshare)
ss=$out/stackshare
cd "$out"
cat > hot.js <<'JS'
function hotLoopFib(n) { return n < 2 ? n : hotLoopFib(n - 1) + hotLoopFib(n - 2); }
const end = Date.now() + 4000;
let sum = 0;
while (Date.now() < end) sum += hotLoopFib(22);
console.log("pid " + process.pid);
JS
cat > Hot.java <<'JAVA'
public class Hot {
    static long quasarKernel(long n) {
        long s = 0;
        for (long i = 0; i < n; i++) { s += (i * 2654435761L) ^ (s >>> 7); }
        return s;
    }
    public static void main(String[] a) {
        long t = 0;
        for (int k = 0; k < 3000; k++) t += quasarKernel(1000000);
        System.out.println("pid " + ProcessHandle.current().pid());
    }
}
JAVA
have() { command -v "$1" >/dev/null; }
# rmmap removes the perf map of the process that said "pid N" in file $1
# (only ours: other programs' maps may be in use).
rmmap() { local p; p=$(sed -n 's/.*pid \([0-9]*\).*/\1/p' "$1" | tail -1); [ -z "$p" ] || rm -f "/tmp/perf-$p.map"; }
perfscript() { perf script -F ip,sym -i "$1" 2>/dev/null; }
echo "| target | run | tool | samples | reach the entry | hot self | hot total | note |"
echo "|---|---|---|---|---|---|---|---|"
for r in $(seq "$runs"); do
	if have node; then
		"$cctop" record -d 60s -o node.pb.gz -- node --perf-basic-prof hot.js >node.out 2>node.err; rmmap node.out
		read -r _ n _ root _ self _ tot < <("$ss" -root '^(_start|__libc_start_call_main|__libc_start_main.*|node::Start.*)$' -self hotLoopFib -in hotLoopFib node.pb.gz)
		echo "| node --perf-basic-prof | $r | cctop | $n | $root | $self | $tot | |"
		perf record -q -g -F 999 -o node.data -- node --perf-basic-prof hot.js >node.out 2>/dev/null
		read -r _ n _ root _ self _ tot < <(perfscript node.data | "$ss" -perf -root '^(_start|__libc_start_call_main|__libc_start_main.*|node::Start.*)$' -self hotLoopFib -in hotLoopFib -)
		echo "| node --perf-basic-prof | $r | perf -g | $n | $root | $self | $tot | |"
		rmmap node.out; rm -f node.data
	fi
	if have javac && have java; then
		[ -f Hot.class ] || javac Hot.java
		jflags="-XX:+PreserveFramePointer -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit"
		"$cctop" record -d 60s -o java.pb.gz -- java $jflags -cp . Hot >java.out 2>java.err; rmmap java.out
		read -r _ n _ root _ self _ tot < <("$ss" -root '^(start_thread|clone3|_start)$' -self quasarKernel -in quasarKernel java.pb.gz)
		echo "| java (perf map at exit) | $r | cctop | $n | $root | $self | $tot | |"
		perf record -q -g -F 999 -o java.data -- java $jflags -cp . Hot >java.out 2>/dev/null
		read -r _ n _ root _ self _ tot < <(perfscript java.data | "$ss" -perf -root '^(start_thread|clone3|_start)$' -self quasarKernel -in quasarKernel -)
		echo "| java (perf map at exit) | $r | perf -g | $n | $root | $self | $tot | |"
		rmmap java.out; rm -f java.data
	fi
	for v in 3.12 3.13; do
		py=$(ls /root/.pyenv/versions/$v.*/bin/python$v 2>/dev/null | head -1 || true)
		[ -n "$py" ] || continue
		said=$("$cctop" record -d 60s -o py.pb.gz -- "$py" "$here/testdata/pyshares.py" 4 2>py.err)
		read -r _ n _ a _ b _ trunc < <("$ss" -in 'spin_a' -in 'spin_b' -in '^\[truncated\]$' py.pb.gz)
		echo "| python $v, no flags | $r | cctop | $n | $(awk -v t="${trunc%\%}" 'BEGIN{printf "%.1f%%", 100-t}') | | spin_a $a, spin_b $b | script: ${said#shares } |"
		echo "$said" > py.out; rmmap py.out
		said=$(perf record -q --call-graph dwarf -F 999 -o py.data -- "$py" -X perf "$here/testdata/pyshares.py" 4 2>/dev/null)
		read -r _ n _ root _ a _ b < <(perfscript py.data | "$ss" -perf -root '^(_start|__libc_start_call_main|__libc_start_main.*)$' -in 'py::spin_a' -in 'py::spin_b' -)
		echo "| python $v -X perf | $r | perf --call-graph dwarf | $n | $root | | spin_a $a, spin_b $b | script: ${said#shares } |"
		echo "$said" > py.out; rmmap py.out; rm -f py.data
	done
done
