#!/usr/bin/env bash
# Fanout's main job: `fanout run` fans the seed's interactive "poll" notification out to one
# million synthetic device tokens through the mock APNs embedded in the same process (loopback
# h2c), prints throughput, latency percentiles and outcomes, checks that sender and sink agree on
# every count and on the digest of what was accepted, and writes summary.json and latency.hgrm to
# a new folder under results/. Arguments go to `fanout run` (e.g. --count 20000000).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/apt.sh
debian_packages libjemalloc-dev  # the fanout binary's allocator

swift build -c release --product fanout
exec .build/release/fanout run "$@"
