#!/usr/bin/env bash
# Makes docs/images/report-{run,sink,search,repeats,compare}.png: the five kinds of report.html,
# each from a small real run of the current build, drawn by headless Chromium.
#
#   scripts/report-screenshots.sh            # the debug build (.build/debug/fanout)
#   FANOUT=.build/release/fanout scripts/report-screenshots.sh
#
# The runs go to a temporary folder (removed at the end); only the PNGs are kept. Each PNG must
# stay under 400 KB: the script fails on a larger one.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
fanout=${FANOUT:-$root/.build/debug/fanout}
images=$root/docs/images
work=$(mktemp -d "${TMPDIR:-/tmp}/fanout-screenshots.XXXXXX")
sink_pid=
cleanup() {
    if [ -n "$sink_pid" ]; then kill "$sink_pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$images"
cd "$root"

shoot() { # PAGE NAME
    chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$work/chromium" \
        --screenshot="$work/$2.png" --window-size=1280,2000 "file://$1" >/dev/null 2>&1
    # 8-bit palette: the charts are a few flat colours.
    python3 -c 'import sys; from PIL import Image; Image.open(sys.argv[1]).convert("RGB").quantize(64).save(sys.argv[2], optimize=True)' \
        "$work/$2.png" "$images/report-$2.png"
    size=$(stat -c %s "$images/report-$2.png")
    echo "docs/images/report-$2.png: $size bytes"
    [ "$size" -lt 409600 ] || { echo "error: docs/images/report-$2.png is over 400 KB" >&2; exit 1; }
}

# A run: the open model with a warm-up, answers from a bad day's scenario (rejections, a spread).
"$fanout" run --rate 3000 --duration 6s --warm-up 1s --max-lag 1s \
    --sink-scenario fixtures/scenarios/bad-day.scenario --output "$work/run" >/dev/null || true
shoot "$work/run/report.html" run

# A sink's folder: fanout send as the provider under test.
# It stops a second after the last request (--expect counts accepted ones; 2% are rejected).
"$fanout" sink --listen 127.0.0.1:0 --latency uniform:1ms-5ms --error Unregistered:2% --idle-exit 1s \
    --duration 60s --output "$work/sink" >"$work/sink.log" 2>&1 &
sink_pid=$!
for _ in $(seq 100); do grep -q "listening on" "$work/sink.log" && break; sleep 0.1; done
port=$(sed -n 's/.*listening on [^ ]*:\([0-9][0-9]*\).*/\1/p' "$work/sink.log" | head -1)
"$fanout" send --endpoint "http://127.0.0.1:$port" --generate 20000 --template fixtures/poll.json \
    --topic com.example.app --output "$work/send" >/dev/null || true
wait "$sink_pid" || true
sink_pid=
shoot "$work/sink/report.html" sink

# A search against the embedded sink, its p99 objective drawn on the latency chart.
"$fanout" search --slo 'p99 < 5ms' --from 2000 --to 64000 --step-duration 2s --warm-up 1s \
    --max-steps 6 --output "$work/search" >/dev/null || true
shoot "$work/search/report.html" search

# Repeats side by side.
"$fanout" run --count 20000 --repeat 4 --output "$work/repeats" >/dev/null
shoot "$work/repeats/report.html" repeats

# A comparison of two sets of repeats.
"$fanout" run --count 20000 --streams 10 --repeat 4 --output "$work/fewer-streams" >/dev/null
"$fanout" compare "$work/repeats" "$work/fewer-streams" --report "$work/compare.html" >/dev/null
shoot "$work/compare.html" compare
