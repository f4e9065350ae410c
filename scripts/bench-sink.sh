#!/usr/bin/env bash
# The mock APNs sink's capacity beside nghttpd's (issue 5's target): h2load → `fanout sink`
# (validation on, auth off, no injected latency, one event loop) versus h2load → nghttpd,
# -c 8 -m 100 -t 1, body fixtures/poll.json, alternating runs; prints the median ratio. Then
# the same sink with 1 s latency on every answer under h2load -c 100 -m 1000 (100,000 streams
# in flight), 300,000 requests and then twice 900,000 on the same sink: its peak RSS after
# each, the bytes per in-flight stream, and the mean number in flight over the run (Little's
# law: requests × 1 s / elapsed, lower than the 100,000 of the steady state by the ramps).
#
#   [FANOUT=BINARY] scripts/bench-sink.sh [RUNS=5] [REQUESTS=200000]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
requests=${2:-200000}
. scripts/lib/peers.sh

release_fanout
body=$PWD/fixtures/poll.json
start_nghttpd
sink_port=$(free_port)
"$fanout" sink --listen "127.0.0.1:$sink_port" >"$work/sink.out" 2>/dev/null &
pids+=($!)
wait_port "$sink_port"

token=$(printf 'ab%.0s' $(seq 32))
rate() {
    local out
    out=$(h2load -n "$requests" -c 8 -m 100 -t 1 -d "$body" -H 'apns-topic: com.example.app' \
        -H 'apns-push-type: alert' "$1")
    grep -q "$requests succeeded, 0 failed" <<<"$out" || { echo "h2load: not every request succeeded:" >&2; echo "$out" >&2; exit 1; }
    grep -q "status codes: $requests 2xx" <<<"$out" || { echo "h2load: not every answer was 2xx:" >&2; echo "$out" >&2; exit 1; }
    awk '/^finished in/ {print $4}' <<<"$out"
}

printf '%-4s %14s %14s %8s\n' run nghttpd "fanout sink" ratio
: >"$work/ratios"
for run in $(seq "$runs"); do
    a=$(rate "http://127.0.0.1:$nghttpd_port/index.html")
    b=$(rate "http://127.0.0.1:$sink_port/3/device/$token")
    ratio=$(python3 -c "print(f'{$b / $a:.2f}')")
    printf '%-4s %14.0f %14.0f %8s\n' "$run" "$a" "$b" "$ratio"
    echo "$ratio" >>"$work/ratios"
done
python3 - "$work/ratios" <<'PY'
import statistics, sys
ratios = [float(line) for line in open(sys.argv[1])]
print(f"\nsink, -c 8 -m 100: fanout sink / nghttpd = {statistics.median(ratios):.2f} (median; target >= 0.50)")
PY

echo
echo "100,000 streams in flight: fanout sink --latency fixed:1s, h2load -c 100 -m 1000 -t 1"
latency_port=$(free_port)
"$fanout" sink --listen "127.0.0.1:$latency_port" --latency fixed:1s >"$work/latency.out" 2>/dev/null &
latency_pid=$!
pids+=("$latency_pid")
wait_port "$latency_port"
idle=$(awk '/VmRSS/ {print $2}' "/proc/$latency_pid/status")
printf '%-10s %12s %10s %14s %16s\n' requests elapsed "mean in flight" "peak RSS (MB)" "bytes/in-flight"
for total in 300000 900000 900000; do
    out=$(h2load -n "$total" -c 100 -m 1000 -t 1 -d "$body" -H 'apns-topic: com.example.app' \
        "http://127.0.0.1:$latency_port/3/device/$token")
    grep -q "status codes: $total 2xx" <<<"$out" || { echo "h2load: not every answer was 2xx:" >&2; echo "$out" >&2; exit 1; }
    elapsed=$(awk '/^finished in/ {print $3}' <<<"$out" | tr -d 's,')
    peak=$(awk '/VmHWM/ {print $2}' "/proc/$latency_pid/status")
    python3 -c "
total, elapsed, peak, idle = $total, $elapsed, $peak, $idle
in_flight = total * 1.0 / elapsed
print(f'{total:<10} {elapsed:>11.2f}s {in_flight:>10,.0f} {peak / 1024:>14.1f} {(peak - idle) * 1024 / 100000:>16,.0f}')"
done
echo "(the bound: peak RSS levels off instead of growing with requests; bytes per in-flight stream = (peak - idle RSS) / 100,000)"
