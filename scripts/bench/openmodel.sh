#!/usr/bin/env bash
# What load at real round trips costs, Fanout beside h2load, in one run (alternating):
#   1. the open model against nghttpd, 4 connections × 100 streams, one device whose path
#      exists (200s), SECONDS s at each offered rate: process CPU (user + sys, /usr/bin/time)
#      a request, `h2load --rps RATE/4` (a client each) against `fanout send --rate RATE`;
#      at 1,000/s the share of a core each keeps busy;
#   2. the endpoint's side of pacing: nghttpd's CPU a request (/proc/PID/stat) at 20,000/s under
#      each;
#   3. the coalescing window's trade at 5,000/s: `fanout send --coalesce W` for W from 0s to
#      10ms (h2load paces --rps in bursts up to 10 ms apart): CPU a request, send lateness p99;
#   4. jitter: `fanout run --tls --count 200000` with the sink answering after fixed:80ms and
#      after lognormal:80ms,0.25 (the same median, APNs-like spread): the sender's and the
#      sink's CPU µs a notification (summary.json's cpu), then the same with the sink's
#      coalescing off (--sink-coalesce 0).
#   5. APNs's round trip: against `fanout sink --latency fixed:80ms` and `lognormal:80ms,0.25`
#      (LATENCIES), 4 connections (CONNECTIONS) × 1000 streams, at 20,000/s and 5,000/s (RATES):
#      five alternating pairs of `h2load --rps RATE/CONNECTIONS` and `fanout send --rate RATE`
#      (--coalesce auto), process CPU a notification of each and the median of the pairs'
#      ratios, Fanout's p50 and send lateness p99; then Fanout alone at 1,000/s, the share of a
#      core. 50,000/s needs 8 connections: 4 × 1000 streams hold 4,000 in flight, and 50,000/s
#      answered after 80 ms keeps 4,000 and more in flight (Little's law).
# Prints the tables; fails only when a run does not complete (every request answered 200).
#
#   [FANOUT=BINARY] [ONLY=rtt] [RATES="20000 5000"] [CONNECTIONS=4] [LATENCIES="fixed:80ms …"]
#       scripts/bench/openmodel.sh [SECONDS=10]
# ONLY=rtt runs the fifth table alone; RATES, CONNECTIONS and LATENCIES shape it, e.g.
#   ONLY=rtt RATES="50000 20000 5000" CONNECTIONS=8 LATENCIES=fixed:80ms scripts/bench/openmodel.sh
# (issue #65's target: at most 1.5× h2load's CPU a notification at each rate).
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-10}
. scripts/lib/peers.sh

release_fanout
body=$PWD/fixtures/poll.json
device=$(printf 'ab%.0s' $(seq 32))
mkdir -p "$work/www/3/device" && printf '{}' >"$work/www/3/device/$device"
port=$(free_port)
nghttpd --no-tls -d "$work/www" "$port" >/dev/null 2>&1 &
nghttpd_pid=$!
pids+=("$nghttpd_pid")
wait_port "$port"
url="http://127.0.0.1:$port/3/device/$device"
python3 -c "import sys; sys.stdout.write('$device\n' * 1500000)" >"$work/tokens.txt"

# CPU seconds (user + sys) of the command after `--`, its output in $work/out.
cpu_of() {
    /usr/bin/time -f '%U %S' -o "$work/time" "$@" >"$work/out" 2>&1 || {
        echo "failed: $*" >&2
        tail -5 "$work/out" >&2
        exit 1
    }
    awk '{print $1 + $2}' "$work/time"
}

# nghttpd's CPU seconds so far (utime + stime, clock ticks).
nghttpd_cpu() {
    awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) / hz}' "/proc/$nghttpd_pid/stat"
}

h2load_run() { # RATE → CPU seconds; checks every request succeeded
    local rate=$1 n=$(($1 * seconds))
    local cpu
    cpu=$(cpu_of h2load -n "$n" -c 4 -m 100 -t 1 --rps $((rate / 4)) -d "$body" "$url")
    grep -q "$n succeeded, 0 failed" "$work/out" || { echo "h2load: not every request succeeded" >&2; cat "$work/out" >&2; exit 1; }
    echo "$cpu"
}

fanout_run() { # RATE [OPTIONS...] → CPU seconds; checks every notification was accepted
    local rate=$1 n=$(($1 * seconds))
    shift
    local cpu
    head -n "$n" "$work/tokens.txt" >"$work/rate.txt"
    rm -rf "$work/send-$rate"
    cpu=$(cpu_of "$fanout" send --endpoint "http://127.0.0.1:$port" --tokens "$work/rate.txt" \
        --template "$body" --topic com.example.app --connections 4 --streams 100 \
        --rate "$rate/s" --output "$work/send-$rate" "$@")
    python3 -c "import json,sys; s=json.load(open('$work/send-$rate/summary.json')); sys.exit(0 if s['accepted']==$n else 1)" ||
        { echo "fanout send at $rate/s: not every notification was accepted" >&2; exit 1; }
    echo "$cpu"
}

per_request() { python3 -c "print(f'{$1 * 1e6 / $2:.2f}')"; }

# The fifth table: Fanout and h2load against a sink 80 ms away.
round_trips() {
    local latency rate pair sink_port sink_pid n device sink_url connections=${CONNECTIONS:-4}
    [[ $connections =~ ^[1-9][0-9]*$ ]] || { echo "CONNECTIONS is a whole number above 0, not '$connections'" >&2; exit 2; }
    device=$(printf 'cd%.0s' $(seq 32))
    local most=0
    for rate in ${RATES:-20000 5000}; do
        [[ $rate =~ ^[1-9][0-9]*$ ]] || { echo "RATES are whole numbers above 0, not '$rate'" >&2; exit 2; }
        ((rate * seconds > most)) && most=$((rate * seconds))
    done
    python3 -c "import sys; sys.stdout.write('$device\n' * max($most, 1000 * $seconds))" >"$work/rtt-tokens.txt"
    echo "APNs's round trip: fanout sink --latency L, $connections connections × 1000 streams, $seconds s a run, 5 alternating pairs"
    printf '%-22s %9s %13s %13s %8s %10s %14s\n' "sink latency" rate "h2load µs" "fanout µs" ratio "fanout p50" "lateness p99"
    for latency in ${LATENCIES:-fixed:80ms lognormal:80ms,0.25}; do
        "$fanout" sink --listen 127.0.0.1:0 --no-auth --latency "$latency" >"$work/rtt-sink.log" 2>&1 &
        sink_pid=$!
        pids+=("$sink_pid")
        for _ in $(seq 100); do
            sink_port=$(sed -n 's/^listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$work/rtt-sink.log" | head -1)
            [ -n "$sink_port" ] && break
            sleep 0.1
        done
        [ -n "$sink_port" ] || { echo "the sink did not start" >&2; cat "$work/rtt-sink.log" >&2; exit 1; }
        sink_url="http://127.0.0.1:$sink_port/3/device/$device"
        for rate in ${RATES:-20000 5000}; do
            n=$((rate * seconds))
            head -n "$n" "$work/rtt-tokens.txt" >"$work/rtt-rate.txt"
            ratios=() h_all=() f_all=()
            for pair in 1 2 3 4 5; do
                h=$(cpu_of h2load -n "$n" -c "$connections" -m 1000 -t 1 --rps $((rate / connections)) -d "$body" \
                    -H 'apns-topic: com.example.app' "$sink_url")
                grep -q "$n succeeded, 0 failed" "$work/out" || { echo "h2load: not every request succeeded" >&2; cat "$work/out" >&2; exit 1; }
                rm -rf "$work/rtt-send"
                f=$(cpu_of "$fanout" send --endpoint "http://127.0.0.1:$sink_port" --tokens "$work/rtt-rate.txt" \
                    --template "$body" --topic com.example.app --connections "$connections" --streams 1000 \
                    --rate "$rate/s" --output "$work/rtt-send")
                read -r accepted p50 late < <(python3 -c "import json; s=json.load(open('$work/rtt-send/summary.json')); print(s['accepted'], s['latency_ms']['p50'], s['harness']['sender']['send_lateness_ms']['p99'])")
                [ "$accepted" = "$n" ] || { echo "fanout send: $accepted of $n accepted" >&2; exit 1; }
                hp=$(per_request "$h" "$n") fp=$(per_request "$f" "$n")
                ratios+=("$(python3 -c "print($fp / $hp)")")
                printf '%-22s %7s/s %10s µs %10s µs %7s× %7s ms %11s ms\n' "$latency" "$rate" "$hp" "$fp" \
                    "$(python3 -c "print(f'{$fp / $hp:.2f}')")" "$p50" "$late"
            done
            echo "  median ratio at $rate/s against $latency: $(python3 -c "import statistics; print(f'{statistics.median([$(IFS=,; echo "${ratios[*]}")]):.2f}')")×"
        done
        n=$((1000 * seconds))
        head -n "$n" "$work/rtt-tokens.txt" >"$work/rtt-rate.txt"
        rm -rf "$work/rtt-send"
        f=$(cpu_of "$fanout" send --endpoint "http://127.0.0.1:$sink_port" --tokens "$work/rtt-rate.txt" \
            --template "$body" --topic com.example.app --connections "$connections" --streams 1000 \
            --rate "1000/s" --output "$work/rtt-send")
        echo "  at 1,000/s against $latency: fanout send keeps $(python3 -c "print(f'{$f / $seconds * 100:.1f}')")% of a core busy"
        kill "$sink_pid" 2>/dev/null || true
        wait "$sink_pid" 2>/dev/null || true
    done
}

if [ "${ONLY:-}" = rtt ]; then
    round_trips
    exit 0
fi

echo "open model against nghttpd, 4 connections × 100 streams, $seconds s a rate (process CPU a request):"
printf '%12s %18s %18s %8s\n' "rate" "h2load --rps" "fanout send --rate" ratio
for rate in 5000 50000 100000; do
    h=$(h2load_run "$rate")
    f=$(fanout_run "$rate")
    hp=$(per_request "$h" $((rate * seconds)))
    fp=$(per_request "$f" $((rate * seconds)))
    printf '%10s/s %15s µs %15s µs %7s×\n' "$rate" "$hp" "$fp" "$(python3 -c "print(f'{$fp / $hp:.2f}')")"
done
h=$(h2load_run 1000)
f=$(fanout_run 1000)
printf '%10s/s %14s%% %17s%% of a core\n' 1000 \
    "$(python3 -c "print(f'{$h / $seconds * 100:.1f}')")" "$(python3 -c "print(f'{$f / $seconds * 100:.1f}')")"

echo
echo "nghttpd's CPU a request at 20,000/s:"
before=$(nghttpd_cpu); h2load_run 20000 >/dev/null; after=$(nghttpd_cpu)
under_h2load=$(python3 -c "print(f'{($after - $before) * 1e6 / (20000 * $seconds):.2f}')")
before=$(nghttpd_cpu); fanout_run 20000 >/dev/null; after=$(nghttpd_cpu)
under_fanout=$(python3 -c "print(f'{($after - $before) * 1e6 / (20000 * $seconds):.2f}')")
echo "  under h2load --rps: $under_h2load µs   under fanout send --rate: $under_fanout µs" \
    "($(python3 -c "print(f'{$under_fanout / $under_h2load:.2f}')")×)"

echo
echo "the coalescing window at 5,000/s (fanout send --coalesce W; h2load --rps bursts every 10 ms):"
printf '%12s %16s %22s\n' "--coalesce" "CPU a request" "send lateness p99"
for window in 0s 200us 1ms 2ms 10ms; do
    f=$(fanout_run 5000 --coalesce "$window")
    late=$(python3 -c "import json; h=json.load(open('$work/send-5000/summary.json'))['harness']['sender']; print(h['send_lateness_ms']['p99'])")
    printf '%12s %13s µs %19s ms\n' "$window" "$(per_request "$f" $((5000 * seconds)))" "$late"
done

echo
echo "jitter: fanout run --tls --count 200000, CPU µs a notification (sender, sink):"
jitter() { # LABEL [OPTIONS...]
    local label=$1
    shift
    for latency in fixed:80ms lognormal:80ms,0.25; do
        folder="$work/jitter-${latency%%:*}"
        rm -rf "$folder"
        "$fanout" run --tls --count 200000 --sink-latency "$latency" --output "$folder" "$@" >/dev/null
        python3 - "$folder/summary.json" "$latency" "$label" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
assert s["accepted"] == 200000 and s["reconciled"], "the run did not complete"
c = s["cpu"]
print(f"  {sys.argv[3]:<18} {sys.argv[2]:<20} sender {c['sender_us_per_notification']:.2f}"
      f"   sink {c['sink_us_per_notification']:.2f}   p50 {s['latency_ms']['p50']:.1f} ms   p99 {s['latency_ms']['p99']:.1f} ms")
EOF
    done
}
jitter "coalescing"
jitter "--sink-coalesce 0" --sink-coalesce 0

echo
round_trips
