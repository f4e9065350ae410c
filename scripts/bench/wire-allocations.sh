#!/usr/bin/env bash
# The sink's allocations a notification with the wire on (`--rtt`, `--bandwidth`) beside a hold
# on its answers (`--latency`), from jemalloc's own counts (the fanout binary links jemalloc;
# MALLOC_CONF=stats_print:true prints them when the sink exits): the merged arenas' `nrequests`,
# every malloc/calloc/realloc the process made, tcache hits included. Each figure is marginal,
# (count after N2 − count after N1) ÷ (N2 − N1), so start-up is not in it. `fanout send`
# (4 connections × 1000 streams, fixtures/poll.json) is the provider; the sink ends itself by
# --expect.
#
#   scripts/bench/wire-allocations.sh [N1=100000] [N2=300000]
set -euo pipefail
cd "$(dirname "$0")/../.."
small=${1:-100000}
large=${2:-300000}
. scripts/lib/build.sh
release_fanout
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The sink's malloc calls after N notifications with the sink options given.
requests() {
    local count=$1
    shift
    MALLOC_CONF=stats_print:true "$fanout" sink --listen 127.0.0.1:0 --no-auth --expect "$count" "$@" \
        >"$work/sink.log" 2>&1 &
    local sink=$!
    local port=""
    for _ in $(seq 100); do
        port=$(grep -o 'listening on [0-9.:]*' "$work/sink.log" | sed 's/.*://' || true)
        [ -n "$port" ] && break
        sleep 0.1
    done
    [ -n "$port" ] || { echo "the sink did not listen" >&2; kill "$sink"; exit 2; }
    "$fanout" send --endpoint "http://127.0.0.1:$port" --generate "$count" --template fixtures/poll.json \
        --topic com.example.app --connections 4 --streams 1000 >"$work/send.log" 2>&1 || { cat "$work/send.log" >&2; kill "$sink"; exit 2; }
    wait "$sink"
    grep -E '^total:' "$work/sink.log" | head -1 | awk '{print $7}'
}

printf '%-36s %12s %12s %14s\n' "sink" "mallocs@$small" "mallocs@$large" "a notification"
for options in "--latency fixed:20ms" "--rtt 20ms" "--rtt 20ms --bandwidth 1Gbit" \
    "--rtt 20ms --connection-window 65535"; do
    # shellcheck disable=SC2086
    a=$(requests "$small" $options)
    # shellcheck disable=SC2086
    b=$(requests "$large" $options)
    printf '%-36s %12s %12s %14.4f\n' "$options" "$a" "$b" "$(echo "($b - $a) / ($large - $small)" | bc -l)"
done
