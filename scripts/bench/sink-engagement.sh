#!/usr/bin/env bash
# The sink's throughput with its devices engaging beside the same fleet without (issue #63 asks
# ≥ 0.9×), and beside a sink without a fleet: h2load -c 8 -m 100 -t 1 over 10,000 distinct
# device tokens, against `fanout sink` (one event loop, auth off) with a fleet (a log-normal
# delivery delay, as scripts/bench/sink-devices.sh's), and the same with its devices engaging —
# 3% opening an hour later by OK (60%) or NOK (30%), four requests an open, held as return
# events — runs alternating. Two bodies: the poll without mutable-content (only the opens, held:
# engagement's own part at the sink) and fixtures/poll.json (mutable-content: every delivery's
# media download goes to nginx at once, so the return wave runs beside the sink on the same two
# cores). Prints each pair and the median ratios; the engaging sink's return-wave lines.
#
# RETURN_HTTP=2 sends the wave over HTTP/2 (nginx's h2c port, `--return-http 2`).
#
#   [FANOUT=BINARY] [RETURN_HTTP=1.1|2] scripts/bench/sink-engagement.sh [RUNS=5] [REQUESTS=200000]
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib/peers.sh
. scripts/lib/ratios.sh
paired_start "$@"

# nginx answering every path itself: the backend the media downloads go to (h2c on a second port).
h2_port=$(free_port)
start_nginx "server { listen 127.0.0.1:$h2_port http2; location / { return 200 \"ok\"; } }"
wait_port "$h2_port"
return_http=${RETURN_HTTP:-1.1}
backend_port=$nginx_port
[ "$return_http" = 2 ] && backend_port=$h2_port

fleet=(--device-delay lognormal:300ms,0.5)
engaging=("${fleet[@]}" --device-open 3% --device-open-after fixed:1h --device-actions OK=60%,NOK=30%
    --device-requests-per-open 4 --return-to "http://127.0.0.1:$backend_port" --return-http "$return_http")
start_sink plain
plain_port=$sink_port
start_sink fleet "${fleet[@]}"
fleet_port=$sink_port
start_sink engaging "${engaging[@]}"
engaging_port=$sink_port
engaging_pid=$sink_pid

python3 - "$plain_port" "$fleet_port" "$engaging_port" "$work" <<'PY'
import sys
for name, port in (("plain", sys.argv[1]), ("fleet", sys.argv[2]), ("engaging", sys.argv[3])):
    with open(f"{sys.argv[4]}/{name}.uris", "w") as out:
        for i in range(10000):
            print(f"http://127.0.0.1:{port}/3/device/{i:064x}", file=out)
PY
sed 's/,"mutable-content":1//' "$body" >"$work/plain-poll.json"

# rate URIS BODY: h2load's requests a second, every request answered.
rate() {
    local out
    out=$(h2load -n "$requests" -c 8 -m 100 -t 1 -d "$2" -H 'apns-topic: com.example.app' \
        -H 'apns-push-type: alert' -i "$1")
    grep -q "$requests done, $requests succeeded" <<<"$out" || { echo "h2load: not every request succeeded:" >&2; echo "$out" >&2; exit 1; }
    awk '/^finished in/ {print $4}' <<<"$out"
}

echo "h2load -n $requests -c 8 -m 100 -t 1, 10,000 tokens"
echo "the poll without mutable-content: the opens held, nothing sent during the fan-out"
fleet_rate=(rate "$work/fleet.uris" "$work/plain-poll.json")
engaged=(rate "$work/engaging.uris" "$work/plain-poll.json")
paired_runs "$runs" 14 3 "fleet" "engaging" fleet_rate engaged
read -r median count low high <<<"$paired"
echo "median ratio engaging ÷ fleet, without media: $median over $count runs ($low … $high); target ≥ 0.9"
plain=(rate "$work/plain.uris" "$work/plain-poll.json")
paired_runs "$runs" 14 3 "no fleet" "engaging" plain engaged
read -r median count low high <<<"$paired"
echo "median ratio engaging ÷ no fleet, without media: $median over $count runs ($low … $high)"

echo
echo "fixtures/poll.json (mutable-content): every delivery's media download sent to nginx during the fan-out"
fleet_rate=(rate "$work/fleet.uris" "$body")
engaged=(rate "$work/engaging.uris" "$body")
paired_runs "$runs" 14 3 "fleet" "engaging" fleet_rate engaged
read -r median count low high <<<"$paired"
echo "median ratio engaging ÷ fleet, with media downloads: $median over $count runs ($low … $high); target ≥ 0.9"
kill -INT "$engaging_pid"
wait "$engaging_pid" 2>/dev/null || true
forget "$engaging_pid"
echo
grep -A8 "^return wave" "$work/engaging.out" || echo "(the engaging sink printed no return-wave lines)"
