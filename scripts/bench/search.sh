#!/usr/bin/env bash
# `fanout search` against two endpoints whose true capacity is known:
#
#   1. a `fanout sink --connection-rate 5000/s` process, searched over --endpoint with 4
#      connections: each connection's answers go out at most 5,000 a second, so 20,000/s;
#   2. the embedded sink with --sink-latency fixed:50ms, 2 connections × 100 streams: 200
#      requests in flight, each 50 ms, so 4,000/s.
#
# Both with --slo 'p99 < 100ms', 10 s steps after a 2 s warm-up, 5% precision. The answers
# come from the steps' measurements (the search never reads the sink's settings); each must be
# within 5% of its capacity. Prints both step tables, the answers and their gaps; exits 1 when
# either is further off. The search folders are kept under results/bench-search-*/.
#
#   [FANOUT=BINARY] scripts/bench/search.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib/peers.sh

release_fanout
results_folder search

sink_port=$(free_port)
"$fanout" sink --listen "127.0.0.1:$sink_port" --connection-rate 5000/s >"$work/sink.out" 2>&1 &
pids+=($!)
wait_port "$sink_port"

# Runs a search into $out/$1 (the rest are its options); prints its answer, per second.
search() {
    local name=$1
    shift
    "$fanout" search --slo 'p99 < 100ms' --output "$out/$name" "$@" || true
    python3 -c "import json,sys; a=json.load(open('$out/$name/search.json'))['answer']; print(a['rate_per_second'] if a and a.get('kind')=='found' else 'none')" >"$work/$name"
}

echo "== 1. fanout sink --connection-rate 5000/s, 4 connections (capacity 20,000/s)"
search connection-rate --endpoint "http://127.0.0.1:$sink_port" --template fixtures/poll.json \
    --topic com.example.app --connections 4
echo
echo "== 2. embedded sink, --sink-latency fixed:50ms, 2 connections × 100 streams (capacity 4,000/s)"
search latency --sink-latency fixed:50ms --connections 2 --streams 100

status=0
verdict() {
    local name=$1 capacity=$2
    python3 - "$(cat "$work/$name")" "$capacity" "$name" <<'PY' || status=1
import sys
answer, capacity, name = sys.argv[1], float(sys.argv[2]), sys.argv[3]
if answer == "none":
    print(f"{name}: no answer (capacity {capacity:,.0f}/s): FAIL")
    sys.exit(1)
gap = float(answer) / capacity - 1
ok = abs(gap) <= 0.05
print(f"{name}: answered {float(answer):,.0f}/s for a capacity of {capacity:,.0f}/s: {gap:+.1%} {'pass' if ok else 'FAIL (over 5%)'}")
sys.exit(0 if ok else 1)
PY
}
echo
verdict connection-rate 20000
verdict latency 4000
echo "searches: $out/"
exit $status
