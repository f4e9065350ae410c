#!/usr/bin/env bash
# The FCM sender beside h2load, at the same FCM sink: `fanout send --service fcm` of REQUESTS
# generated registration tokens (fixtures/fcm-poll.json, a send request per token, a fixed
# bearer) versus h2load posting the same poll body REQUESTS times, each with 4 connections of
# 100 streams (FCM's) and one thread, runs alternating. The sink is `fanout sink --service fcm
# --no-auth --fcm-quota off --fcm-device-limits off` on its own event loop. Both are bounded by
# the sink on two cores, so beside the rates each run gives the client's CPU a request
# (`/usr/bin/time`'s user + system over REQUESTS), the figure that says what the sender costs.
#
#   [FANOUT=BINARY] scripts/bench/fcm-send.sh [RUNS=5] [REQUESTS=1000000]
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib/peers.sh
. scripts/lib/ratios.sh
paired_start "${1:-5}" "${2:-1000000}"
start_sink fcm --service fcm --no-auth --fcm-quota off --fcm-device-limits off --project fanout-fcm
body=$work/fcm-send.json
# h2load's one body: the poll as the sender writes it for one token.
printf '%s' '{"message":{"token":"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef","notification":{"title":"Poll","body":"Do you like the new design?"},"data":{"category":"poll","ok":"https://example.com/ok","nok":"https://example.com/nok"},"android":{"priority":"high","notification":{"click_action":"poll","sound":"default"}}}}' >"$body"
url=http://127.0.0.1:$sink_port/v1/projects/fanout-fcm/messages:send

# h2load_run: "RATE CPU-µs-a-request" for h2load, every answer a 200.
h2load_run() {
    local out
    out=$( { /usr/bin/time -f 'time-cpu %U %S' h2load -n "$requests" -c 4 -m 100 -t 1 -d "$body" \
        -H 'authorization: Bearer any' -H 'content-type: application/json' "$url"; } 2>&1)
    grep -q "status codes: $requests 2xx" <<<"$out" || { echo "h2load: not every answer was 2xx:" >&2; echo "$out" >&2; exit 1; }
    awk -v n="$requests" '/^finished in/ {rate = $4} /^time-cpu / {cpu = ($2 + $3) * 1e6 / n} END {printf "%.0f %.2f\n", rate, cpu}' <<<"$out"
}

# fanout_run: the same for `fanout send --service fcm`, every notification accepted.
fanout_run() {
    local folder=$work/send-$RANDOM
    { /usr/bin/time -f 'time-cpu %U %S' "$fanout" send --service fcm --endpoint "http://127.0.0.1:$sink_port" \
        --project fanout-fcm --fcm-bearer any --template fixtures/fcm-poll.json --generate "$requests" \
        --connections 4 --streams 100 --threads 1 --output "$folder"; } >"$work/send.out" 2>&1
    python3 - "$folder/summary.json" "$requests" "$work/send.out" <<'PY' || { cat "$work/send.out" >&2; exit 1; }
import json, sys
summary = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
if summary["accepted"] != n:
    sys.exit(f"fanout send: {summary['accepted']} of {n} accepted")
cpu = next(line for line in open(sys.argv[3]) if line.startswith("time-cpu "))
user, system = map(float, cpu.split()[1:3])
print(f"{n / summary['elapsed_seconds']:.0f} {(user + system) * 1e6 / n:.2f}")
PY
    rm -rf "$folder"
}

printf '%-4s %12s %12s %16s %16s\n' run "h2load /s" "fanout /s" "h2load µs/req" "fanout µs/req"
rates=$work/rates
for run in $(seq "$runs"); do
    # A failed run (its message on standard error) stops the benchmark: an empty line here.
    h=$(h2load_run) && [ -n "$h" ] || exit 1
    f=$(fanout_run) && [ -n "$f" ] || exit 1
    read -r hr hc <<<"$h"
    read -r fr fc <<<"$f"
    printf '%-4s %12s %12s %16s %16s\n' "$run" "$hr" "$fr" "$hc" "$fc"
    echo "$hr $fr $hc $fc" >>"$rates"
done
python3 - "$rates" <<'PY'
import statistics, sys
rows = [list(map(float, line.split())) for line in open(sys.argv[1])]
col = lambda i: [r[i] for r in rows]
m = lambda i: statistics.median(col(i))
print(f"medians: h2load {m(0):,.0f}/s, fanout send --service fcm {m(1):,.0f}/s ({m(1) / m(0):.2f}×); "
      f"client CPU a request: h2load {m(2):.2f} µs ({min(col(2)):.2f}–{max(col(2)):.2f}), "
      f"fanout {m(3):.2f} µs ({min(col(3)):.2f}–{max(col(3)):.2f}), {m(3) / m(2):.2f}×")
PY
