#!/usr/bin/env bash
# Fanout's whole test suite: what CI runs on a fresh machine (.ci/run calls this script).
# Steps: install the test peers, build with warnings as errors, run every test (beside it, the
# dependent package's build and the fuzzers'), check formatting, the regression gate's
# instructions and mallocs per notification (callgrind) against results/baselines/cost/ and
# its malloc limit, the default scenario's outcome alone, the ground truth alone; build the
# image and run fanout in a container; fuzz each target briefly. (The allocation benchmarks,
# part by part against Benchmarks/Thresholds, are the long form: scripts/regression.sh
# --allocations, a package of their own whose cold build took 9 of CI's minutes.)
set -euo pipefail
cd "$(dirname "$0")/.."

# Each step's line says when it began (minutes and seconds since the script started), so a CI
# log shows where its time went (the whole must stay under 45 minutes on 2 cores).
started=$SECONDS
step() { printf '\n== [%dm%02ds] %s\n' $(((SECONDS - started) / 60)) $(((SECONDS - started) % 60)) "$*"; }

# Work that only counts (a build, an allocation count) goes beside work that mostly waits (the
# suite uses about 1.2 of the 2 cores over its 9 minutes; callgrind one): `beside NAME CMD…`
# starts it in the background, its output in a log; `joined NAME` waits for it and fails the
# script with the log's tail if it failed. Nothing timed runs beside anything: the suite holds
# on a loaded machine (docs/testing.md), and the ground truth and the default scenario's
# outcome run alone.
#
# Each job runs in a process group of its own (`set -m` while it starts), so that a script that
# fails or is stopped ends the job's whole tree (a build's compilers too), not just its shell.
logs=$(mktemp -d)
trap 'for f in "$logs"/*.pid; do [ -e "$f" ] && kill -- -"$(cat "$f")" 2>/dev/null || true; done; rm -rf "$logs"' EXIT
beside() {
    local name=$1
    shift
    set -m
    ( "$@" >"$logs/$name.log" 2>&1 && echo 0 >"$logs/$name.status" || echo $? >"$logs/$name.status" ) &
    echo $! >"$logs/$name.pid"
    set +m
}
joined() {
    local name=$1 status
    wait "$(cat "$logs/$name.pid")" || true
    rm -f "$logs/$name.pid"
    status=$(cat "$logs/$name.status" 2>/dev/null || echo 1)
    if [ "$status" != 0 ]; then
        tail -40 "$logs/$name.log"
        printf '== %s failed (status %s)\n' "$name" "$status"
        exit 1
    fi
    tail -5 "$logs/$name.log"
    printf '== [%dm%02ds] %s done\n' $(((SECONDS - started) / 60)) $(((SECONDS - started) % 60)) "$name"
}

step "Build and test peers (Debian): jemalloc (the fanout binary's allocator); nghttp2's h2load, nghttpd, nghttp; curl; openssl; chromium (renders report.html); valgrind (the cost gate's counter); prometheus (promtool checks /metrics; a real Prometheus scrapes a sharded run in PrometheusFleetTests); nginx and gunicorn (the return wave's backends nobody here wrote); iproute2 (the docs test brings loopback up in its own network namespace)"
. scripts/lib/apt.sh
debian_packages libjemalloc-dev nghttp2-client nghttp2-server curl openssl chromium valgrind prometheus nginx gunicorn iproute2

step "Test peers (PyPI): Python's h2, hpack and hyperframe; PyJWT with cryptography (ES256 tokens); prometheus-client (its exposition parser); hdrhistogram (HdrHistogram's reference log reader); jsonschema (summary.json's schema); Pillow (reads report.html's screenshot); check-jsonschema (the CI recipes' GitHub and GitLab schemas); kubernetes-validate (fanout cluster render's manifests against Kubernetes 1.33, offline); aioapns (a push provider nobody here wrote, for the sink as its instrument); firebase-admin (Google's FCM SDK: how it classifies FCM's error bodies)"
python3 -m pip install --quiet --disable-pip-version-check 'h2==4.2.0' 'hpack==4.1.0' 'hyperframe==6.1.0' \
    'pyjwt[crypto]==2.10.1' 'prometheus-client==0.26.0' 'hdrhistogram==0.10.8' 'jsonschema==4.26.0' \
    'pillow==12.0.0' 'check-jsonschema==0.35.0' 'kubernetes-validate==1.33.1' 'aioapns==4.0' \
    'firebase-admin==7.7.0'

# The peers are installed: a test whose peer is missing fails instead of being skipped
# (Tests/FanoutTestSupport/Peer.swift, docs/testing.md), so CI never passes by skipping.
export FANOUT_REQUIRE_PEERS=1

step "Every Fanout module a target imports is declared in Package.swift (scripts/lib/imports.py)"
python3 scripts/lib/imports.py

step "Every package type with inlinable members is @usableFromInline, so that its members inline and specialise in other modules (scripts/lib/inlinable.py)"
python3 scripts/lib/inlinable.py

step "Build (warnings are errors)"
swift build --build-tests -Xswiftc -warnings-as-errors

step "Merging cannot forget a field: a field added to summary.json in a scratch copy does not compile until SummaryMerge says how shards merge it (scripts/lib/merge-fields.sh)"
bash scripts/lib/merge-fields.sh

step "Tests; beside them, two builds: a package others can use (a scratch package depending on FanoutPayload and FanoutClient as a versioned git dependency builds and runs: scripts/lib/dependent.sh; SwiftPM refuses such a dependency with unsafe flags), then the fuzzers (ASan, without the optimizer: scripts/fuzz.sh build)"
builds() { bash scripts/lib/dependent.sh && FANOUT_FUZZ_UNOPTIMIZED=1 bash scripts/fuzz.sh build; }
beside builds builds
swift test --skip-build --skip GroundTruthTests --skip WirePeerTests
joined builds

step "Format (swift format lint --strict)"
swift format lint --strict -r Sources Tests Benchmarks/Benchmarks Benchmarks/Tools Package.swift Benchmarks/Package.swift \
    Fuzz/Targets Fuzz/Package.swift

step "Fanout's regression gate (scripts/regression.sh --cost): instructions per notification within +2% of the baseline, stage by stage (scripts/cost.sh); mallocs at most 0.05 a notification (none a request or a stream) for APNs notifications read from text, binary and generated token sets and for FCM sends to the FCM sink as it serves by default"
# Instruction and malloc counts are deterministic (callgrind), so CI gates on them exactly.
bash scripts/regression.sh --cost

step "The default scenario's outcome, alone (scripts/regression.sh --outcome)"
bash scripts/regression.sh --outcome

step "Ground truth, alone, release build: the open model and fanout search against a sink with a fixed 50 ms in four stream shapes (GroundTruthTests); a plan's bounds against a sink on a 50 ms wire (streams, window, bandwidth) and a probed plan against nghttpd 80 ms away (WireGroundTruthTests); the return wave of 100,000 devices at a counting backend second by second, gunicorn's capacity as its knee, nginx answering what is offered, a 10% sample with time ×10 at the full rehearsal's peak rate, the plan's pace verified by a scaled rehearsal (ReturnWaveGroundTruthTests)"
# Alone and in release (the build the regression gate made), so that neither another suite's
# load nor a debug build's slowness is measured as the sink's latency. The two suites run one
# after the other, not side by side (swift-testing runs suites in parallel): each one's load
# would be the other's latency. (The step above skips all three: its pattern matches their names.)
FANOUT_EXECUTABLE=$PWD/.build/release/fanout swift test --skip-build --filter 'FanoutCommandTests\.GroundTruthTests'
FANOUT_EXECUTABLE=$PWD/.build/release/fanout swift test --skip-build --filter WireGroundTruthTests
FANOUT_EXECUTABLE=$PWD/.build/release/fanout swift test --skip-build --filter ReturnWaveGroundTruthTests

step "Peers on a wire, alone: fanout send and h2load through one 40 ms relay, their rates within 10% of each other, and the other peers behind a relay (WirePeerTests)"
# A rate compared with a peer's is time measured: beside the suite and the builds it came out
# 10.4% apart once (a CI trial, 2026-12-04), so it runs alone, as the ground truth does.
swift test --skip-build --filter WirePeerTests

step "The image: the Dockerfile's runtime with the release build above (podman, a debootstrap base), fanout run --count 10000 in a container, as user 10001"
# The image as shipped links the Swift runtime statically (scripts/image.sh with no --binary),
# a second full release build; here the release build the cost gate made goes in with the Swift
# runtime libraries it loads.
bash scripts/image.sh --test --binary .build/release/fanout fanout:test

step "Fuzzing, short form: each libFuzzer target (Fuzz/) 10 s with ASan from its seeds, a target a core at a time, built without the optimizer (beside the tests, above)"
# The long form, 10 million inputs a target, is scripts/fuzz.sh all 3600 -runs=10000000 (optimized).
# Unoptimized, the build takes 421 s where it took 670 (scripts/fuzz.sh says what it costs in inputs).
FANOUT_FUZZ_UNOPTIMIZED=1 bash scripts/fuzz.sh all 10

step "All checks passed"
