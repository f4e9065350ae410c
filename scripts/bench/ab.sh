#!/usr/bin/env bash
# `fanout ab` trials, to measure its verdicts: TRIALS runs of `fanout ab BASELINE CANDIDATE
# --repeat PAIRS -- run --count COUNT`, counting the verdicts (within noise, WORSE, BETTER).
# Run a build against itself (every verdict should be "within noise") and against a build
# planted slower (every verdict should be WORSE). The trials' folders are kept under
# results/bench-ab-*/.
#
#   scripts/bench/ab.sh BASELINE CANDIDATE [TRIALS=10] [PAIRS=5] [COUNT=300000]
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -ge 2 ] || { echo "usage: scripts/bench/ab.sh BASELINE CANDIDATE [TRIALS] [PAIRS] [COUNT]" >&2; exit 2; }
baseline=$1 candidate=$2 trials=${3:-10} pairs=${4:-5} count=${5:-300000}
. scripts/lib/build.sh
results_folder ab
within=0 worse=0 better=0
for trial in $(seq "$trials"); do
    status=0
    "$baseline" ab "$baseline" "$candidate" --repeat "$pairs" --output "$out/trial-$trial" \
        -- run --count "$count" >"$out/trial-$trial.txt" 2>&1 || status=$?
    case $status in
        0) within=$((within + 1)); verdict="within noise" ;;
        2) worse=$((worse + 1)); verdict=WORSE ;;
        4) better=$((better + 1)); verdict=BETTER ;;
        *) echo "trial $trial: fanout ab failed (status $status):" >&2; tail -5 "$out/trial-$trial.txt" >&2; exit 1 ;;
    esac
    ratio=$(awk '$1 == "throughput" {print $4, $5, $6, $7}' "$out/trial-$trial.txt")
    echo "trial $trial: $verdict   (throughput B ÷ A, interval: $ratio)"
done
echo "$trials trials of $pairs pairs: $within within noise, $worse WORSE, $better BETTER ($out/)"
