#!/usr/bin/env bash
# FanoutHTTP2 against nghttp2's C programs, side by side in the same run:
#   server: h2load → Fanout's minimal server (Benchmarks' h2bench serve, one event loop) versus
#           h2load → nghttpd, -c 8 -m 100 -t 1, body fixtures/poll.json; then -c 1 -m 1000
#           against the Fanout server's own -m 100 figure;
#   client: Fanout's client (h2bench load, one event loop) → nghttpd versus h2load → nghttpd,
#           same connections, streams and body.
# Runs alternate (A B A B …) and the median ratio is reported, as shared machines drift.
#
#   [H2BENCH=BINARY] scripts/bench/http2.sh [RUNS=5] [REQUESTS=200000]
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-5}
requests=${2:-200000}
. scripts/lib/peers.sh

release_h2bench
body=$PWD/fixtures/poll.json
start_nghttpd
fanout_port=$(free_port)
"$h2bench" serve --port "$fanout_port" >/dev/null &
pids+=($!)
wait_port "$fanout_port"

# h2load's req/s, failing loudly if any request did not succeed.
h2load_rate() {
    local out
    out=$(h2load -n "$requests" "$@" -t 1 -d "$body" -H 'apns-topic: com.example.app' -H 'apns-push-type: alert')
    grep -q "$requests succeeded, 0 failed" <<<"$out" || { echo "h2load: not every request succeeded:" >&2; echo "$out" >&2; exit 1; }
    awk '/^finished in/ {print $4}' <<<"$out"
}
fanout_rate() {
    local out
    out=$("$h2bench" load --port "$nghttpd_port" --path /index.html -n "$requests" "$@" -d "$body" \
        -H 'apns-topic: com.example.app' -H 'apns-push-type: alert')
    grep -q "$requests succeeded, 0 failed" <<<"$out" || { echo "h2bench load: not every request succeeded:" >&2; echo "$out" >&2; exit 1; }
    awk '/^finished in/ {print $4}' <<<"$out"
}

printf '%-4s %14s %14s %14s %14s | %14s %14s\n' run "nghttpd m100" "fanout m100" "nghttpd m1000" "fanout m1000" "h2load client" "fanout client"
: >"$work/rates"
for run in $(seq "$runs"); do
    a=$(h2load_rate -c 8 -m 100 "http://127.0.0.1:$nghttpd_port/index.html")
    b=$(h2load_rate -c 8 -m 100 "http://127.0.0.1:$fanout_port/3/device/ab")
    # Each ratio compares neighbours: b/a, d/b, d/c, f/e.
    d=$(h2load_rate -c 1 -m 1000 "http://127.0.0.1:$fanout_port/3/device/ab")
    c=$(h2load_rate -c 1 -m 1000 "http://127.0.0.1:$nghttpd_port/index.html")
    e=$(h2load_rate -c 8 -m 100 "http://127.0.0.1:$nghttpd_port/index.html")
    f=$(fanout_rate -c 8 -m 100)
    printf '%-4s %14.0f %14.0f %14.0f %14.0f | %14.0f %14.0f\n' "$run" "$a" "$b" "$c" "$d" "$e" "$f"
    echo "$a $b $c $d $e $f" >>"$work/rates"
done

python3 - "$work/rates" <<'PY'
import statistics, sys
rows = [list(map(float, line.split())) for line in open(sys.argv[1])]
def median(values): return statistics.median(values)
server = median([r[1] / r[0] for r in rows])
server1000 = median([r[3] / r[1] for r in rows])
server1000_vs_nghttpd = median([r[3] / r[2] for r in rows])
client = median([r[5] / r[4] for r in rows])
print()
print(f"server, -c 8 -m 100:   Fanout / nghttpd          = {server:.2f}  (target >= 0.60)")
print(f"server, -c 1 -m 1000:  Fanout m1000 / Fanout m100 = {server1000:.2f}  (target >= 0.80; vs nghttpd m1000: {server1000_vs_nghttpd:.2f})")
print(f"client, -c 8 -m 100:   Fanout / h2load (nghttpd)  = {client:.2f}  (target >= 0.80)")
PY
