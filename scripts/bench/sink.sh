#!/usr/bin/env bash
# The mock APNs sink's capacity beside nghttpd's: h2load → `fanout sink`
# (validation on, auth off, no injected latency, one event loop) versus h2load → nghttpd, body
# fixtures/poll.json, runs alternating, in three pairs:
#   h2c  -c 8 -m 100 -t 1      eight connections of 100 streams, cleartext
#   tls  -c 8 -m 100 -t 1      the same over TLS (both with one self-signed P-256 certificate)
#   1x1000 -c 1 -m 1000 -t 1   one connection of 1000 streams (APNs' limit), cleartext
# and prints each pair's median ratio (target ≥ 1.0). Then the same sink with 1 s latency on
# every answer under h2load -c 100 -m 1000 (100,000 streams in flight), 300,000 requests and
# then twice 900,000 on the same sink: its peak RSS after each, the bytes per in-flight stream,
# and the mean number in flight over the run (Little's law: requests × 1 s / elapsed, lower
# than the 100,000 of the steady state by the ramps).
#
#   [FANOUT=BINARY] scripts/bench/sink.sh [RUNS=5] [REQUESTS=200000]
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib/peers.sh
. scripts/lib/ratios.sh
paired_start "$@"
start_nghttpd
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=localhost \
    -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null
nghttpd_tls_port=$(free_port)
nghttpd -d "$work/www" "$nghttpd_tls_port" "$work/key.pem" "$work/cert.pem" >/dev/null 2>&1 &
pids+=($!)
wait_port "$nghttpd_tls_port"
# The cleartext sink last: its port stays in `sink_port`, which the pairs below use.
start_sink sink-tls --tls-cert "$work/cert.pem" --tls-key "$work/key.pem"
sink_tls_port=$sink_port
start_sink sink

token=$(printf 'ab%.0s' $(seq 32))
# rate URL H2LOAD-SHAPE...: h2load's requests per second against URL.
rate() { h2load_rate "$requests" "$body" "$@"; }

# pair NAME NGHTTPD-URL SINK-URL H2LOAD-SHAPE...: RUNS alternating runs and their median ratio.
pair() {
    local name=$1 a_url=$2 b_url=$3
    shift 3
    echo
    echo "$name: h2load $* -t 1"
    local nghttpd=(rate "$a_url" "$@") sink=(rate "$b_url" "$@")
    paired_runs "$runs" 14 2 nghttpd "fanout sink" nghttpd sink
    read -r median count _ _ <<<"$paired"
    echo "$name: fanout sink / nghttpd = $median (median of $count; target >= 1.0)"
}

pair h2c "http://127.0.0.1:$nghttpd_port/index.html" "http://127.0.0.1:$sink_port/3/device/$token" -c 8 -m 100
pair tls "https://127.0.0.1:$nghttpd_tls_port/index.html" "https://127.0.0.1:$sink_tls_port/3/device/$token" \
    -c 8 -m 100
pair 1x1000 "http://127.0.0.1:$nghttpd_port/index.html" "http://127.0.0.1:$sink_port/3/device/$token" -c 1 -m 1000

echo
echo "100,000 streams in flight: fanout sink --latency fixed:1s, h2load -c 100 -m 1000 -t 1"
# h2load's 100 connections open at once, before any sends a request: above the sink's 64 idle
# connections an address may hold by default (a shared sink's defence, docs/sink.md).
start_sink latency --latency fixed:1s --max-idle-connections-per-peer 256
latency_port=$sink_port
latency_pid=$sink_pid
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
