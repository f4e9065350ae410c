#!/usr/bin/env bash
# Two builds' sinks side by side: h2load against `fanout sink` of OLD and of NEW (both
# listening at once, cleartext, one event loop each), ROUNDS rounds in ABBA order (odd rounds old
# first, even rounds new first, so a machine getting busier or quieter favours neither), in two
# shapes (-c 8 -m 100 and -c 1 -m 1000, -t 1, REQUESTS each). Prints each round's rates and
# new ÷ old, and each shape's median ratio: a change of the sink's throughput (issue #49's
# "within 5% of today's" is a median of at least 0.95).
#
#   scripts/bench/sink-builds.sh OLD-FANOUT NEW-FANOUT [ROUNDS=8] [REQUESTS=200000]
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -ge 2 ] || { echo "usage: scripts/bench/sink-builds.sh OLD-FANOUT NEW-FANOUT [ROUNDS] [REQUESTS]" >&2; exit 2; }
old=$1 new=$2 rounds=${3:-8} requests=${4:-200000}
. scripts/lib/peers.sh
. scripts/lib/ratios.sh
body=$PWD/fixtures/poll.json
token=$(printf 'ab%.0s' $(seq 32))

# sink BINARY NAME: starts BINARY's sink on port 0 (in this shell, so that `pids` keeps it for
# the cleanup); sets `port` to the port it says it listens on.
sink() {
    "$1" sink --listen 127.0.0.1:0 >"$work/$2.out" 2>&1 &
    pids+=($!)
    port=""
    for _ in $(seq 100); do
        port=$(sed -n 's/^listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$work/$2.out")
        [ -n "$port" ] && return
        sleep 0.1
    done
    echo "the $2 sink printed no port:" >&2
    cat "$work/$2.out" >&2
    exit 1
}
sink "$old" old
old_port=$port
sink "$new" new
new_port=$port

# rate PORT H2LOAD-SHAPE...: h2load's requests a second against the sink on PORT.
rate() {
    local port=$1
    shift
    h2load_rate "$requests" "$body" "http://127.0.0.1:$port/3/device/$token" "$@"
}

for shape in "-c 8 -m 100" "-c 1 -m 1000"; do
    echo
    echo "h2load $shape -t 1, $requests requests"
    printf '%-6s %12s %12s %8s\n' round old new ratio
    : >"$work/ratios"
    for round in $(seq "$rounds"); do
        # shellcheck disable=SC2086
        if [ $((round % 2)) = 1 ]; then
            a=$(rate "$old_port" $shape)
            b=$(rate "$new_port" $shape)
        else
            b=$(rate "$new_port" $shape)
            a=$(rate "$old_port" $shape)
        fi
        ratio=$(ratio_of "$a" "$b" 3)
        printf '%-6s %12.0f %12.0f %8s\n' "$round" "$a" "$b" "$ratio"
        echo "$ratio" >>"$work/ratios"
    done
    read -r median count low high < <(median_ratio "$work/ratios" 3)
    echo "$shape: new / old = $median (median of $count; spread $low-$high)"
done
