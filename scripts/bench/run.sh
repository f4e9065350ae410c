#!/usr/bin/env bash
# The main job beside h2load, on this machine, in one run:
#   1. throughput: `fanout run --count REQUESTS` (sender and embedded sink, 4 connections ×
#      1000 streams, the poll notification) against h2load → nghttpd with the same connections,
#      streams and body (-c 4 -m 1000 -t 1), runs alternating; median ratio (target ≥ 0.50);
#   2. the sender alone: `fanout send` → nghttpd against h2load → the same nghttpd, -c 4 -m 100,
#      the poll body, one device (nghttpd serves its path as a file: 200; its --echo-upload
#      spools every body to a temporary file and would be what is measured), runs
#      alternating; median ratio (target ≥ 0.80);
#   3. memory: peak RSS of `fanout run` with 1 million and with 20 million tokens (target: within
#      10% of each other: tokens stream through bounded batches).
#
#   [FANOUT=BINARY] scripts/bench/run.sh [RUNS=3] [REQUESTS=1000000]
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib/peers.sh
. scripts/lib/ratios.sh
paired_start "${1:-3}" "${2:-1000000}"
start_nghttpd

# summary_rate FOLDER: the throughput a run's summary.json in FOLDER says; with a second
# argument, the number of tokens it must have had accepted.
summary_rate() {
    python3 - "$1/summary.json" "${2:-}" <<'PY'
import json, sys
summary = json.load(open(sys.argv[1]))
assert not sys.argv[2] or summary["accepted"] == int(sys.argv[2]), summary
print(summary["throughput_per_second"])
PY
}
nghttpd_rate() { h2load_rate "$requests" "$body" "http://127.0.0.1:$nghttpd_port/$1" -c 4 -m "$2"; }
fanout_run_rate() {
    local output
    output=$(mktemp -d -p "$work")
    "$fanout" run --count "$requests" --output "$output" >"$work/run.out"
    summary_rate "$output"
}
fanout_send_rate() {
    local output
    output=$(mktemp -d -p "$work")
    "$fanout" send --endpoint "http://127.0.0.1:$nghttpd_port" --tokens "$work/one-device.txt" --template "$body" \
        --topic com.example.app --connections 4 --streams 100 --output "$output" >/dev/null
    summary_rate "$output" "$requests"
}

h2load_index=(nghttpd_rate index.html 1000) fanout_run=(fanout_run_rate)
paired_runs "$runs" 16 2 "h2load→nghttpd" "fanout run" h2load_index fanout_run
read -r median _ <<<"$paired"
printf '\nfanout run / h2load→nghttpd = %s (median; target >= 0.50)\n' "$median"

echo
echo "fanout send → nghttpd vs h2load → nghttpd, -c 4 -m 100, $requests requests"
device=$(printf 'ab%.0s' $(seq 32))
mkdir -p "$work/www/3/device" && printf '{}' >"$work/www/3/device/$device"
python3 -c "import sys; sys.stdout.write(\"$device\\n\" * $requests)" >"$work/one-device.txt"
h2load_device=(nghttpd_rate "3/device/$device" 100) fanout_send=(fanout_send_rate)
paired_runs "$runs" 16 2 "h2load→nghttpd" "fanout send" h2load_device fanout_send
read -r median _ <<<"$paired"
printf '\nfanout send / h2load (→ nghttpd) = %s (median; target >= 0.80)\n' "$median"

echo
echo "peak RSS of fanout run (maximum resident set)"
for count in 1000000 20000000; do
    python3 - "$fanout" "$count" "$work/rss-$count" <<'PY'
import resource, subprocess, sys
fanout, count, output = sys.argv[1], sys.argv[2], sys.argv[3]
subprocess.run([fanout, "run", "--count", count, "--output", output], check=True, stdout=subprocess.DEVNULL)
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(f"{int(count):>12,} tokens: {peak / 1024:8.1f} MB")
PY
done
