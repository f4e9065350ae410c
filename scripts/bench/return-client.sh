#!/usr/bin/env bash
# The return wave's hand-written HTTP/1.1 pool beside async-http-client (issue #63: "use a
# well-kept client where it serves … a hand-written one must earn its place by a benchmark"):
# each sends the same burst of N GETs to nginx (one worker, answering every path itself) over at
# most C keep-alive connections on one event loop, runs alternating; then Fanout's HTTP/2 pool
# to nginx's h2c port. Prints each run and the medians: requests a second (nginx's one worker
# may bound both) and the client's CPU a request (getrusage of the client process alone: the
# figure that says what a wave of that rate costs the machine sending it).
#
#   scripts/bench/return-client.sh [RUNS=5] [N=100000] [C=64]
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib/peers.sh
runs=${1:-5}
n=${2:-100000}
c=${3:-64}
release_returnbench
h2_port=$(free_port)
# nginx's HTTP/2 over cleartext (prior knowledge) on a second port of the same server.
start_nginx "server { listen 127.0.0.1:$h2_port http2; location / { return 200 \"ok\"; } }"
wait_port "$h2_port"
url=http://127.0.0.1:$nginx_port
echo "returnbench -n $n -c $c against nginx (1 worker), $runs runs alternating" >&2
for run in $(seq "$runs"); do
    "$returnbench" fanout --url "$url" --path /launch/1 -n "$n" -c "$c" | tee -a "$work/fanout.txt"
    "$returnbench" ahc --url "$url" --path /launch/1 -n "$n" -c "$c" | tee -a "$work/ahc.txt"
    "$returnbench" fanout --url "http://127.0.0.1:$h2_port" --path /launch/1 -n "$n" -c 1 --http 2 \
        | sed 's/^fanout:/fanout-h2:/' | tee -a "$work/fanout-h2.txt"
done
python3 - "$work" <<'PY'
import re, statistics, sys
for name in ("fanout", "ahc", "fanout-h2"):
    rates, cpus = [], []
    for line in open(f"{sys.argv[1]}/{name}.txt"):
        m = re.search(r"([0-9]+) req/s, ([0-9.]+) µs CPU", line)
        rates.append(int(m.group(1))); cpus.append(float(m.group(2)))
    print(f"{name:10s} median {statistics.median(rates):>8,.0f} req/s (range {min(rates):,}–{max(rates):,}), "
          f"{statistics.median(cpus):.2f} µs CPU a request (range {min(cpus):.2f}–{max(cpus):.2f})")
PY
