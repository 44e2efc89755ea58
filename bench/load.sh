#!/usr/bin/env bash
# bench/load.sh [SECONDS]: cctop record on a target with 500 busy-ish
# threads at 999 Hz, against `perf record -F 999 -g -p PID` on the same
# target in the same run. The short version is TestRecordLoad.
#
# The target is `cctop workload spin -threads 500 -busy B -loop` with
# GOMAXPROCS=500: 500 OS threads, each working a share B (default 0.004) of
# its time in 1 ms bursts, about 2 CPUs' worth together, with hundreds of
# them runnable at the peaks (a busy server's thread pool). Each tool
# attaches with -p and samples for SECONDS (default 60) of wall time:
#
#   cctop   cctop record -F 999 -d SECONDS -p PID -o FILE (default flags: on
#           a machine without a PMU the automatic uprobe counters, which
#           stand down for this many threads)
#   perf    perf record -F 999 -g -p PID -o FILE -- sleep SECONDS
#
# For each it prints the samples written and the records lost (cctop's
# summary; perf's "Captured ... (N samples)" and perf report --stats), the
# threads seen, its open descriptors and perf ring mappings (largest of the
# once-a-second looks, and the last look: a leak grows), its CPU time in %
# of one core over its whole run and its largest RSS (/usr/bin/time), and
# its wall time (SECONDS plus attaching, draining and writing). Both tools
# are starved on a machine this busy; so is everything else on it.
#
# Environment: BUSY (the target's -busy), THREADS (default 500), ORDER
# (default "cctop perf"), CCTOP_FLAGS (extra flags for cctop record),
# CCTOP_BIN (another cctop binary to measure, an older build say; the
# target is always this tree's).
set -euo pipefail

SECS=${1:-60}
BUSY=${BUSY:-0.004}
THREADS=${THREADS:-500}
ORDER=${ORDER:-cctop perf}
CCTOP_FLAGS=${CCTOP_FLAGS:-}
CCTOP_BIN=${CCTOP_BIN:-}

die() { echo "load.sh: $*" >&2; exit 1; }
need() { command -v "$1" >/dev/null 2>&1 || die "$1 not found: $2"; }
need go "install Go to build cctop"
need perf "apt-get install linux-perf (the reference)"
[[ -x /usr/bin/time ]] || die "/usr/bin/time not found: apt-get install time"
[[ $SECS =~ ^[0-9]+$ && $SECS -gt 0 ]] || die "usage: bash bench/load.sh [SECONDS]"

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tmp=$(mktemp -d /tmp/cctop-load.XXXXXX)
target_pid=
tool_pid=

cleanup() {
	for p in $tool_pid $target_pid; do kill -KILL "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "building cctop..." >&2
(cd "$root" && go build -o "$tmp/cctop" .) || die "go build failed"

GOMAXPROCS=$THREADS "$tmp/cctop" workload spin -threads "$THREADS" -busy "$BUSY" -loop >/dev/null 2>&1 &
target_pid=$!
for _ in $(seq 600); do
	n=$(ls "/proc/$target_pid/task" 2>/dev/null | wc -l)
	[[ $n -ge $THREADS ]] && break
	sleep 0.1
done
[[ $(ls "/proc/$target_pid/task" | wc -l) -ge $THREADS ]] || die "the target did not start $THREADS threads"
sleep 2
echo "target: pid $target_pid, $(ls "/proc/$target_pid/task" | wc -l) threads (GOMAXPROCS=$THREADS spin -threads $THREADS -busy $BUSY); $(nproc) CPUs; ${SECS}s per tool" >&2

# watch PID NAME: once a second until PID ends, its descriptors and perf
# ring mappings, one "fds maps" line per look into $tmp/NAME.watch.
watch() {
	local p=$1 f=$tmp/$2.watch
	: >"$f"
	while [[ -d /proc/$p ]]; do
		local fds maps
		fds=$(ls "/proc/$p/fd" 2>/dev/null | wc -l) || break
		maps=$(grep -c 'perf_event' "/proc/$p/maps" 2>/dev/null || true)
		[[ $fds -gt 0 ]] && echo "$fds ${maps:-0}" >>"$f"
		sleep 1
	done
}

declare -A R_SAMPLES R_LOST R_THREADS R_FDS R_FDS_LAST R_MAPS R_CPU R_RSS R_WALL R_TARGET

# target_cpu: the target's utime+stime in clock ticks.
target_ticks() { sed 's/.*) //' "/proc/$target_pid/stat" | awk '{print $12 + $13}'; }
hz=$(getconf CLK_TCK)

# finish NAME T0: the figures common to both tools, from /usr/bin/time's
# "wall user sys maxrss" and the watch file.
finish() {
	local name=$1 t0=$2 wall user sys rss
	read -r wall user sys rss <"$tmp/$name.time"
	R_WALL[$name]=$wall
	R_CPU[$name]=$(awk -v u="$user" -v s="$sys" -v w="$wall" 'BEGIN{printf "%.1f", 100 * (u + s) / w}')
	R_RSS[$name]=$((rss / 1024))
	R_FDS[$name]=$(awk 'BEGIN{m=0} {if ($1 > m) m = $1} END{print m}' "$tmp/$name.watch")
	R_FDS_LAST[$name]=$(tail -1 "$tmp/$name.watch" | awk '{print $1}')
	R_MAPS[$name]=$(awk 'BEGIN{m=0} {if ($2 > m) m = $2} END{print m}' "$tmp/$name.watch")
	R_TARGET[$name]=$(awk -v a="$t0" -v b="$(target_ticks)" -v hz="$hz" -v w="$wall" 'BEGIN{printf "%.0f", 100 * (b - a) / hz / w}')
}

run_cctop() {
	local t0
	t0=$(target_ticks)
	# shellcheck disable=SC2086
	/usr/bin/time -f "%e %U %S %M" -o "$tmp/cctop.time" \
		"${CCTOP_BIN:-$tmp/cctop}" record -F 999 -d "${SECS}s" -p "$target_pid" -o "$tmp/cctop.pb.gz" $CCTOP_FLAGS 2>"$tmp/cctop.err" &
	tool_pid=$!
	sleep 0.2
	local cpid
	cpid=$(pgrep -P "$tool_pid" || echo "$tool_pid")
	watch "$cpid" cctop
	wait "$tool_pid" || die "cctop record failed: $(cat "$tmp/cctop.err")"
	tool_pid=
	local line
	line=$(grep -E '^cctop: [0-9]+ samples in' "$tmp/cctop.err") || die "no summary: $(cat "$tmp/cctop.err")"
	R_SAMPLES[cctop]=$(awk '{print $2}' <<<"$line")
	R_THREADS[cctop]=$(grep -oE '[0-9]+ threads' <<<"$line" | awk '{print $1}')
	R_LOST[cctop]=$(grep -oE '[0-9]+ lost' <<<"$line" | awk '{print $1}')
	finish cctop "$t0"
	echo "cctop's summary:" >&2
	grep -E '^cctop: ' "$tmp/cctop.err" | sed 's/^/  /' >&2
}

run_perf() {
	local t0
	t0=$(target_ticks)
	/usr/bin/time -f "%e %U %S %M" -o "$tmp/perf.time" \
		perf record -F 999 -g -p "$target_pid" -o "$tmp/perf.data" -- sleep "$SECS" >/dev/null 2>"$tmp/perf.err" &
	tool_pid=$!
	sleep 0.2
	local ppid
	ppid=$(pgrep -P "$tool_pid" || echo "$tool_pid")
	watch "$ppid" perf
	wait "$tool_pid" || die "perf record failed: $(cat "$tmp/perf.err")"
	tool_pid=
	R_SAMPLES[perf]=$(grep -oE '\(([0-9]+) samples\)' "$tmp/perf.err" | grep -oE '[0-9]+' || echo 0)
	R_LOST[perf]=$(perf report -i "$tmp/perf.data" --stats 2>/dev/null | awk '/LOST_SAMPLES? events:/ {n += $3} /^ *LOST events:/ {n += $3} END {print n + 0}')
	R_THREADS[perf]=$(perf script -i "$tmp/perf.data" -F tid 2>/dev/null | sort -u | wc -l)
	finish perf "$t0"
	rm -f "$tmp/perf.data"
}

for tool in $ORDER; do
	echo "phase $tool..." >&2
	case $tool in
	cctop) run_cctop ;;
	perf) run_perf ;;
	*) die "unknown tool $tool" ;;
	esac
done

echo
echo "target: $THREADS threads, -busy $BUSY, GOMAXPROCS=$THREADS; 999 Hz for ${SECS}s; $(nproc) CPUs"
printf '%-6s %8s %7s %8s %9s %9s %6s %7s %8s %8s %8s\n' tool samples lost threads "fds max" "fds last" "rings" "CPU%" "RSS MiB" "wall s" "target%"
for tool in $ORDER; do
	printf '%-6s %8s %7s %8s %9s %9s %6s %7s %8s %8s %8s\n' "$tool" "${R_SAMPLES[$tool]}" "${R_LOST[$tool]}" "${R_THREADS[$tool]}" \
		"${R_FDS[$tool]}" "${R_FDS_LAST[$tool]}" "${R_MAPS[$tool]}" "${R_CPU[$tool]}" "${R_RSS[$tool]}" "${R_WALL[$tool]}" "${R_TARGET[$tool]}"
done
echo "samples, lost: written to the profile, and records the kernel dropped with a ring full (cctop's summary; perf's"
echo "  capture line and perf report --stats); threads: seen (cctop's summary: every thread it opened or saw start;"
echo "  perf: threads with samples);"
echo "fds, rings: the tool's open descriptors and perf ring mappings, largest and last of the once-a-second looks;"
echo "CPU%: the tool's user+sys over its wall time, % of one core; RSS: largest resident set; wall: start to exit"
echo "  (the ${SECS}s, plus attaching to every thread, reading the rings dry and writing); target%: the target's CPU meanwhile."
