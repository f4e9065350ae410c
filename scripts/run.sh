#!/usr/bin/env bash
# Fanout's main job. Until the load engine lands, this runs the payload engine on the seed's
# interactive "poll" notification: it compiles fixtures/poll-personalised.json once and prints
# the exact bytes, then the sizes, that three devices would be sent (token + badge each).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/apt.sh
debian_packages libjemalloc-dev  # the fanout binary's allocator

swift build -c release --product fanout
fanout=.build/release/fanout

tokens=(
    $'6e0f3a9c1b2d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7\t1'
    $'0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\t7'
    $'ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100\t42'
)
arguments=(payload render --template fixtures/poll-personalised.json --field-names badge)
for token in "${tokens[@]}"; do arguments+=(--token "$token"); done

echo "== Payloads, one per device"
"$fanout" "${arguments[@]}"
echo "== Sizes in bytes (limit 4096)"
"$fanout" "${arguments[@]}" --size
