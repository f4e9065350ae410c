#!/usr/bin/env bash
# Runs one libFuzzer target of Fuzz/ (or each in turn) for SECONDS, with address sanitizer.
#
#   scripts/fuzz.sh TARGET|all SECONDS [LIBFUZZER-OPTION...]   (all: a target a core at a time)
#   scripts/fuzz.sh build             every target built, none run (CI builds while its tests run)
#
# e.g. `scripts/fuzz.sh all 3600 -runs=10000000`: each target until 10 million inputs or an hour.
# TARGET is one of: hpack frames server client template tokens scenario thresholds settings jwt options fcm.
# The corpus grows in results/fuzz/TARGET/corpus (kept between runs, never committed); the
# seeds, made by the target from the library's encoders, in results/fuzz/TARGET/seeds. A crash,
# leak or timeout leaves its input as results/fuzz/TARGET/crash-* (or leak-*, timeout-*), prints
# how to replay it, and fails the script: turn that input into a regression test. The last line
# of each run says how many inputs it executed (results/fuzz/TARGET/history.log keeps them all;
# a run stopped with SIGINT is kept too, marked "(interrupted)", and the script exits 130):
#
#   fuzz hpack: 12345678 inputs in 600 s (20576/s), corpus 1234 files
set -euo pipefail
cd "$(dirname "$0")/.."

targets=(hpack frames server client template tokens scenario thresholds settings jwt options fcm)
usage() { echo "usage: scripts/fuzz.sh TARGET|all SECONDS [LIBFUZZER-OPTION...] | build; TARGET is one of: ${targets[*]}" >&2; exit 2; }
build_only=""
if [ "${1:-}" = build ] && [ $# -eq 1 ]; then
    build_only=1
    set -- all 1
fi
[ $# -ge 2 ] || usage
target=$1 seconds=$2
shift 2
[[ $seconds =~ ^[1-9][0-9]*$ ]] || { echo "SECONDS is a whole number of at least 1, not $seconds" >&2; exit 2; }
[ "$target" = all ] || [[ " ${targets[*]} " == *" $target "* ]] || usage

# Fuzz/Targets/FuzzHPACK for hpack, FuzzJWT for jwt, FuzzFrames for frames…
case $target in
    hpack) product=FuzzHPACK ;;
    jwt) product=FuzzJWT ;;
    fcm) product=FuzzFCM ;;
    *) product=Fuzz${target^} ;;
esac
# Options of one target, before the caller's (a later option wins). thresholds: inputs of at
# most 512 bytes (about twenty lines). Its lines are parsed one by one with no state between
# them, so longer inputs hold more of the same. But each threshold's verdict lines are
# formatted for 1e300 and NaN, so a 4 KB input took ~1.5 ms under ASan: the rate fell from
# ~2,000 to ~600 inputs a second as the corpus grew (measured).
options=()
[ "$target" = thresholds ] && options=(-max_len=512)

# Release with testing enabled (three targets reach internal API); every Swift module is
# instrumented for coverage and checked by ASan. lld links it (gold fails on ASan's debug info).
#
# FANOUT_FUZZ_UNOPTIMIZED=1 builds the same without the optimizer (-Onone, in .build-fuzz-onone):
# CI's short form, where the build is the cost and the seconds of fuzzing are few. Measured on
# this 2-core machine from a cold scratch path: 670 s optimized, 421 s not; inputs in 10 s from
# an empty corpus, optimized against not: hpack 94,147 and 59,656, fcm 268,702 and 20,377. (A
# debug build fails to link: libFuzzer's main is taken for Swift's.) Long runs keep the optimizer.
flags=(-c release --package-path Fuzz --scratch-path .build-fuzz
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -enable-testing -Xswiftc -use-ld=lld)
# Its rates are not the optimized build's: its lines say "-Onone". It also checks `assert`s,
# so a crash it finds may not reproduce optimized: replay it with the binary it names.
build=""
if [ -n "${FANOUT_FUZZ_UNOPTIMIZED:-}" ]; then
    flags=(-c release --package-path Fuzz --scratch-path .build-fuzz-onone -Xswiftc -Onone
        -Xswiftc -sanitize=fuzzer,address -Xswiftc -enable-testing -Xswiftc -use-ld=lld)
    build=" (-Onone)"
fi
if [ "$target" = all ]; then
    # Every target in one build (their shared modules compile once, in parallel), then each.
    swift build "${flags[@]}" >&2
    [ -n "$build_only" ] && exit 0
    # As many targets at a time as there are cores (FANOUT_FUZZ_JOBS sets it): each runs one
    # thread, with its own corpus folder and log, and prints its line when it ends. The script
    # exits 1 when a target failed (a crash, a leak, a timeout: its input kept), else 130 when
    # one was interrupted; a terminal's SIGINT (to every process of the group) stops the targets
    # running and starts no more.
    parallel=${FANOUT_FUZZ_JOBS:-$(getconf _NPROCESSORS_ONLN)}
    [[ $parallel =~ ^[1-9][0-9]*$ ]] || { echo "FANOUT_FUZZ_JOBS is a whole number of at least 1, not $parallel" >&2; exit 2; }
    failed=0 interrupted=0 running=0
    trap 'interrupted=1' INT
    # One target's end: its status kept. A SIGINT wakes `wait -n` before any target ended
    # (no pid named): nothing is counted then, and the wait goes on.
    settle() {
        local s=0 ended=""
        wait -n -p ended || s=$?
        [ -n "$ended" ] || return 0
        ((running--)) || true
        if ((s == 130)); then interrupted=1; elif ((s != 0)); then failed=1; fi
    }
    for each in "${targets[@]}"; do
        ((interrupted)) && break
        FANOUT_FUZZ_BUILT=1 "$0" "$each" "$seconds" "$@" &
        ((++running < parallel)) || settle
    done
    while ((running > 0)); do settle; done
    ((failed)) && exit 1
    ((interrupted)) && exit 130
    exit 0
fi
[ -n "${FANOUT_FUZZ_BUILT:-}" ] || swift build "${flags[@]}" --product "$product" >&2
binary=$(swift build "${flags[@]}" --show-bin-path)/$product

folder=results/fuzz/$target
mkdir -p "$folder/corpus" "$folder/seeds"
rm -f "$folder"/seeds/*
[ "$target" = template ] && cp fixtures/*.json "$folder/seeds/"
log=$folder/last-run.log
status=0
started=$SECONDS
FANOUT_FUZZ_SEEDS=$folder/seeds ASAN_OPTIONS=detect_leaks=1 \
    "$binary" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$folder/" "${options[@]}" "$@" "$folder/corpus" "$folder/seeds" >"$log" 2>&1 || status=$?
executed=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
elapsed=$((SECONDS - started > 0 ? SECONDS - started : 1))
if [ $status -ne 0 ] && grep -q 'libFuzzer: run interrupted' "$log"; then
    # Ctrl-C or SIGINT: no input failed; the inputs run so far count, marked as cut short.
    line="fuzz $target$build: $executed inputs in $elapsed s ($((executed / elapsed))/s), corpus $(ls "$folder/corpus" | wc -l) files (interrupted)"
    echo "$line"
    echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) $line" >>"$folder/history.log"
    exit 130
fi
if [ $status -ne 0 ]; then
    tail -40 "$log" >&2
    echo "fuzz $target: FAILED after ${executed:-?} inputs; the input is in $folder/ (replay: $binary FILE)" >&2
    exit 1
fi
line="fuzz $target$build: $executed inputs in $elapsed s ($((executed / elapsed))/s), corpus $(ls "$folder/corpus" | wc -l) files"
echo "$line"
# Every clean run's line, kept beside the corpus: the volume each target has been fuzzed for.
echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) $line" >>"$folder/history.log"
