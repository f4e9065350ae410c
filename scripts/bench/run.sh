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
runs=${1:-3}
requests=${2:-1000000}
. scripts/lib/peers.sh

release_fanout
body=$PWD/fixtures/poll.json
start_nghttpd

printf '%-4s %16s %16s %8s\n' run "h2load→nghttpd" "fanout run" ratio
: >"$work/ratios"
for run in $(seq "$runs"); do
    out=$(h2load -n "$requests" -c 4 -m 1000 -t 1 -d "$body" "http://127.0.0.1:$nghttpd_port/index.html")
    grep -q "$requests succeeded, 0 failed" <<<"$out" || { echo "h2load: not every request succeeded:" >&2; echo "$out" >&2; exit 1; }
    a=$(awk '/^finished in/ {print $4}' <<<"$out")
    "$fanout" run --count "$requests" --output "$work/run-$run" >"$work/run.out"
    b=$(python3 -c "import json; print(json.load(open('$work/run-$run/summary.json'))['throughput_per_second'])")
    printf '%-4s %16.0f %16.0f %8.2f\n' "$run" "$a" "$b" "$(python3 -c "print($b / $a)")"
    python3 -c "print($b / $a)" >>"$work/ratios"
done
python3 - "$work/ratios" <<'PY'
import statistics, sys
ratios = [float(line) for line in open(sys.argv[1])]
print(f"\nfanout run / h2load→nghttpd = {statistics.median(ratios):.2f} (median; target >= 0.50)")
PY

echo
echo "fanout send → nghttpd vs h2load → nghttpd, -c 4 -m 100, $requests requests"
device=$(printf 'ab%.0s' $(seq 32))
mkdir -p "$work/www/3/device" && printf '{}' >"$work/www/3/device/$device"
python3 -c "import sys; sys.stdout.write(\"$device\\n\" * $requests)" >"$work/one-device.txt"
printf '%-4s %16s %16s %8s\n' run "h2load→nghttpd" "fanout send" ratio
: >"$work/send-ratios"
for run in $(seq "$runs"); do
    out=$(h2load -n "$requests" -c 4 -m 100 -t 1 -d "$body" "http://127.0.0.1:$nghttpd_port/3/device/$device")
    grep -q "$requests succeeded, 0 failed" <<<"$out" || { echo "h2load: not every request succeeded:" >&2; echo "$out" >&2; exit 1; }
    a=$(awk '/^finished in/ {print $4}' <<<"$out")
    "$fanout" send --endpoint "http://127.0.0.1:$nghttpd_port" --tokens "$work/one-device.txt" --template "$body" \
        --topic com.example.app --connections 4 --streams 100 --output "$work/send-$run" >/dev/null
    b=$(python3 -c "import json; s = json.load(open('$work/send-$run/summary.json')); assert s['accepted'] == $requests, s; print(s['throughput_per_second'])")
    printf '%-4s %16.0f %16.0f %8.2f\n' "$run" "$a" "$b" "$(python3 -c "print($b / $a)")"
    python3 -c "print($b / $a)" >>"$work/send-ratios"
done
python3 - "$work/send-ratios" <<'PY'
import statistics, sys
ratios = [float(line) for line in open(sys.argv[1])]
print(f"\nfanout send / h2load (→ nghttpd) = {statistics.median(ratios):.2f} (median; target >= 0.80)")
PY

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
