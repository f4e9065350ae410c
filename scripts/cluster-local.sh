#!/usr/bin/env bash
# A sharded run on this machine, as `fanout cluster render`'s Jobs run it on Kubernetes: N
# `fanout send --shard i/N --start-at T` processes against one `fanout sink`, then `fanout
# merge` and `fanout gate` on the merged folder — one verdict.
#
#   scripts/cluster-local.sh N [SEND-OPTIONS...]
#
# SEND-OPTIONS are `fanout send`'s (tokens, template, topic, load model, connections…); without
# any: --generate 1000000 --template fixtures/poll.json --topic com.example.app. The script adds
# --endpoint (its sink), --shard, --start-at and --output. The folders go to
# results/cluster-local-STAMP/ (shard-1 … shard-N, merged); the last line names it.
#
# Environment:
#   FANOUT=BINARY           the fanout to run (default: a release build of this tree)
#   START_IN=SECONDS        how far ahead T is, so every process is connected first (default 3)
#   THRESHOLDS=FILE         the gate's thresholds (default: failed == 0)
#   MERGE_OPTIONS="..."     more `fanout merge` options (--allow-partial, --max-skew D)
#   SINK_OPTIONS="..."      more `fanout sink` options (--latency fixed:80ms, --threads 2…)
#   OUTPUT=DIR              where the folders go
#   TIMEOUT=SECONDS         the longest a shard may run before it is killed (default 3600)
#
# A shard stopped by its --abort-on (exit status 6) stops the others (SIGTERM); the merge keeps
# the abort, and the gate fails naming it.
#
# Besides the merge and the gate, the sink's own counts (GET /stats) are checked against the
# merged ones: the fleet sent what the sink received, each notification once. Exit status: the
# gate's (0 passed, 1 a threshold failed, 2 the merge was refused or is invalid), or 1 when the
# sink and the merge disagree.
set -euo pipefail
cd "$(dirname "$0")/.."

[ $# -ge 1 ] && [[ $1 =~ ^[1-9][0-9]*$ ]] || {
    echo "usage: scripts/cluster-local.sh N [SEND-OPTIONS...]  (N shards, at least 1)" >&2
    exit 64
}
shards=$1
shift
[ $# -gt 0 ] || set -- --generate 1000000 --template fixtures/poll.json --topic com.example.app

. scripts/lib/build.sh
release_fanout
out=${OUTPUT:-results/cluster-local-$(date -u +%Y%m%d-%H%M%S)}
mkdir -p "$out"

pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
sink_port=$(free_port)
admin_port=$(free_port)
# shellcheck disable=SC2086 # SINK_OPTIONS is a list of options
"$fanout" sink --listen "127.0.0.1:$sink_port" --admin "127.0.0.1:$admin_port" ${SINK_OPTIONS:-} \
    >"$out/sink.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$sink_port") 2>/dev/null && break
    sleep 0.1
done

start=$(date -u -d "+${START_IN:-3} seconds" +%Y-%m-%dT%H:%M:%S.%3NZ)
echo "== $shards shards of fanout send $*, starting at $start"
senders=()
for i in $(seq "$shards"); do
    timeout -s KILL "${TIMEOUT:-3600}" "$fanout" send --endpoint "http://127.0.0.1:$sink_port" "$@" \
        --shard "$i/$shards" --start-at "$start" --output "$out/shard-$i" >"$out/shard-$i.log" 2>&1 &
    senders+=($!)
done
# As each shard ends, in the order they end. A shard its --abort-on stopped (exit status 6) ends
# the others with SIGTERM, as Kubernetes's podFailurePolicy FailJob does to the Job's pods
# (`fanout cluster render`): each writes its folder marked interrupted, and the merge says
# which shard aborted and why.
declare -A index_of
for i in $(seq "$shards"); do index_of[${senders[$((i - 1))]}]=$i; done
running=$shards
aborted=""
while [ "$running" -gt 0 ]; do
    status=0
    wait -n -p ended "${senders[@]}" || status=$?
    [ -n "${ended:-}" ] || break
    running=$((running - 1))
    i=${index_of[$ended]}
    echo "shard $i/$shards: exit status $status ($out/shard-$i.log)"
    if [ "$status" -eq 6 ] && [ -z "$aborted" ]; then
        aborted=$i
        echo "shard $i/$shards aborted (--abort-on): stopping the others"
        for pid in "${senders[@]}"; do if [ "$pid" != "$ended" ]; then kill -TERM "$pid" 2>/dev/null || true; fi; done
    fi
    remaining=()
    for pid in "${senders[@]}"; do if [ "$pid" != "$ended" ]; then remaining+=("$pid"); fi; done
    senders=("${remaining[@]}")
done

echo "== fanout merge"
shard_folders=()
for i in $(seq "$shards"); do [ -d "$out/shard-$i" ] && shard_folders+=("$out/shard-$i"); done
merge_status=0
# shellcheck disable=SC2086 # MERGE_OPTIONS is a list of options
"$fanout" merge "${shard_folders[@]}" --output "$out/merged" ${MERGE_OPTIONS:-} || merge_status=$?

sink_status=0
if [ -f "$out/merged/summary.json" ]; then
    echo "== the sink's counts against the merge"
    curl -sf "http://127.0.0.1:$admin_port/stats" >"$out/sink-stats.json"
    python3 - "$out/sink-stats.json" "$out/merged/summary.json" <<'PY' || sink_status=1
import json, sys
sink = json.load(open(sys.argv[1]))
merged = json.load(open(sys.argv[2]))
d = sink["digest"]
sink_digest = f'{d["count"]} notifications, digest {d["sum"]}-{d["squares"]}'
checks = [
    ("requests", sink["requests"], merged["requests"]),
    ("accepted", sink["accepted"], merged["accepted"]),
    ("digest of accepted notifications", sink_digest, merged["digest"]),
]
bad = [f"{name}: sink {a}, merged shards {b}" for name, a, b in checks if a != b]
skew = merged.get("start_skew_ms")
print(f"sink: {sink['requests']:,} requests, {sink['accepted']:,} accepted; start skew "
      + (f"{skew:.1f} ms" if skew is not None else "-"))
print("sink and merge agree" if not bad else "sink and merge DISAGREE: " + "; ".join(bad))
sys.exit(1 if bad else 0)
PY
fi

echo "== fanout gate"
gate_status=0
if [ -f "$out/merged/summary.json" ]; then
    if [ -n "${THRESHOLDS:-}" ]; then
        "$fanout" gate "$out/merged" --thresholds "$THRESHOLDS" || gate_status=$?
    else
        "$fanout" gate "$out/merged" --threshold 'failed == 0' || gate_status=$?
    fi
else
    echo "no merged folder (fanout merge exit status $merge_status)"
    gate_status=2
fi
echo "results: $out/"
[ $gate_status -ne 0 ] && exit $gate_status
exit $sink_status
