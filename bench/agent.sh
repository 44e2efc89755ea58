#!/usr/bin/env bash
# bench/agent.sh [SECONDS] [CHURN_PER_S]: what always-on profiling of a whole
# host costs, cctop agent against perf in the same run.
#
# The host is kept busy: two `cctop workload spin -loop -threads 2` processes
# (four threads on the 2 CPUs) and a churn of short-lived processes (CHURN_PER_S
# a second, default 20: `sh -c` running a short gcc-free pipeline, each a new
# pid with its own mappings). Then, one after the other, for SECONDS each
# (default 60; the issue's soak is 1800):
#
#   perf    perf record -F 19 -a -g -o FILE (the reference: every CPU, frame
#           pointer call chains, written to a file)
#   cctop   cctop agent --all (its defaults: 19 Hz, 10 s windows, --calls none,
#           256 MiB of symbols) pushing to a collector on loopback, built from
#           collector/ (the collector's own CPU is not counted, as perf's disk
#           is not)
#
# For each it prints CPU seconds used (utime+stime of the profiler's process
# and its threads), peak RSS (VmHWM), RSS at a quarter, half and the end of
# the run (bounded memory shows as a flat line), and for cctop the windows
# sent and dropped; the last lines are cctop's CPU and peak RSS over perf's.
set -euo pipefail

SECS=${1:-60}
CHURN=${2:-20}
die() { echo "agent.sh: $*" >&2; exit 1; }
need() { command -v "$1" >/dev/null 2>&1 || die "$1 not found: $2"; }
need go "install Go to build cctop"
need perf "apt-get install linux-perf (the reference)"
[[ $SECS =~ ^[0-9]+$ && $CHURN =~ ^[0-9]+$ && $SECS -ge 10 ]] || die "usage: bash bench/agent.sh [SECONDS>=10] [CHURN_PER_S]"
[[ $(id -u) -eq 0 ]] || die "run as root: --all and perf -a need it"

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tmp=$(mktemp -d /tmp/cctop-agent.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
(cd "$root" && go build -o "$tmp/cctop" .)
go build -C "$root/collector" -o "$tmp/collector" .
bin=$tmp/cctop

# The collector, on a free port.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >"$tmp/collector.yaml" <<EOF
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:$port
exporters:
  cctopfile:
    path: $tmp/received.jsonl
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    profiles:
      receivers: [otlp]
      exporters: [cctopfile]
EOF
"$tmp/collector" --config "$tmp/collector.yaml" >"$tmp/collector.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do (echo >/dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.2; done

# The load: busy threads and process churn.
"$bin" workload spin -loop -threads 2 >/dev/null &
pids+=($!)
"$bin" workload spin -loop -threads 2 >/dev/null &
pids+=($!)
(
	gap=$(awk -v c="$CHURN" 'BEGIN { printf "%.3f", (c > 0 ? 1 / c : 1) }')
	while :; do
		[[ $CHURN -gt 0 ]] && sh -c 'echo churn | tr a-z A-Z | wc -c >/dev/null'
		sleep "$gap"
	done
) &
pids+=($!)

cpu_s() { # utime+stime of a process and its threads, in seconds
	awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' "/proc/$1/stat" 2>/dev/null || echo 0
}
rss_kb() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }
hwm_kb() { awk '/^VmHWM/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }

# measure NAME CMD...: runs CMD for SECS seconds, prints its figures and
# leaves "cpu hwm" in $tmp/NAME.fig.
measure() {
	local name=$1; shift
	"$@" >"$tmp/$name.out" 2>"$tmp/$name.err" &
	local p=$!
	local q1="" q2="" cpu=0 hwm=0
	for ((s = 1; s <= SECS; s++)); do
		sleep 1
		cpu=$(cpu_s $p); hwm=$(hwm_kb $p)
		((s == SECS / 4)) && q1=$(rss_kb $p)
		((s == SECS / 2)) && q2=$(rss_kb $p)
	done
	local end; end=$(rss_kb $p)
	kill -INT $p
	wait $p || true
	printf '%-6s cpu %6.2f s (%5.2f%% of one CPU)  peak RSS %7.1f MiB  RSS at 1/4 %6.1f, 1/2 %6.1f, end %6.1f MiB\n' \
		"$name" "$cpu" "$(awk -v c="$cpu" -v s="$SECS" 'BEGIN { print 100 * c / s }')" \
		"$(awk -v k="$hwm" 'BEGIN { print k / 1024 }')" "$(awk -v k="$q1" 'BEGIN { print k / 1024 }')" \
		"$(awk -v k="$q2" 'BEGIN { print k / 1024 }')" "$(awk -v k="$end" 'BEGIN { print k / 1024 }')"
	echo "$cpu $hwm" >"$tmp/$name.fig"
}

echo "host: $(nproc) CPUs, load: 2 x spin -threads 2, churn $CHURN processes/s; $SECS s per profiler"
measure perf perf record -F 19 -a -g -o "$tmp/perf.data" --quiet
measure cctop "$bin" agent --all --otlp "127.0.0.1:$port" --otlp-insecure
grep -h "stopped after" "$tmp/cctop.err" | sed 's/^/       /' || { cat "$tmp/cctop.err"; die "the agent did not stop cleanly"; }
read -r pcpu phwm <"$tmp/perf.fig"
read -r ccpu chwm <"$tmp/cctop.fig"
awk -v a="$ccpu" -v b="$pcpu" 'BEGIN { printf "cctop/perf CPU: %.2fx\n", (b > 0 ? a / b : 0) }'
awk -v a="$chwm" -v b="$phwm" 'BEGIN { printf "cctop/perf peak RSS: %.2fx\n", (b > 0 ? a / b : 0) }'
