#!/usr/bin/env bash
# A shared sink's own figures against forged timed apns-ids (issue #49): does a client that
# forges send times move what the sink reports of itself?
#
# RUNS alternating pairs, each side on a fresh `fanout sink --admin` (its figures start empty):
#   with     Tests/FanoutCommandTests/Peers/forged_timing.py PORT 1000 (ids an hour old, this
#            host's tag), then `fanout send --generate COUNT --apns-id timed --rate RATE`
#   without  the same send alone
# and from each sink's /stats: untimed_ids and own_delays.from_send_ms (count, p50, p99). The
# target: the medians of p50 and p99 with forged ids within 1 ms of those without, and every
# believed id the send's (count == COUNT).
#
#   [FANOUT=BINARY] scripts/bench/shared-sink.sh [RUNS=5] [COUNT=20000] [RATE=5000]
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-5}
count=${2:-20000}
rate=${3:-5000}
. scripts/lib/peers.sh

release_fanout
body=$PWD/fixtures/poll.json
forger=$PWD/Tests/FanoutCommandTests/Peers/forged_timing.py

# side NAME FORGED: one run on a fresh sink; appends "count p50 p99 untimed" to $work/NAME.
side() {
    local name=$1 forged=$2 out=$work/sink.out stats=""
    start_admin_sink "$out"
    local pid=$sink_pid port=$sink_port admin=$admin_port
    if [ "$forged" = yes ]; then python3 "$forger" "$port" 1000 >/dev/null; fi
    "$fanout" send --endpoint "http://127.0.0.1:$port" --template "$body" --topic com.example.app \
        --generate "$count" --apns-id timed --rate "$rate" --duration "$((count / rate))s" >/dev/null
    # The sink's loops hand their figures over once a second.
    for _ in $(seq 50); do
        stats=$(curl -s --max-time 5 "http://127.0.0.1:$admin/stats")
        python3 -c 'import json,sys; d=json.loads(sys.argv[1]); sys.exit(d["own_delays"]["from_send_ms"]["count"] < int(sys.argv[2]))' \
            "$stats" "$count" && break
        sleep 0.2
    done
    python3 -c 'import json,sys; d=json.loads(sys.argv[1]); f=d["own_delays"]["from_send_ms"]; print(int(f["count"]), f["p50"], f["p99"], d["untimed_ids"])' \
        "$stats" >>"$work/$name"
    kill -TERM "$pid"
    wait "$pid" 2>/dev/null || true
    forget "$pid"
}

printf '%-4s %-8s %8s %10s %10s %8s\n' run side count "p50 ms" "p99 ms" untimed
: >"$work/with"
: >"$work/without"
for run in $(seq "$runs"); do
    side with yes
    side without no
    for name in with without; do
        read -r n p50 p99 untimed < <(tail -1 "$work/$name")
        printf '%-4s %-8s %8s %10.3f %10.3f %8s\n' "$run" "$name" "$n" "$p50" "$p99" "$untimed"
    done
done
python3 - "$work/with" "$work/without" "$count" <<'PY'
import statistics, sys
rows = [[list(map(float, line.split())) for line in open(path)] for path in sys.argv[1:3]]
count = int(sys.argv[3])
for index, name in ((1, "p50"), (2, "p99")):
    with_, without = (statistics.median(row[index] for row in side) for side in rows)
    print(f"{name}: median {with_:.3f} ms with forged ids, {without:.3f} ms without: "
          f"{with_ - without:+.3f} ms (target within 1 ms)")
counts = [int(row[0]) for side in rows for row in side]
print(f"believed ids a run: {min(counts)}..{max(counts)} (the send's {count}); "
      f"untimed with forged ids: {sorted({int(row[3]) for row in rows[0]})}")
PY
