#!/usr/bin/env bash
# A sharded open-model run against one run of the same rate, on this machine: PAIRS alternating pairs of
#   A. scripts/cluster-local.sh 4 at a total of RATE for 10 s (4 `fanout send` shards, one sink)
#   B. one `fanout send` at RATE for 10 s against a `fanout sink`
# Prints, per pair, the merged run's achieved rate in each whole second after the first (the
# worst gap to RATE), the start skew, and both sides' p50 and p99; then the medians.
#
#   [FANOUT=BINARY] scripts/bench/cluster.sh [PAIRS=5] [RATE=20000]
set -euo pipefail
cd "$(dirname "$0")/../.."
pairs=${1:-5}
rate=${2:-20000}
. scripts/lib/build.sh
release_fanout
results_folder cluster
send=(--generate 1000000 --template fixtures/poll.json --topic com.example.app --rate "$rate" --duration 10s)

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
single() {
    local folder=$1 port
    port=$(free_port)
    "$FANOUT" sink --listen "127.0.0.1:$port" >/dev/null 2>&1 &
    local sink=$!
    for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
    "$FANOUT" send --endpoint "http://127.0.0.1:$port" "${send[@]}" --output "$folder" >/dev/null || true
    kill $sink
    wait $sink 2>/dev/null || true
}

for pair in $(seq "$pairs"); do
    # A refused merge (a generator that fell behind) is reported below as such, not dropped.
    OUTPUT=$out/pair-$pair/shards bash scripts/cluster-local.sh 4 "${send[@]}" >"$out/pair-$pair.log" 2>&1 \
        || echo "pair $pair: scripts/cluster-local.sh exit status $? ($out/pair-$pair.log)"
    single "$out/pair-$pair/single"
done

python3 - "$out" "$pairs" "$rate" <<'PY'
import json, statistics, sys
out, pairs, rate = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
rows = []
print(f"{'pair':>4} {'worst second gap':>17} {'skew ms':>8} {'shards p50':>11} {'one p50':>8} {'shards p99':>11} {'one p99':>8}")
for pair in range(1, pairs + 1):
    merged = json.load(open(f"{out}/pair-{pair}/shards/merged/summary.json"))
    single = json.load(open(f"{out}/pair-{pair}/single/summary.json"))
    if not merged["valid"] or not single["valid"]:
        reasons = merged["invalid_reasons"] + single["invalid_reasons"]
        print(f"{pair:>4} INVALID, left out: {reasons[0]}")
        continue
    # Whole seconds after the first, before the schedule's end (second 9 is its last).
    seconds = [i["completed"] for i in merged["intervals"] if 1 <= i["second"] <= 8]
    gap = max(abs(c / rate - 1) for c in seconds)
    row = (gap, merged["start_skew_ms"], merged["latency_ms"]["p50"], single["latency_ms"]["p50"],
           merged["latency_ms"]["p99"], single["latency_ms"]["p99"])
    rows.append(row)
    print(f"{pair:>4} {gap:>16.2%} {row[1]:>8.1f} {row[2]:>11.2f} {row[3]:>8.2f} {row[4]:>11.2f} {row[5]:>8.2f}")
m = [statistics.median(r[i] for r in rows) for i in range(6)]
print(f"{'med':>4} {m[0]:>16.2%} {m[1]:>8.1f} {m[2]:>11.2f} {m[3]:>8.2f} {m[4]:>11.2f} {m[5]:>8.2f}")
print(f"{len(rows)} valid pairs of {pairs}; worst second over them: {max(r[0] for r in rows):.2%} from {rate:,.0f}/s (target: within 1%); "
      f"largest skew {max(r[1] for r in rows):.1f} ms (target: under 10 ms)")
PY
echo "results: $out/"
