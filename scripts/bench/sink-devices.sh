#!/usr/bin/env bash
# The sink's throughput with the device fleet on beside it off (issue #51 asks ≥ 0.9×): h2load
# -c 8 -m 100 -t 1 over 10,000 distinct device tokens (-i, one path a line, used in turn),
# body fixtures/poll.json, against `fanout sink` (one event loop, validation on, auth off) and
# the same with a fleet — 20% offline and back over 0–120 s, 10% low power, 2% disabled, 1%
# uninstalled, a log-normal delivery delay — runs alternating; prints each pair, the median
# ratio (fleet ÷ plain), and the fleet sink's closing summary (its Apple categories).
#
#   [FANOUT=BINARY] scripts/bench/sink-devices.sh [RUNS=5] [REQUESTS=200000]
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib/peers.sh
. scripts/lib/ratios.sh
paired_start "$@"
start_sink plain
plain_port=$sink_port
start_sink fleet --device-offline 20% --device-return uniform:0s-120s --device-low-power 10% --device-disabled 2% \
    --device-uninstalled 1% --device-delay lognormal:300ms,0.5
fleet_port=$sink_port
fleet_pid=$sink_pid

# uris PORT: 10,000 APNs paths of distinct tokens (h2load takes host and port from the first).
uris() {
    python3 - "$1" <<'PY'
import sys
for i in range(10000):
    print(f"http://127.0.0.1:{sys.argv[1]}/3/device/{i:064x}")
PY
}
uris "$plain_port" >"$work/plain.uris"
uris "$fleet_port" >"$work/fleet.uris"

# rate URIS: h2load's requests a second; every request must be answered (the fleet answers an
# uninstalled device's later requests 410, so not every status is 2xx).
rate() {
    local out
    out=$(h2load -n "$requests" -c 8 -m 100 -t 1 -d "$body" -H 'apns-topic: com.example.app' \
        -H 'apns-push-type: alert' -i "$1")
    # h2load counts a 4xx as failed: "done" with none errored or timed out is every one answered.
    grep -q "$requests done, .* 0 errored, 0 timeout" <<<"$out" || { echo "h2load: not every request was answered:" >&2; echo "$out" >&2; exit 1; }
    awk '/^finished in/ {print $4}' <<<"$out"
}

echo "h2load -n $requests -c 8 -m 100 -t 1, 10,000 tokens"
plain=(rate "$work/plain.uris")
fleet=(rate "$work/fleet.uris")
paired_runs "$runs" 14 3 plain "with fleet" plain fleet
read -r median count low high <<<"$paired"
echo "median ratio $median over $count runs ($low … $high); target ≥ 0.9"
kill -INT "$fleet_pid"
wait "$fleet_pid" 2>/dev/null || true
echo
grep -A4 "^devices:" "$work/fleet.out" || echo "(the fleet sink printed no devices line)"
