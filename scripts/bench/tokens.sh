#!/usr/bin/env bash
# Token-set reading: package-benchmark's TokenBenchmarks (parse rate per core, reads through the
# stream, queue hand-off, mallocs per token), then peak RSS of `fanout tokens count` over
# 1 million and 50 million tokens (text and binary), measured with /usr/bin/time -v: a
# streaming reader shows the same figure for both. The 50-million text file takes 3.3 GB of
# temporary disk; it is removed at the end.
#
#   scripts/bench/tokens.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

(cd Benchmarks && swift package benchmark --target TokenBenchmarks --no-progress)

. scripts/lib/build.sh
release_fanout
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo
echo "== Peak resident memory of fanout tokens count"
for format in text binary; do
    for count in 1000000 50000000; do
        "$fanout" tokens generate --count "$count" --seed 1 --format "$format" --output "$work/set"
        peak=$(/usr/bin/time -v "$fanout" tokens count --tokens "$work/set" 2>&1 >/dev/null \
            | awk -F': ' '/Maximum resident set size/ {print $2}')
        printf '%-6s %9d tokens: peak RSS %6d KiB\n' "$format" "$count" "$peak"
        rm -f "$work/set"
    done
done
