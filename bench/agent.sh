#!/usr/bin/env bash
# bench/agent.sh [SECONDS] [CHURN_PER_S] [SOAK_SECONDS]: what always-on
# profiling of a whole host costs, cctop agent against perf in the same run.
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
# For each it prints CPU seconds used over the profiler's whole life, exit
# included (utime+stime from its rusage: perf record reads its file again
# for build IDs after the SIGINT, the agent sends its last window), the CPU
# at the SIGINT, peak RSS (maxrss) and RSS every tenth of the run, and for
# cctop the windows sent and dropped; then cctop's CPU and peak RSS over
# perf's. With SOAK_SECONDS (the issue's soak: 1800), the agent then runs
# alone that long under the same churn (the busy threads stopped; whatever
# else runs on the host is profiled too), and its RSS every tenth of the run
# shows whether memory stays bounded.
set -euo pipefail

SECS=${1:-60}
CHURN=${2:-20}
SOAK=${3:-0}
die() { echo "agent.sh: $*" >&2; exit 1; }
need() { command -v "$1" >/dev/null 2>&1 || die "$1 not found: $2"; }
need go "install Go to build cctop"
need perf "apt-get install linux-perf (the reference)"
[[ $SECS =~ ^[0-9]+$ && $CHURN =~ ^[0-9]+$ && $SOAK =~ ^[0-9]+$ && $SECS -ge 10 ]] || die "usage: bash bench/agent.sh [SECONDS>=10] [CHURN_PER_S] [SOAK_SECONDS]"
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
(cd "$root" && go build -o "$tmp/rusage" ./bench/rusage)
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
spin1=$!
"$bin" workload spin -loop -threads 2 >/dev/null &
spin2=$!
pids+=($spin1 $spin2)
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

# measure NAME SECONDS CMD...: runs CMD for SECONDS, prints its figures and
# leaves "cpu hwm" in $tmp/NAME.fig: CPU over its whole life and peak RSS,
# from its rusage at exit (bench/rusage), so that the work each does after
# the SIGINT counts (perf record's build-id pass over its file; the agent's
# last window); CPU at the SIGINT is printed too.
measure() {
	local name=$1 secs=$2; shift 2
	rm -f "$tmp/$name.ru" "$tmp/$name.ru.pid"
	"$tmp/rusage" "$tmp/$name.ru" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" &
	local w=$!
	for _ in $(seq 100); do [[ -s $tmp/$name.ru.pid ]] && break; sleep 0.01; done
	local p
	p=$(cat "$tmp/$name.ru.pid")
	local trend="" cpu=0
	for ((s = 1; s <= secs; s++)); do
		sleep 1
		kill -0 "$p" 2>/dev/null || { cat "$tmp/$name.err"; die "$name ended early"; }
		cpu=$(cpu_s "$p")
		if ((s % (secs / 10 > 0 ? secs / 10 : 1) == 0)); then
			trend+=" $(awk -v k="$(rss_kb "$p")" 'BEGIN { printf "%.0f", k / 1024 }')"
		fi
	done
	kill -INT "$p"
	wait "$w" || true
	local total hwm
	read -r total hwm <"$tmp/$name.ru" || die "$name: no rusage"
	printf '%-6s %5d s  cpu %7.2f s (%5.2f%% of one CPU; %.2f s at the SIGINT)  peak RSS %6.1f MiB  RSS every tenth (MiB):%s\n' \
		"$name" "$secs" "$total" "$(awk -v c="$total" -v s="$secs" 'BEGIN { print 100 * c / s }')" "$cpu" \
		"$(awk -v k="$hwm" 'BEGIN { print k / 1024 }')" "$trend"
	echo "$total $hwm" >"$tmp/$name.fig"
}

echo "host: $(nproc) CPUs, load: 2 x spin -threads 2, churn $CHURN processes/s"
measure perf "$SECS" perf record -F 19 -a -g -o "$tmp/perf.data" --quiet
measure cctop "$SECS" "$bin" agent --all --otlp "127.0.0.1:$port" --otlp-insecure
grep -h "stopped after" "$tmp/cctop.err" | sed 's/^/       /' || { cat "$tmp/cctop.err"; die "the agent did not stop cleanly"; }
read -r pcpu phwm <"$tmp/perf.fig"
read -r ccpu chwm <"$tmp/cctop.fig"
awk -v a="$ccpu" -v b="$pcpu" 'BEGIN { printf "cctop/perf CPU: %.2fx\n", (b > 0 ? a / b : 0) }'
awk -v a="$chwm" -v b="$phwm" 'BEGIN { printf "cctop/perf peak RSS: %.2fx\n", (b > 0 ? a / b : 0) }'
if ((SOAK > 0)); then
	# The agent alone for SOAK seconds under the same churn, the busy
	# threads stopped (what else runs on the host is profiled too): its
	# RSS every tenth of the run is the line that must stay flat.
	kill $spin1 $spin2 2>/dev/null || true
	measure soak "$SOAK" "$bin" agent --all --otlp "127.0.0.1:$port" --otlp-insecure
	grep -h "stopped after" "$tmp/soak.err" | sed 's/^/       /'
	grep -h "^cctop agent: window " "$tmp/soak.err" | tail -1 | sed 's/^/       last window: /'
fi
