#!/usr/bin/env bash
# Fanout's own performance regression gate: the default scenario (`fanout run`, 1 million
# tokens, the poll notification, release build with jemalloc) run 5 times, compared with the
# committed baseline in results/baselines/default/ (5 repeats recorded on this machine).
#
#   scripts/regression.sh            run, compare, gate
#   scripts/regression.sh --strict   also fail when throughput or p99 is worse beyond the
#                                    noise measured between the repeats (local use: on a
#                                    shared machine, load from other work is not noise)
#   scripts/regression.sh --record   run and make the result the new baseline
#
# The gate (results/baselines/default/thresholds.txt) holds the deterministic checks (every
# notification accepted, sender and sink reconciled, the run valid) and catches a regression
# far beyond any noise this 2-core machine shows (throughput below a quarter of the
# baseline's median, p99 above ten times it). `fanout compare` prints every metric's change
# and whether it is beyond the noise. Exit status: fanout gate's (0 pass, 1 threshold failed,
# 2 invalid run), or 1 when --strict finds a regression beyond noise.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-gate}
baseline=results/baselines/default
current=results/regression-$(date -u +%Y%m%d-%H%M%S)

swift build -c release --product fanout >/dev/null
fanout=.build/release/fanout

if [[ $mode == --record ]]; then
    rm -rf "$baseline.new"
    "$fanout" run --repeat 5 --output "$baseline.new" >/dev/null
    cp "$baseline/thresholds.txt" "$baseline.new/" 2>/dev/null || true
    rm -rf "$baseline" && mv "$baseline.new" "$baseline"
    "$fanout" gate "$baseline" --threshold 'sent == 1000000' >/dev/null
    echo "recorded $baseline"
    exit 0
fi

"$fanout" run --repeat 5 --output "$current" | tail -8
echo
"$fanout" compare "$baseline" "$current"
echo
status=0
"$fanout" gate "$current" --baseline "$baseline" --thresholds "$baseline/thresholds.txt" || status=$?
if [[ $mode == --strict && $status == 0 ]]; then
    "$fanout" compare "$baseline" "$current" --metric throughput --metric p99 --fail-on-regression >/dev/null || status=$?
    ((status == 0)) || echo "regression beyond noise (--strict)"
fi
exit "$status"
