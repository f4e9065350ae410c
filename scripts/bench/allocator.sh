#!/usr/bin/env bash
# glibc's malloc against jemalloc, side by side, for `fanout sink`: the shipped build (linked
# with jemalloc, Package.swift's default trait `Jemalloc`) against the same code built with
# `--disable-default-traits` (glibc's malloc), in .build/glibc:
#   1. throughput: h2load -n REQUESTS -c 8 -m 100 -t 1, body fixtures/poll.json, no latency,
#      runs alternating between the two allocators; median requests/s of each;
#   2. memory: 100,000 streams in flight (h2load -c 100 -m 1000, 1 s injected latency),
#      the sink's peak RSS (VmHWM) under each;
#   3. the load engine with its sink: `fanout run --count 500000` under each, alternating:
#      notifications/s and peak RSS.
#
#   scripts/bench/allocator.sh [RUNS=5] [REQUESTS=200000]
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-5}
requests=${2:-200000}
. scripts/lib/peers.sh

# Two builds of this tree side by side: the default (jemalloc) and one without the trait.
unset FANOUT
release_fanout
jemalloc=$fanout
unset FANOUT
release_fanout --disable-default-traits --build-path .build/glibc
declare -A builds=([jemalloc]=$jemalloc [glibc]=$fanout)
body=$PWD/fixtures/poll.json
token=$(printf 'ab%.0s' $(seq 32))

# Starts a sink (lib/peers.sh's start_sink) of the build with allocator $1 (glibc or jemalloc)
# and extra options, and checks that it runs with that allocator; sets sink_pid, sink_port.
start_allocator_sink() {
    local allocator=$1
    shift
    local fanout=${builds[$allocator]}
    start_sink sink "$@"
    local loaded=glibc
    grep -q libjemalloc "/proc/$sink_pid/maps" && loaded=jemalloc
    [[ $loaded == "$allocator" ]] || { echo "the $allocator build runs with $loaded" >&2; exit 1; }
}

stop_sink() {
    kill "$sink_pid"
    wait "$sink_pid" 2>/dev/null || true
}

h2load_rate() {
    local out
    out=$(h2load "$@" -d "$body" -H 'apns-topic: com.example.app' "http://127.0.0.1:$sink_port/3/device/$token")
    grep -q "status codes: $2 2xx" <<<"$out" || { echo "h2load: not every answer was 2xx:" >&2; echo "$out" >&2; exit 1; }
    awk '/^finished in/ {print $4}' <<<"$out"
}

echo "throughput, h2load -c 8 -m 100 -t 1, $requests requests a run"
printf '%-4s %12s %12s %8s\n' run glibc jemalloc ratio
: >"$work/throughput"
for run in $(seq "$runs"); do
    for allocator in glibc jemalloc; do
        start_allocator_sink "$allocator"
        declare "r_$allocator=$(h2load_rate -n "$requests" -c 8 -m 100 -t 1)"
        stop_sink
    done
    printf '%-4s %12.0f %12.0f %8.2f\n' "$run" "$r_glibc" "$r_jemalloc" "$(python3 -c "print($r_jemalloc / $r_glibc)")"
    echo "$r_glibc $r_jemalloc" >>"$work/throughput"
done

echo
echo "memory, 100,000 streams in flight (h2load -c 100 -m 1000, --latency fixed:1s), 300,000 requests"
printf '%-10s %14s\n' allocator "peak RSS (MB)"
for allocator in glibc jemalloc; do
    # h2load's 100 connections open at once: above the default 64 idle ones an address may hold.
    start_allocator_sink "$allocator" --latency fixed:1s --max-idle-connections-per-peer 256
    h2load_rate -n 300000 -c 100 -m 1000 -t 1 >/dev/null
    peak=$(awk '/VmHWM/ {print $2}' "/proc/$sink_pid/status")
    stop_sink
    printf '%-10s %14.1f\n' "$allocator" "$(python3 -c "print($peak / 1024)")"
    echo "$allocator $peak" >>"$work/memory"
done

echo
echo "the load engine: fanout run --count 500000 (sender and embedded sink)"
printf '%-4s %12s %12s %8s %14s %14s\n' run glibc jemalloc ratio "glibc MB" "jemalloc MB"
: >"$work/engine"
for run in $(seq "$runs"); do
    for allocator in glibc jemalloc; do
        declare "e_$allocator=$(python3 - "${builds[$allocator]}" "$work/run-$allocator-$run" <<'PY'
import json, resource, subprocess, sys
subprocess.run([sys.argv[1], "run", "--count", "500000", "--output", sys.argv[2]], check=True, stdout=subprocess.DEVNULL)
summary = json.load(open(sys.argv[2] + "/summary.json"))
assert summary["reconciled"] and summary["accepted"] == 500000, summary
print(f'{summary["throughput_per_second"]:.0f}:{resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.1f}')
PY
)"
    done
    printf '%-4s %12s %12s %8.2f %14s %14s\n' "$run" "${e_glibc%%:*}" "${e_jemalloc%%:*}" \
        "$(python3 -c "print(${e_jemalloc%%:*} / ${e_glibc%%:*})")" "${e_glibc##*:}" "${e_jemalloc##*:}"
    echo "${e_glibc%%:*} ${e_jemalloc%%:*}" >>"$work/engine"
done
python3 - "$work/engine" <<'PY'
import statistics, sys
rows = [tuple(map(float, line.split())) for line in open(sys.argv[1])]
print(f"median jemalloc/glibc for fanout run: {statistics.median(r[1] / r[0] for r in rows):.2f}")
PY

python3 - "$work/throughput" "$work/memory" <<'PY'
import statistics, sys
rows = [tuple(map(float, line.split())) for line in open(sys.argv[1])]
glibc = statistics.median(r[0] for r in rows)
jemalloc = statistics.median(r[1] for r in rows)
ratios = statistics.median(r[1] / r[0] for r in rows)
memory = dict(line.split() for line in open(sys.argv[2]))
print(f"\nmedian requests/s: glibc {glibc:,.0f}, jemalloc {jemalloc:,.0f}; jemalloc/glibc {ratios:.2f} (median of runs)")
print(f"peak RSS with 100k in flight: glibc {int(memory['glibc'])/1024:.1f} MB, jemalloc {int(memory['jemalloc'])/1024:.1f} MB")
PY
