#!/usr/bin/env bash
# Fanout's own regression gate (run by scripts/test.sh, hence by CI): deterministic checks only.
#
#   1. The cost gate (scripts/cost.sh): instructions per notification through the whole hot
#      path, per stage, counted by callgrind, within +2% of this toolchain's baseline, and its
#      mallocs; the mallocs of the same path over binary and generated token sets
#      (scripts/cost.sh --tokens) and of FCM sends (scripts/cost.sh --fcm): none a notification
#      (at most 0.05: token batches).
#   2. The outcome of the default scenario (`fanout run`: 1 million tokens, the poll
#      notification, release build with jemalloc): every notification sent and accepted,
#      nothing failed, sender and sink reconciled (results/baselines/default/thresholds.txt).
#
# Wall-clock figures are not gated here: on a shared 2-core runner the same build's throughput
# moves ±30% between runs. To compare builds by time, run them side by side with `fanout ab`
# (scripts/bench/ab.sh); to compare with the committed repeats of the default scenario:
#
#   scripts/regression.sh --cost     the cost gate alone (1); instruction and allocation counts,
#                                    so it may run beside other work (CI runs the allocation
#                                    gate beside it)
#   scripts/regression.sh --outcome  the default scenario's outcome alone (2), on a quiet machine
#   scripts/regression.sh --allocations
#                                    the allocation benchmarks (Benchmarks/, package-benchmark's
#                                    malloc counter) part by part against Benchmarks/Thresholds:
#                                    0 mallocs a notification encoded, a token read, an HPACK
#                                    block, an HTTP/2 exchange, an FCM send checked and answered
#                                    (a package of its own: its cold build is 9 minutes, so CI
#                                    gates the whole path's mallocs with (1) instead)
#   scripts/regression.sh --strict   also fail when throughput or p99 is worse than the
#                                    baseline's repeats beyond their noise (local use)
#   scripts/regression.sh --record   run the default scenario 5 times and make it the baseline
#                                    (results/baselines/default) for --strict
#
# Exit status: 1 when the cost gate or a check fails (or --strict finds a regression), 2 when
# a run is invalid or a measurement could not be made.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-gate}
baseline=results/baselines/default

if [[ $mode == --allocations ]]; then
    cd Benchmarks
    FANOUT_BENCHMARK_METRICS=malloc exec swift package benchmark thresholds check --no-progress --filter 'Fanout.*|Token.*'
fi
current=results/regression-$(date -u +%Y%m%d-%H%M%S)

swift build -c release --product fanout >/dev/null
fanout=.build/release/fanout

if [[ $mode == --record ]]; then
    rm -rf "$baseline.new"
    "$fanout" run --repeat 5 --output "$baseline.new" >/dev/null
    cp "$baseline/thresholds.txt" "$baseline.new/" 2>/dev/null || true
    rm -rf "$baseline" && mv "$baseline.new" "$baseline"
    "$fanout" gate "$baseline" --thresholds "$baseline/thresholds.txt" >/dev/null
    echo "recorded $baseline"
    exit 0
fi

status=0
if [[ $mode != --outcome ]]; then
    # The three measurements side by side (callgrind runs one thread, and its counts do not
    # depend on the machine's load): about 35 s where one after another took 61 (2 cores). The
    # workload is built once, before; each measurement's output is printed in this order.
    swift build -c release --product fanout-cost >/dev/null
    cost_logs=$(mktemp -d)
    cost_pids=()
    # Stopped or failing early, the measurements stop too: each runs in a process group of its
    # own (`set -m` while it starts; a script's background jobs ignore SIGINT), ended whole,
    # valgrind with it.
    trap 'for p in "${cost_pids[@]}"; do kill -- "-$p" 2>/dev/null || true; done; rm -rf "$cost_logs"' EXIT
    trap 'exit 130' INT TERM
    cost_modes=("" --tokens --fcm)
    set -m
    for i in 0 1 2; do
        FANOUT_COST_BUILT=1 bash scripts/cost.sh ${cost_modes[$i]:+"${cost_modes[$i]}"} </dev/null >"$cost_logs/$i" 2>&1 &
        cost_pids[i]=$!
    done
    set +m
    titles=("cost gate (scripts/cost.sh)"
        "cost gate, binary and generated token sets (scripts/cost.sh --tokens): mallocs a notification"
        "cost gate, FCM sends (scripts/cost.sh --fcm): mallocs a notification")
    for i in 0 1 2; do
        s=0
        wait "${cost_pids[$i]}" || s=$?
        echo "-- ${titles[$i]}"
        cat "$cost_logs/$i"
        ((s > status)) && status=$s
    done
    cost_pids=() # ended: nothing for the trap to stop
    [[ $mode == --cost ]] && exit "$status"
fi

echo
echo "-- outcome of the default scenario"
"$fanout" run --output "$current" | tail -8
"$fanout" gate "$current" --thresholds "$baseline/thresholds.txt" || { s=$?; ((s > status)) && status=$s; }

if [[ $mode == --strict ]]; then
    "$fanout" run --repeat 4 --output "$current-repeats" >/dev/null
    "$fanout" compare "$baseline" "$current-repeats" --metric throughput --metric p99 --fail-on-regression \
        || { echo "regression beyond noise (--strict)"; ((status == 0)) && status=1; }
fi
exit "$status"
