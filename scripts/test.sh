#!/usr/bin/env bash
# Fanout's whole test suite: what CI runs on a fresh machine (.ci/run calls this script).
# Steps: install the test peers, build with warnings as errors, run every test, check
# formatting, and gate allocations with package-benchmark against Benchmarks/Thresholds.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

step "Test peers (PyPI): Python's hpack and hyperframe, HTTP/2 pieces nobody here wrote"
python3 -m pip install --quiet --disable-pip-version-check 'hpack==4.1.0' 'hyperframe==6.1.0'

step "Build (warnings are errors)"
swift build --build-tests -Xswiftc -warnings-as-errors

step "Tests"
swift test --skip-build

step "Format (swift format lint --strict)"
swift format lint --strict -r Sources Tests Benchmarks/Benchmarks Package.swift Benchmarks/Package.swift

step "Allocation gate: 0 mallocs per notification, per token and per HPACK header block (Benchmarks/Thresholds)"
# Malloc counts are deterministic, so CI can gate on them; timing is never gated here.
(cd Benchmarks && FANOUT_BENCHMARK_METRICS=malloc swift package benchmark thresholds check --no-progress --filter 'Fanout.*|Token.*')

step "All checks passed"
