#!/usr/bin/env bash
# Scaling keeps the rate (issue #63): a small campaign rehearsed at full scale beside its sample
# with time compressed as much (`fanout run --sample`), against nginx. The campaign: devices
# fanned out at once, every one opening uniformly over 0–SPREAD after its delivery, a request an
# open, so RATE requests a second for SPREAD; SPREAD is 4 of the sample's seconds (400 s at 1%).
# Prints each wave's busiest second, the full rehearsal's busiest window of 1/SHARE seconds (what
# one of the sample's seconds holds), and their ratios. ReturnWaveGroundTruthTests checks 10% in
# CI (FANOUT_SAMPLE_SHARE=1% there rehearses this one).
#
#   [FANOUT=BINARY] scripts/bench/return-sample.sh [SHARE=1%] [RATE=2000]
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib/peers.sh
release_fanout
share=${1:-1%}
rate=${2:-2000}
factor=$(python3 -c "import sys; s=sys.argv[1]; v=float(s.rstrip('%'))/(100 if s.endswith('%') else 1); print(round(1/v))" "$share")
spread=$((4 * factor))
devices=$((spread * rate))
start_nginx
sed 's/,"mutable-content":1//' fixtures/poll.json >"$work/poll-plain.json"
for name in full sample; do
    extra=()
    [ "$name" = sample ] && extra=(--sample "$share")
    echo "$name: fanout run --count $devices --sink-device-open 100% --sink-device-open-after uniform:0s-${spread}s ${extra[*]:-}" >&2
    "$fanout" run --count "$devices" --template "$work/poll-plain.json" --sink-device-open 100% \
        --sink-device-open-after "uniform:0s-${spread}s" --sink-return-to "http://127.0.0.1:$nginx_port" \
        --output "$work/$name" "${extra[@]}" >/dev/null
done
python3 - "$work" "$factor" "$rate" <<'PY'
import json, sys
work, factor, rate = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
waves = {name: json.load(open(f"{work}/{name}/summary.json"))["return_wave"] for name in ("full", "sample")}
full = [s["offered"] for s in waves["full"]["seconds"]]
sample = [s["offered"] for s in waves["sample"]["seconds"]]
window = max(sum(full[i:i + factor]) / factor for i in range(len(full) - factor + 1))
print(f"model: {rate:,}/s for {4 * factor} s at full scale, {4} s sampled (time ×{factor})")
print(f"full:   {waves['full']['offered']:,} offered over {sum(1 for c in full if c)} s; busiest second {max(full):,}/s, busiest {factor} s {window:,.0f}/s")
print(f"sample: {waves['sample']['offered']:,} offered over {sum(1 for c in sample if c)} s; busiest second {max(sample):,}/s")
print(f"sample ÷ full: {max(sample) / max(full):.3f} (busiest seconds), {max(sample) / window:.3f} (the full's busiest {factor} s)")
PY
