#!/usr/bin/env bash
# bench/tui_cpu.sh [SECONDS]: cctop's own CPU use while `cctop top` shows a
# 4-thread CPU-bound target sampled at 999 Hz, against `perf record -F 999 -g`
# on the same target in the same run.
#
# CPU use is read from /proc/PID/stat (utime+stime of all the process's
# threads) over SECONDS (default 20) of wall time after a warm-up (WARM,
# default 3 s), divided by CLK_TCK: percent of one core. The phases run one
# after the other on the same target process:
#
#   cctop        `cctop top -F 999 -p PID` in a detached tmux session (160x50),
#                the configuration a user gets (--calls auto: without a PMU,
#                uprobes on the 4 hottest functions, whose hits the *target*
#                pays for in its own kernel time)
#   cctop-none   the same with --calls none (sampling only)
#   cctop-fp     --calls none --unwind fp: the kernel's frame-pointer chains
#                and a 512-byte leaf copy, what perf top -g takes, instead
#                of the 8 KiB stack copies a dynamically linked target gets
#   perf-record  `perf record -F 999 -g -p PID -o FILE`: the reference. The
#                kernel's sample records copied to a file when its rings
#                fill up: no symbols, no aggregation, no display (perf report
#                does that later)
#   perf-top     `perf top -F 999 -g -p PID` in tmux (160x50): perf's own live
#                view, which symbolizes and aggregates as cctop does (its
#                display refreshes every 2 s, cctop's every 1 s: --refresh)
#   perf-top-dwarf  the same with --call-graph dwarf (8 KiB stack copies
#                unwound with libdw): the reference for a target that keeps
#                no frame pointers (TARGET=cxx)
#
# For each it prints the tool's CPU (user+sys; also from the threads'
# schedstat run times in ns, which resolve perf record's tiny figure), the
# target's CPU (about 200% on 2 idle CPUs), what everything else on the
# machine used in the interval (from /proc/stat: the figures are only
# comparable when that is near 0), the samples per second the tool took, and
# how long the tool took to exit after q.
#
# Environment: WARM (seconds), TARGET=go (default: `cctop workload density
# -threads 4 -loop`) or TARGET=c (a C program with 4 spinning threads, built
# with gcc) or TARGET=cxx (a C++ program with 4 threads built with g++ -O2,
# no frame pointers: its stacks need CFI) or TARGET=idle (a sleeping process: what watching costs when
# nothing happens), PHASES (default "cctop cctop-none perf-record perf-top"),
# PROFILE=1 also records where cctop's own time goes (`perf record -g -p
# <cctop pid>` during the cctop phase) and prints the top of `perf report`;
# CCTOP=path measures that cctop binary instead of building this checkout's;
# CCTOP_ENV="VAR=value ..." runs cctop with those variables (GOMAXPROCS=8,
# say, to see what the Go scheduler's share is).
set -euo pipefail

SECS=${1:-20}
WARM=${WARM:-3}
TARGET=${TARGET:-go}
PHASES=${PHASES:-cctop cctop-none perf-record perf-top}
PROFILE=${PROFILE:-0}
CCTOP_ENV=${CCTOP_ENV:-}

die() { echo "tui_cpu.sh: $*" >&2; exit 1; }
need() { command -v "$1" >/dev/null 2>&1 || die "$1 not found: $2"; }
need go "install Go to build cctop"
need tmux "apt-get install tmux (cctop top needs a terminal)"
need perf "apt-get install linux-perf (the reference)"
need getconf "part of libc-bin"
need awk "apt-get install gawk or mawk"
[[ $TARGET == c ]] && need gcc "apt-get install gcc (TARGET=c)"
[[ $TARGET == cxx ]] && need g++ "apt-get install g++ (TARGET=cxx)"
[[ $SECS =~ ^[0-9]+$ && $SECS -gt 0 ]] || die "usage: bash bench/tui_cpu.sh [SECONDS]"

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tmp=$(mktemp -d /tmp/cctop-tui-cpu.XXXXXX)
sess=cctop-tui-cpu-$$
target_pid=
tool_pid=
prof_pid=

# alive PID: the process exists and has not exited (a zombie has: a tmux
# server does not always reap a pane's process at once).
alive() { [[ -r /proc/$1/stat ]] && [[ $(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1) != Z ]]; }

cleanup() {
	tmux kill-session -t "=$sess" 2>/dev/null || true
	for p in $prof_pid $tool_pid; do kill -INT "$p" 2>/dev/null || true; done
	[[ -n $target_pid ]] && kill "$target_pid" 2>/dev/null || true
	# cctop closes its uprobe events one by one on exit (about 0.1 s each).
	for p in $prof_pid $tool_pid $target_pid; do
		for _ in $(seq 300); do alive "$p" || break; sleep 0.1; done
		kill -KILL "$p" 2>/dev/null || true
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

hz=$(getconf CLK_TCK)

# ticks PID: utime+stime of the whole process, in clock ticks. The fields
# are counted after the ")" that ends the command name, which may hold spaces.
ticks() { sed 's/.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'; }
# sticks PID: stime alone.
sticks() { sed 's/.*) //' "/proc/$1/stat" | awk '{print $13}'; }
# nsec PID: CPU time of the process's live threads in ns, from schedstat
# (finer than the clock ticks of stat: perf record uses well under a tick a
# second).
nsec() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{n += $1} END {printf "%.0f", n}'; }
# busy: ticks all CPUs spent not idle (user nice system irq softirq).
busy() { awk '/^cpu /{print $2 + $3 + $4 + $7 + $8; exit}' /proc/stat; }
now() { date +%s.%N; }
pct() { awk -v t="$1" -v w="$2" -v hz="$hz" 'BEGIN{printf "%.2f", 100 * t / hz / w}'; }

if [[ -n ${CCTOP:-} ]]; then
	cp "$CCTOP" "$tmp/cctop" || die "CCTOP=$CCTOP: cannot copy it"
else
	echo "building cctop..." >&2
	(cd "$root" && go build -o "$tmp/cctop" .) || die "go build failed"
fi

case $TARGET in
go)
	"$tmp/cctop" workload density -threads 4 -loop >/dev/null 2>&1 &
	target_pid=$!
	target_desc="cctop workload density -threads 4 -loop (Go, 4 busy OS threads)"
	;;
c)
	cat >"$tmp/spin4.c" <<'EOF'
#include <pthread.h>
#include <stdint.h>
volatile uint64_t sink;
__attribute__((noinline)) uint64_t leaf(uint64_t x, int n) {
	for (int i = 0; i < n; i++) { x ^= x >> 12; x ^= x << 25; x ^= x >> 27; x *= 0x2545F4914F6CDD1DULL; }
	return x;
}
__attribute__((noinline)) void *spin(void *arg) {
	uint64_t x = (uintptr_t)arg | 1;
	for (;;) x = leaf(x, 1000 + (int)(uintptr_t)arg * 1000), sink = x;
	return 0;
}
int main(void) {
	pthread_t t[4];
	for (uintptr_t i = 0; i < 4; i++) pthread_create(&t[i], 0, spin, (void *)i);
	pthread_join(t[0], 0);
	return 0;
}
EOF
	gcc -O1 -fno-omit-frame-pointer -pthread -o "$tmp/spin4" "$tmp/spin4.c" || die "gcc failed"
	"$tmp/spin4" &
	target_pid=$!
	target_desc="spin4 (C, gcc -O1 -fno-omit-frame-pointer, 4 spinning threads)"
	;;
cxx)
	cat >"$tmp/spin4.cc" <<'EOF'
#include <map>
#include <string>
#include <thread>
#include <vector>
#include <cstdint>
volatile uint64_t sink;
// Deep enough that the stacks say something: run -> step -> the map's
// and string's code, all without frame pointers.
template <int D> __attribute__((noinline)) uint64_t step(std::map<uint64_t, std::string> &m, uint64_t x) {
	if constexpr (D == 0) {
		x = x * 6364136223846793005ULL + 1;
		auto &s = m[x % 4096];
		s.assign(16 + x % 48, char('a' + x % 26));
		return x ^ s.size();
	} else {
		return step<D - 1>(m, x + D) + 1;
	}
}
__attribute__((noinline)) void run(int id) {
	std::map<uint64_t, std::string> m;
	uint64_t x = id + 1;
	for (;;) x = step<6>(m, x), sink = x;
}
int main() {
	std::vector<std::thread> t;
	for (int i = 0; i < 4; i++) t.emplace_back(run, i);
	t[0].join();
}
EOF
	g++ -O2 -std=c++17 -fomit-frame-pointer -pthread -o "$tmp/spin4cxx" "$tmp/spin4.cc" || die "g++ failed"
	"$tmp/spin4cxx" &
	target_pid=$!
	target_desc="spin4cxx (C++, g++ -O2 without frame pointers, 4 threads in std::map and std::string)"
	;;
idle)
	sleep 1000000 &
	target_pid=$!
	target_desc="sleep (an idle target: the cost of watching nothing)"
	;;
*) die "TARGET must be go, c, cxx or idle" ;;
esac
sleep 1
alive "$target_pid" || die "the target did not start"
nthreads=$(ls "/proc/$target_pid/task" | wc -l)

# screen: the tmux pane's text.
screen() { tmux capture-pane -p -t "=$sess:" 2>/dev/null || true; }
# header_samples: the sample count in cctop's header line ("5083 samples",
# "12.0k samples", "1.20M samples").
header_samples() {
	screen | head -1 | grep -oE '[0-9.]+[kMG]? samples' | head -1 |
		awk '{n = $1; m = 1; if (n ~ /k$/) m = 1e3; if (n ~ /M$/) m = 1e6; if (n ~ /G$/) m = 1e9; sub(/[kMG]$/, "", n); printf "%.0f", n * m}' || true
}

# measure TOOLPID: sleep SECS and set tool_pct, tool_sys_pct, target_pct,
# other_pct, wall.
measure() {
	local p=$1 a0 s0 t0 b0 w0 n0 a1 s1 t1 b1 w1 n1
	a0=$(ticks "$p") s0=$(sticks "$p") t0=$(ticks "$target_pid") b0=$(busy) n0=$(nsec "$p") w0=$(now)
	sleep "$SECS"
	a1=$(ticks "$p") s1=$(sticks "$p") t1=$(ticks "$target_pid") b1=$(busy) n1=$(nsec "$p") w1=$(now)
	wall=$(awk -v a="$w0" -v b="$w1" 'BEGIN{printf "%.3f", b - a}')
	tool_pct=$(pct $((a1 - a0)) "$wall")
	tool_ns_pct=$(awk -v n=$((n1 - n0)) -v w="$wall" 'BEGIN{printf "%.3f", 100 * n / 1e9 / w}')
	tool_sys_pct=$(pct $((s1 - s0)) "$wall")
	target_pct=$(pct $((t1 - t0)) "$wall")
	other_pct=$(pct $((b1 - b0 - (a1 - a0) - (t1 - t0))) "$wall")
}

# thread_stats PID: per thread, sorted by id: id, utime+stime, voluntary switches.
thread_stats() {
	local t
	for t in /proc/"$1"/task/*; do
		echo "${t##*/} $(sed 's/.*) //' "$t/stat" | awk '{print $12 + $13}') $(awk '/^voluntary_ctxt/{print $2}' "$t/status")"
	done | sort -k1,1
}

declare -A R_TOOL R_NS R_SYS R_TARGET R_OTHER R_RATE R_EXIT

# wait_gone PID SECONDS: wait for the process to end; print how long it took.
wait_gone() {
	local p=$1 lim=$2 w0
	w0=$(now)
	for _ in $(seq $((lim * 20))); do
		alive "$p" || break
		sleep 0.05
	done
	if alive "$p"; then
		kill -KILL "$p" 2>/dev/null || true
		echo "killed after ${lim}s"
		return
	fi
	awk -v a="$w0" -v b="$(now)" 'BEGIN{printf "%.1fs", b - a}'
}

run_cctop() {
	local name=$1
	shift
	tmux kill-session -t "=$sess" 2>/dev/null || true
	tmux new-session -d -s "$sess" -x 160 -y 50 \
		"exec env $CCTOP_ENV $tmp/cctop top -F 999 -p $target_pid $* 2>$tmp/$name.err"
	tool_pid=$(tmux display-message -p -t "=$sess:" '#{pane_pid}')
	local ok=
	for _ in $(seq 150); do
		[[ -n $(header_samples) ]] && { ok=1; break; }
		alive "$tool_pid" || break
		sleep 0.1
	done
	[[ -n $ok ]] || die "$name: no samples on screen after 15 s:
$(screen)
$(cat "$tmp/$name.err" 2>/dev/null)"
	sleep "$WARM"
	if [[ $PROFILE == 1 && $name == cctop ]]; then
		perf record -F 999 -g -p "$tool_pid" -o "$tmp/cctop-self.data" >/dev/null 2>"$tmp/prof.err" &
		prof_pid=$!
	fi
	local n0 w0 n1 w1
	n0=$(header_samples) w0=$(now)
	[[ $PROFILE == 1 && $name == cctop ]] && thread_stats "$tool_pid" >"$tmp/threads0"
	measure "$tool_pid"
	[[ $PROFILE == 1 && $name == cctop ]] && thread_stats "$tool_pid" >"$tmp/threads1"
	n1=$(header_samples) w1=$(now)
	R_RATE[$name]=$(awk -v a="$n0" -v b="$n1" -v s="$w0" -v e="$w1" 'BEGIN{printf "%.0f", (b - a) / (e - s)}')
	R_TOOL[$name]=$tool_pct R_NS[$name]=$tool_ns_pct R_SYS[$name]=$tool_sys_pct R_TARGET[$name]=$target_pct R_OTHER[$name]=$other_pct
	if [[ -n $prof_pid ]]; then
		kill -INT "$prof_pid"
		wait "$prof_pid" 2>/dev/null || true
		prof_pid=
	fi
	echo "$name: last screen header:" >&2
	screen | head -3 | sed 's/^/  /' >&2
	tmux send-keys -t "=$sess:" q
	R_EXIT[$name]=$(wait_gone "$tool_pid" 60)
	tool_pid=
	tmux kill-session -t "=$sess" 2>/dev/null || true
}

run_perf_record() {
	local name=perf-record w0
	w0=$(now)
	perf record -F 999 -g -p "$target_pid" -o "$tmp/perf.data" >/dev/null 2>"$tmp/perf.err" &
	tool_pid=$!
	sleep "$WARM"
	alive "$tool_pid" || die "perf record failed: $(cat "$tmp/perf.err")"
	measure "$tool_pid"
	R_TOOL[$name]=$tool_pct R_NS[$name]=$tool_ns_pct R_SYS[$name]=$tool_sys_pct R_TARGET[$name]=$target_pct R_OTHER[$name]=$other_pct
	kill -INT "$tool_pid"
	wait "$tool_pid" 2>/dev/null || true
	tool_pid=
	local n
	n=$(grep -oE '\(([0-9]+) samples\)' "$tmp/perf.err" | grep -oE '[0-9]+' || true)
	# Over perf's whole run (warm-up included): perf prints only the total.
	R_RATE[$name]=$(awk -v n="${n:-0}" -v a="$w0" -v b="$(now)" 'BEGIN{printf "%.0f", n / (b - a)}')
	R_EXIT[$name]=-
	rm -f "$tmp/perf.data"
}

run_perf_top() {
	local name=${1:-perf-top} graph=${2:--g}
	tmux kill-session -t "=$sess" 2>/dev/null || true
	tmux new-session -d -s "$sess" -x 160 -y 50 "exec perf top -F 999 $graph -p $target_pid 2>$tmp/perftop.err"
	tool_pid=$(tmux display-message -p -t "=$sess:" '#{pane_pid}')
	sleep "$WARM"
	alive "$tool_pid" || die "perf top failed: $(cat "$tmp/perftop.err")"
	measure "$tool_pid"
	R_TOOL[$name]=$tool_pct R_NS[$name]=$tool_ns_pct R_SYS[$name]=$tool_sys_pct R_TARGET[$name]=$target_pct R_OTHER[$name]=$other_pct
	R_RATE[$name]=-
	tmux send-keys -t "=$sess:" q
	R_EXIT[$name]=$(wait_gone "$tool_pid" 60)
	tool_pid=
	tmux kill-session -t "=$sess" 2>/dev/null || true
}

echo "target: $target_desc, pid $target_pid, $nthreads threads; $(nproc) CPUs; CLK_TCK $hz; warm-up ${WARM}s, measured ${SECS}s per phase" >&2
for ph in $PHASES; do
	echo "phase $ph..." >&2
	case $ph in
	cctop) run_cctop cctop ;;
	cctop-none) run_cctop cctop-none --calls none ;;
	cctop-fp) run_cctop cctop-fp --calls none --unwind fp ;;
	perf-record) run_perf_record ;;
	perf-top) run_perf_top ;;
	perf-top-dwarf) run_perf_top perf-top-dwarf "--call-graph dwarf" ;;
	*) die "unknown phase $ph" ;;
	esac
done

echo
echo "target: $target_desc; measured ${SECS}s after ${WARM}s warm-up; % of one core"
# The live reference: perf top -g, or with DWARF when only that ran.
topname=perf-top
[[ -z ${R_NS[perf-top]:-} && -n ${R_NS[perf-top-dwarf]:-} ]] && topname=perf-top-dwarf
printf '%-14s %7s %8s %9s %10s %9s %8s %12s %9s %8s\n' phase tool% "(sys%)" "tool%(ns)" samples/s target% other% "/perf-record" "/$topname" "quit"
ref=${R_NS[perf-record]:-}
reftop=${R_NS[$topname]:-}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{if (b > 0) printf "%.2fx", a / b; else print "inf"}'; }
for ph in $PHASES; do
	ratio=- ratiotop=-
	if [[ -n $ref && $ph != perf-record ]]; then
		ratio=$(ratio "${R_NS[$ph]}" "$ref")
	fi
	if [[ -n $reftop && $ph != "$topname" ]]; then
		ratiotop=$(ratio "${R_NS[$ph]}" "$reftop")
	fi
	printf '%-14s %7s %8s %9s %10s %9s %8s %12s %9s %8s\n' "$ph" "${R_TOOL[$ph]}" "(${R_SYS[$ph]})" "${R_NS[$ph]}" "${R_RATE[$ph]}" \
		"${R_TARGET[$ph]}" "${R_OTHER[$ph]}" "$ratio" "$ratiotop" "${R_EXIT[$ph]}"
done
echo "tool%: the tool's utime+stime from /proc/PID/stat over the interval, % of one core (sys% the stime part);"
echo "tool%(ns): the same from the threads' schedstat runtimes, in ns (the ratio to perf record uses these);"
echo "target%: the target's CPU, uprobe hits included; other%: the rest of the machine (should be near 0);"
echo "samples/s: from cctop's header over the interval (perf record: its sample total over its whole run); quit: q to exit."
for ph in $PHASES; do
	if awk -v o="${R_OTHER[$ph]}" 'BEGIN{exit !(o > 20)}'; then
		echo "warning: other processes used ${R_OTHER[$ph]}% during $ph: the machine was not idle, the figures are not comparable"
	fi
done

if [[ $PROFILE == 1 && -s $tmp/cctop-self.data ]]; then
	echo
	echo "cctop's threads over the interval (CPU % of a core, voluntary context switches/s):"
	join "$tmp/threads0" "$tmp/threads1" | awk -v w="$SECS" -v hz="$hz" \
		'{c = 100 * ($4 - $2) / hz / w; v = ($5 - $3) / w; if (c > 0 || v > 10) printf "  tid %-8s %6.2f%%  %7.0f/s\n", $1, c, v}' | sort -k3 -rn
	echo
	echo "where cctop's time goes: share of its samples under each (perf report --children; $(
		perf report -i "$tmp/cctop-self.data" --stdio 2>/dev/null | grep -E '^# Samples: [1-9]' | head -1 | sed 's/^# //'))"
	perf report -i "$tmp/cctop-self.data" --children --sort sym --stdio -g none 2>/dev/null |
		grep -E '^ +[0-9]' | grep -E ' (runtime\.sysmon|runtime\.gcBgMarkWorker|runtime\.mcall|main\.\(\*live\)\.(run|publish|tick)|main\.\(\*armer\)\.arm|main\.\(\*builder\)\.handle|golang\.org/x/sys/unix\.EpollWait|github\.com/cctop/cctop/sampler\.\(\*Session\)\.(drain|scanThreads|ReconfigureWith)|charm\.land/bubbletea/v2\.\(\*Program\)\.(startRenderer\.func1|eventLoop)|github\.com/cctop/cctop/tui\.\(\*Model\)\.(View|Update)|finish_task_switch.*)$'
	echo "  (a thread that runs for microseconds at a time, as sysmon does, takes its cpu-clock samples"
	echo "   mostly at finish_task_switch, as it is switched in: those samples are its wake-ups)"
fi
