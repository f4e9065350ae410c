#!/usr/bin/env bash
# Fanout's payload encoder against Foundation's JSONEncoder, side by side in one
# package-benchmark run, repeated (default 5 times) because this machine is shared and noisy.
# Prints each run's p50 per payload and the ratios, then the median ratio over the runs.
#
#   scripts/bench/payload.sh [REPEATS]
set -euo pipefail
cd "$(dirname "$0")/../../Benchmarks"
repeats=${1:-5}

runs=()
for run in $(seq 1 "$repeats"); do
    output=$(swift package benchmark --target PayloadBenchmarks --no-progress 2>&1) || {
        printf '%s\n' "$output" >&2
        exit 1
    }
    runs+=("$output")
done

printf '%s\n' "${runs[@]}" | python3 -c '
import re, statistics, sys

# The text report: a benchmark name on its own line, then a table whose wall-clock row reads
# "Time (wall clock) (ns) *  |  p0 | p25 | p50 | ...", the unit in the row label.
scale = {"ns": 1, "μs": 1_000, "us": 1_000, "ms": 1_000_000}
runs, current, name = [], {}, None
for line in sys.stdin:
    line = line.rstrip("\n")
    if re.fullmatch(r"(FanoutEncoder-\w+|FoundationJSONEncoder)", line):
        if line in current:
            runs.append(current)
            current = {}
        name = line
    match = re.match(r"│ Time \(wall clock\) \((\S+)\) \*?\s*│([^│]+)│([^│]+)│([^│]+)│", line)
    if match and name:
        current[name] = int(match.group(4).strip()) * scale[match.group(1)]
        name = None
if current:
    runs.append(current)

ratios = {"checked": [], "validated": []}
for number, run in enumerate(runs, 1):
    peer = run["FoundationJSONEncoder"]
    checked, validated = run["FanoutEncoder-tokenChecked"], run["FanoutEncoder-tokenValidatedByReader"]
    ratios["checked"].append(peer / checked)
    ratios["validated"].append(peer / validated)
    print(f"run {number}: p50 per payload: Fanout {checked} ns (token checked), {validated} ns (token validated "
          f"by reader); JSONEncoder {peer} ns; ratio {peer / checked:.0f}x / {peer / validated:.0f}x")
checked, validated = statistics.median(ratios["checked"]), statistics.median(ratios["validated"])
print(f"median ratio over {len(runs)} runs: {checked:.0f}x (token checked), {validated:.0f}x (token validated "
      f"by reader); target: at least 200x")
'
