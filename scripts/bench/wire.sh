#!/usr/bin/env bash
# A wire with a length (issue #42), end to end: nghttpd (h2c, 1000 streams; its default 65,535-byte
# connection window, then -W 20's 1 MiB) behind Tests/FanoutCommandTests/Peers/delay_relay.py,
# which delays every byte DELAY_MS (40) each way: an 80 ms round trip. For each: `fanout probe`
# of the path (its flow test says what bound one connection), `fanout plan --devices 1000000
# --deadline 5m --probe`, `fanout send` of COUNT (30,000) notifications over 1 connection × 1000
# streams, and h2load the same through the same path, the peer. Then one table: physics (the
# least of the window given back a round trip — half of it and the body that crosses it, nghttp2's
# refill — and 1000 streams a round trip, at the probe's PING round trip), the plan's rate a
# connection, the probe's, the send's with its gap to the plan, and h2load's with the send's gap
# to it. On 2026-11-26 the issue measured 1,404/s for the send and 12,310/s planned.
#
#   [FANOUT=BINARY] [COUNT=30000] [DELAY_MS=40] scripts/bench/wire.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib/peers.sh

release_fanout
count=${COUNT:-30000}
delay=${DELAY_MS:-40}
body=$PWD/fixtures/poll.json
token=$(printf 'ab%.0s' $(seq 32))
# nghttpd answers 200 to a POST of a path that is a file.
mkdir -p "$work/www/3/device" && : >"$work/www/3/device/$token"
echo "$token" >"$work/token.txt"
awk -v token="$token" -v count="$count" 'BEGIN { for (i = 0; i < count; i++) print token }' >"$work/tokens.txt"

# wire NAME WINDOW-BYTES NGHTTPD-OPTIONS...: nghttpd behind the relay, then the probe, the plan,
# the send and h2load through it; the peers are stopped before the next case.
wire() {
    local name=$1 window=$2 server_port relay_port ready=$work/$1/ready case_pids=()
    shift 2
    mkdir -p "$work/$name"
    server_port=$(free_port)
    nghttpd --no-tls --max-concurrent-streams=1000 "$@" -d "$work/www" "$server_port" >/dev/null 2>&1 &
    case_pids+=($!)
    wait_port "$server_port"
    python3 Tests/FanoutCommandTests/Peers/delay_relay.py --target "127.0.0.1:$server_port" \
        --delay-ms "$delay" --ready-file "$ready" >/dev/null 2>"$work/$name/relay.err" &
    case_pids+=($!)
    pids+=("${case_pids[@]}")
    for _ in $(seq 100); do [ -s "$ready" ] && break; sleep 0.1; done
    [ -s "$ready" ] || { echo "delay_relay.py did not listen:" >&2; cat "$work/$name/relay.err" >&2; exit 1; }
    relay_port=$(sed 's/.*://' "$ready")
    local endpoint=http://127.0.0.1:$relay_port

    echo
    echo "== nghttpd ${*:-(defaults)}: a $window-byte connection window, $delay ms each way ($endpoint)"
    "$fanout" probe "$endpoint" --tokens "$work/token.txt" --template "$body" --topic com.example.app \
        --output "$work/$name/probe"
    echo
    "$fanout" plan --devices 1000000 --deadline 5m --probe "$work/$name/probe/probe.json" \
        --output "$work/$name/plan"
    echo
    "$fanout" send --endpoint "$endpoint" --tokens "$work/tokens.txt" --template "$body" \
        --topic com.example.app --connections 1 --streams 1000 --output "$work/$name/send" >"$work/$name/send.out"
    head -3 "$work/$name/send.out"
    echo
    h2load -n "$count" -c 1 -m 1000 -d "$body" -H 'apns-topic: com.example.app' -H 'apns-push-type: alert' \
        "$endpoint/3/device/$token" >"$work/$name/h2load.out"
    grep -q "status codes: $count 2xx" "$work/$name/h2load.out" || {
        echo "h2load: not every answer was 2xx:" >&2
        cat "$work/$name/h2load.out" >&2
        exit 1
    }
    echo "h2load -n $count -c 1 -m 1000:"
    grep -E "^(finished in|status codes|time for request)" "$work/$name/h2load.out"
    echo "$name $window $(awk '/^finished in/ {print $4}' "$work/$name/h2load.out")" >>"$work/rows"

    kill "${case_pids[@]}" 2>/dev/null || true
    wait "${case_pids[@]}" 2>/dev/null || true
}

wire default 65535
wire W20 $((2 ** 20 - 1)) -W 20

echo
python3 - "$work" "$delay" <<'PY'
import json, sys
work, delay = sys.argv[1], float(sys.argv[2])
body = 280  # fixtures/poll.json's bytes: each request's DATA
print(f"1 connection x 1000 streams, {delay:g} ms each way; rates a second; gaps in %")
header = ("nghttpd", "physics", "binds", "plan", "binds", "probe", "binds", "send", "send-plan", "h2load",
          "send/h2load")
print("%-8s %8s %8s %8s %18s %8s %8s %8s %10s %8s %12s" % header)
for line in open(f"{work}/rows"):
    name, window, h2load = line.split()
    window, h2load = int(window), float(h2load)
    probe = json.load(open(f"{work}/{name}/probe/probe.json"))
    plan = json.load(open(f"{work}/{name}/plan/plan.json"))
    send = json.load(open(f"{work}/{name}/send/summary.json"))
    rtt = probe["ping_round_trip_ms"]["p50"] / 1000
    # nghttp2 gives the window back once half is consumed: half of it, and the body that crossed it.
    bounds = {"window": (window // 2 + body) / rtt / body, "streams": 1000 / rtt}
    binds = min(bounds, key=bounds.get)
    planned = plan["connection_ceiling_per_second"]
    plan_bounds = {key: value for key, value in plan["bounds"].items()
                   if value is not None and key not in ("core", "network_interface")}  # a machine's, not a connection's
    flow = probe.get("flow") or {}
    sent = send["throughput_per_second"]
    print("%-8s %8.0f %8s %8.0f %18s %8s %8s %8.0f %+9.1f%% %8.0f %+11.1f%%" % (
        name, bounds[binds], binds, planned, min(plan_bounds, key=plan_bounds.get),
        "-" if "rate_per_second" not in flow else f"{flow['rate_per_second']:.0f}", flow.get("bound", "-"),
        sent, 100 * (sent / planned - 1), h2load, 100 * (sent / h2load - 1)))
PY
