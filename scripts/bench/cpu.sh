#!/usr/bin/env bash
# What each end costs at equal load (issue #65): CPU µs a request, Fanout beside the C peer that
# does the same job, at the same load, rounds alternating, in one run.
#
#   server   h2load drives `fanout sink` (validation on, auth off) and nghttpd (one small file);
#            the server's CPU a request from /proc/PID/stat (user + system), across the h2load
#            run, both servers started once
#   client   `fanout send` and h2load against the same nghttpd, one device whose path exists
#            (200s): the client's CPU a request (user + system, /usr/bin/time), start-up and,
#            for `fanout send`, its run folder (summary.json, report.html, latency.hlog) included:
#            what Fanout does that h2load does not is counted against Fanout
#
# each in h2c and TLS (one self-signed P-256 certificate, ALPN h2), flat out (8 connections ×
# 100 streams) and paced at RATE a second (h2load --rps RATE/8 a client, `fanout send --rate
# RATE`), REQUESTS a run. Each cell prints every round's pair and then the median and range of
# the rounds' ratios (Fanout ÷ peer; the target is ≤ 0.5). Then the paced client again with
# `fanout send --coalesce 1ms` and `10ms` (h2load --rps sends a client's requests in bursts 10 ms
# apart; Fanout's default window against a server this fast is 200 µs): what the pacing's grain
# costs. Fails when a run does not complete (every request answered 2xx, every notification
# accepted). ONLY=grain runs the last part alone.
#
# Throughput pairs (scripts/bench/sink.sh, http2.sh) are bounded by the program at the other end
# on two cores — h2load runs at 94–98% of a core driving either server — so they cannot show
# which end is cheaper: this can, as each program's own CPU a request at the same load.
#
#   [FANOUT=BINARY] [ONLY=grain] scripts/bench/cpu.sh [ROUNDS=5] [REQUESTS=300000] [RATE=50000]
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-5}
requests=${2:-300000}
rate=${3:-50000}
[[ $rounds =~ ^[1-9][0-9]*$ && $requests =~ ^[1-9][0-9]*$ && $rate =~ ^[1-9][0-9]*$ ]] || {
    echo "usage: scripts/bench/cpu.sh [ROUNDS=5] [REQUESTS=300000] [RATE=50000] (whole numbers above 0)" >&2
    exit 2
}
. scripts/lib/peers.sh
. scripts/lib/ratios.sh
command -v /usr/bin/time >/dev/null || { echo "needs /usr/bin/time: apt-get install -y time" >&2; exit 2; }
release_fanout
body=$PWD/fixtures/poll.json
device=$(printf 'ab%.0s' $(seq 32))
hz=$(getconf CLK_TCK)

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=localhost \
    -addext subjectAltName=IP:127.0.0.1 -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null
mkdir -p "$work/www/3/device" && printf '{}' >"$work/www/3/device/$device"
python3 -c "import sys; sys.stdout.write('$device\n' * $requests)" >"$work/tokens.txt"

# The servers, each started once: nghttpd and the sink, h2c and TLS.
nghttpd --no-tls -d "$work/www" "$(free_port | tee "$work/port.nghttpd-h2c")" >/dev/null 2>&1 &
pids+=($!) && echo $! >"$work/pid.nghttpd-h2c"
nghttpd -d "$work/www" "$(free_port | tee "$work/port.nghttpd-tls")" "$work/key.pem" "$work/cert.pem" >/dev/null 2>&1 &
pids+=($!) && echo $! >"$work/pid.nghttpd-tls"
start_sink sink-h2c
echo "$sink_port" >"$work/port.sink-h2c" && echo "$sink_pid" >"$work/pid.sink-h2c"
start_sink sink-tls --tls-cert "$work/cert.pem" --tls-key "$work/key.pem"
echo "$sink_port" >"$work/port.sink-tls" && echo "$sink_pid" >"$work/pid.sink-tls"
for server in nghttpd-h2c nghttpd-tls; do wait_port "$(cat "$work/port.$server")"; done

# url SERVER: the device's URL on SERVER (nghttpd-h2c, nghttpd-tls, sink-h2c, sink-tls).
url() {
    local scheme=http
    [[ $1 == *-tls ]] && scheme=https
    echo "$scheme://127.0.0.1:$(cat "$work/port.$1")/3/device/$device"
}

# process_cpu PID: the process's CPU seconds so far (user + system).
process_cpu() { awk -v hz="$hz" '{print ($14 + $15) / hz}' "/proc/$1/stat"; }

# pace MODE: h2load's options for MODE (flat, or paced at RATE split over its 8 clients).
pace() { [ "$1" = paced ] && echo "--rps $((rate / 8))"; true; }

# h2load_run MODE URL: runs h2load; fails unless every request was answered 2xx.
h2load_run() {
    # shellcheck disable=SC2046
    /usr/bin/time -f '%U %S' -o "$work/time" h2load -n "$requests" -c 8 -m 100 -t 1 $(pace "$1") -d "$body" \
        -H 'apns-topic: com.example.app' -H 'apns-push-type: alert' "$2" >"$work/h2load.out" 2>&1 || true
    grep -q "status codes: $requests 2xx" "$work/h2load.out" || {
        echo "h2load $1 → $2: not every request was answered 2xx:" >&2
        cat "$work/h2load.out" >&2
        exit 1
    }
}

# server_cost MODE SERVER: SERVER's CPU µs a request under h2load in MODE.
server_cost() {
    local pid before after
    pid=$(cat "$work/pid.$2")
    before=$(process_cpu "$pid")
    h2load_run "$1" "$(url "$2")"
    after=$(process_cpu "$pid")
    python3 -c "print(f'{($after - $before) * 1e6 / $requests:.3f}')"
}

# client_cost MODE CLIENT SECURITY [OPTION...]: CLIENT's (h2load or fanout) CPU µs a request
# against nghttpd-SECURITY in MODE; OPTIONS go to `fanout send`.
client_cost() {
    local mode=$1 client=$2 server=nghttpd-$3 extra=("${@:4}")
    if [ "$client" = h2load ]; then
        h2load_run "$mode" "$(url "$server")"
    else
        local options=(--connections 8 --streams 100)
        [ "$mode" = paced ] && options+=(--rate "$rate/s")
        [ "$3" = tls ] && options+=(--ca-file "$work/cert.pem")
        options+=("${extra[@]}")
        local endpoint
        endpoint=$(url "$server")
        endpoint=${endpoint%/3/device/*}
        rm -rf "$work/send"
        /usr/bin/time -f '%U %S' -o "$work/time" "$fanout" send --endpoint "$endpoint" --tokens "$work/tokens.txt" \
            --template "$body" --topic com.example.app "${options[@]}" --quiet --output "$work/send" \
            >"$work/send.out" 2>&1 || true
        python3 - "$work/send/summary.json" "$requests" <<'PY' || { cat "$work/send.out" >&2; exit 1; }
import json, sys
try:
    summary = json.load(open(sys.argv[1]))
except OSError as error:
    sys.exit(f"fanout send wrote no summary: {error}")
if summary["accepted"] != int(sys.argv[2]):
    sys.exit(f"fanout send: {summary['accepted']} of {sys.argv[2]} accepted")
PY
    fi
    # The last line: /usr/bin/time writes "Command exited with non-zero status N" above it.
    awk -v n="$requests" 'END {printf "%.3f\n", ($1 + $2) * 1e6 / n}' "$work/time"
}

# cell NAME PEER-COMMAND FANOUT-COMMAND: ROUNDS alternating rounds (the peer first in odd
# rounds, Fanout first in even ones); prints each and the median and range of the ratios.
cell() {
    local name=$1 peer=$2 ours=$3 round a b
    : >"$work/ratios"
    for round in $(seq "$rounds"); do
        # A failed run ends the script here (a substitution's exit does not reach `set -e`
        # through `&&`).
        if ((round % 2)); then
            a=$($peer) || exit 1
            b=$($ours) || exit 1
        else
            b=$($ours) || exit 1
            a=$($peer) || exit 1
        fi
        printf '  %-28s round %d: %8s µs  %8s µs  %6s×\n' "$name" "$round" "$a" "$b" "$(ratio_of "$a" "$b" 2)"
        ratio_of "$a" "$b" 4 >>"$work/ratios"
    done
    read -r median count least most <<<"$(median_ratio "$work/ratios" 2)"
    printf '%-30s median %s× (%s rounds, %s–%s), target ≤ 0.5\n' "$name" "$median" "$count" "$least" "$most"
}

echo "CPU µs a request, $requests requests a run, $rounds alternating rounds; paced = $rate/s; 8 × 100"
if [ "${ONLY:-}" != grain ]; then
    echo "server: h2load → nghttpd, → fanout sink (peer µs, Fanout µs, Fanout ÷ peer)"
    for security in h2c tls; do
        for mode in flat paced; do
            cell "server $security $mode" "server_cost $mode nghttpd-$security" "server_cost $mode sink-$security"
        done
    done
    echo "client: h2load → nghttpd, fanout send → nghttpd"
    for security in h2c tls; do
        for mode in flat paced; do
            cell "client $security $mode" "client_cost $mode h2load $security" "client_cost $mode fanout $security"
        done
    done
fi
echo "the paced client at h2load's grain: h2load --rps, fanout send --rate --coalesce W → nghttpd (h2c)"
for window in 1ms 10ms; do
    cell "client h2c paced, $window" "client_cost paced h2load h2c" "client_cost paced fanout h2c --coalesce $window"
done
