#!/usr/bin/env bash
# The mock FCM's capacity beside nghttpd's: h2load → `fanout sink --service fcm` (the send's
# checks on, --no-auth, no quota and no device rates: h2load sends one body, so one device,
# again and again; one event loop) versus h2load → nghttpd, runs alternating, in two pairs:
#   h2c  -c 8 -m 100 -t 1      eight connections of 100 streams (FCM's), cleartext
#   tls  -c 8 -m 100 -t 1      the same over TLS (ALPN h2; one self-signed certificate each)
# and prints each pair's median ratio. The body is a data message to one registration token
# with Android's delivery fields, 300 bytes (firebase-admin's shape).
#
#   [FANOUT=BINARY] scripts/bench/fcm-sink.sh [RUNS=5] [REQUESTS=200000]
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib/peers.sh
. scripts/lib/ratios.sh
paired_start "$@"
body=$work/message.json
printf '%s' '{"message":{"token":"fcm-registration-token-0123456789abcdefghijklmnopqrstuvwxyz-0123456789abcdefghijklmnopqrstuvwxyz","data":{"match":"42","score":"3:1"},"notification":{"title":"Goal!","body":"Spain 3:1 Italy"},"android":{"priority":"high","ttl":"3600s","collapse_key":"match-42"}}}' >"$body"
start_nghttpd
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=localhost \
    -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null
nghttpd_tls_port=$(free_port)
nghttpd -d "$work/www" "$nghttpd_tls_port" "$work/key.pem" "$work/cert.pem" >/dev/null 2>&1 &
pids+=($!)
wait_port "$nghttpd_tls_port"
fcm=(--service fcm --no-auth --fcm-quota off --fcm-device-limits off)
start_sink fcm-tls "${fcm[@]}" --tls-cert "$work/cert.pem" --tls-key "$work/key.pem"
sink_tls_port=$sink_port
start_sink fcm "${fcm[@]}"

# rate URL H2LOAD-SHAPE...: h2load's requests per second against URL, every answer a 200.
rate() {
    local url=$1 out
    shift
    out=$(h2load -n "$requests" "$@" -t 1 -d "$body" -H 'authorization: Bearer any' \
        -H 'content-type: application/json' "$url")
    grep -q "status codes: $requests 2xx" <<<"$out" || { echo "h2load: not every answer was 2xx:" >&2; echo "$out" >&2; exit 1; }
    awk '/^finished in/ {print $4}' <<<"$out"
}

pair() {
    local name=$1 a_url=$2 b_url=$3
    shift 3
    echo
    echo "$name: h2load $* -t 1"
    local nghttpd=(rate "$a_url" "$@") sink=(rate "$b_url" "$@")
    paired_runs "$runs" 14 2 nghttpd "fanout sink (fcm)" nghttpd sink
    read -r median count _ _ <<<"$paired"
    echo "$name: fanout sink --service fcm / nghttpd = $median (median of $count)"
}

send=/v1/projects/fanout-fcm/messages:send
pair h2c "http://127.0.0.1:$nghttpd_port/index.html" "http://127.0.0.1:$sink_port$send" -c 8 -m 100
pair tls "https://127.0.0.1:$nghttpd_tls_port/index.html" "https://127.0.0.1:$sink_tls_port$send" -c 8 -m 100
