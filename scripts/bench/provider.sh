#!/usr/bin/env bash
# The sink as the provider's instrument (`fanout sink --output`), measured:
#
# 1. Its cost: h2load → `fanout sink` without --output and → one with it (both listening at
#    once, runs alternating), in two shapes (-c 8 -m 100 and -c 1 -m 1000, cleartext, one event
#    loop each); each pair's median ratio (target >= 0.95).
# 2. A 1,000,000-notification `fanout send` measured from both ends: the sink ends by itself at
#    --expect, its fan-out time against the sender's elapsed time (target within 2%), its
#    stream use and card, and `fanout gate DIR --threshold 'violations == 0'`.
# 3. Memory on a long fan-out with 3% of tokens Unregistered (the card remembers each): the
#    sink's peak RSS after 1, 3 and 5 million notifications (the bound: it levels off).
#
# The allocations a notification with and without the instrument: scripts/cost.sh --instrument.
#
#   [FANOUT=BINARY] scripts/bench/provider.sh [RUNS=5] [REQUESTS=200000]
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib/peers.sh
. scripts/lib/ratios.sh
paired_start "$@"
token=$(printf 'ab%.0s' $(seq 32))

start_sink plain
plain_port=$sink_port
start_sink instrumented --output "$work/instrumented"
instrument_port=$sink_port

# rate PORT H2LOAD-SHAPE...: h2load's requests a second against the sink on PORT.
rate() {
    local port=$1
    shift
    h2load_rate "$requests" "$body" "http://127.0.0.1:$port/3/device/$token" "$@"
}

pair() {
    local name=$1
    shift
    echo
    echo "$name: h2load $* -t 1, $requests requests"
    local plain=(rate "$plain_port" "$@") instrumented=(rate "$instrument_port" "$@")
    paired_runs "$runs" 16 3 "without --output" "with --output" plain instrumented
    read -r median count _ _ <<<"$paired"
    echo "$name: with --output / without = $median (median of $count; target >= 0.95)"
}

pair 8x100 -c 8 -m 100
pair 1x1000 -c 1 -m 1000

echo
echo "1,000,000 notifications from fanout send, measured from both ends"
start_sink both --no-auth --expect 1000000 --output "$work/both"
port=$sink_port
"$fanout" send --endpoint "http://127.0.0.1:$port" --template "$body" --topic com.example.app \
    --generate 1000000 --output "$work/sender" >"$work/sender.out"
wait "$sink_pid" || { echo "the sink did not end well:" >&2; cat "$work/both.out" >&2; exit 1; }
grep -E '^(fan-out|delivery|streams|card|capacity|the sink)' "$work/both.out"
python3 - "$work/both/summary.json" "$work/sender/summary.json" <<'PY'
import json, sys
sink, sender = (json.load(open(path)) for path in sys.argv[1:3])
fanout = sink["provider"]["delivery"]["fanout_seconds"]
elapsed = sender["elapsed_seconds"]
print(f"accepted {sink['accepted']:,} (the sender: {sender['accepted']:,}); fan-out {fanout:.3f} s, "
      f"the sender's elapsed {elapsed:.3f} s: {100 * (fanout / elapsed - 1):+.2f}% (target within 2%)")
PY
"$fanout" gate "$work/both" --threshold 'violations == 0' --threshold 'accepted == 1000000'

echo
echo "Memory: one sink, 3% of tokens Unregistered, fanout send 1M then 2M twice (new tokens each time)"
start_sink memory --no-auth --error Unregistered:3% --output "$work/memory"
port=$sink_port
memory_pid=$sink_pid
printf '%-14s %14s %14s\n' notifications "peak RSS (MB)" "rejected"
total=0
seed=1
for count in 1000000 2000000 2000000; do
    "$fanout" send --endpoint "http://127.0.0.1:$port" --template "$body" --topic com.example.app \
        --generate "$count" --seed "$seed" --output "$work/memory-send-$seed" >/dev/null
    total=$((total + count))
    seed=$((seed + 1))
    peak=$(awk '/VmHWM/ {print $2}' "/proc/$memory_pid/status")
    rejected=$(python3 -c "import json; print(json.load(open('$work/memory-send-$((seed - 1))/summary.json'))['rejected'].get('Unregistered', 0))")
    printf '%-14s %14.1f %14s\n' "$total" "$(python3 -c "print($peak / 1024)")" "$rejected"
done
kill -TERM "$memory_pid"
wait "$memory_pid" 2>/dev/null || true
grep -E '^card' "$work/memory.out" || true
echo "(the card remembers rejected tokens in a fixed table of 2^21 slots; accepted ones not at all)"
