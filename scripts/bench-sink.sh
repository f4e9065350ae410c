#!/usr/bin/env bash
# The mock APNs sink's capacity beside nghttpd's (issue 5's target): h2load → `fanout sink`
# (validation on, auth off, no injected latency, one event loop) versus h2load → nghttpd,
# -c 8 -m 100 -t 1, body fixtures/poll.json, alternating runs; prints the median ratio.
#
#   scripts/bench-sink.sh [RUNS=5] [REQUESTS=200000]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
requests=${2:-200000}
. scripts/lib/peers.sh

swift build -c release --product fanout >/dev/null
fanout=$PWD/.build/release/fanout
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
