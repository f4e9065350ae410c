#!/usr/bin/env bash
# The FCM sink's project quota against physics: h2load offers OFFERED sends a second for
# SECONDS to `fanout sink --service fcm --fcm-quota QUOTA/1m` (one body, one device: the device
# rates off), and the sink's summary is checked against what a window from the first counted
# message allows: accepted = QUOTA × the windows the run opened (the last one partly, when the
# run ends inside it), every other send answered 429 (h2load's 4xx), none lost.
#
#   [FANOUT=BINARY] scripts/bench/fcm-quota.sh [OFFERED=10000] [SECONDS=120] [QUOTA=300000]
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib/peers.sh
offered=${1:-10000}
seconds=${2:-120}
quota=${3:-300000}
release_fanout
body=$work/message.json
printf '%s' '{"message":{"token":"fcm-registration-token-quota","data":{"match":"42"}}}' >"$body"
start_sink fcm --service fcm --no-auth --fcm-quota "$quota/1m" --fcm-device-limits off
total=$((offered * seconds))
# 10 connections × 100 streams, each connection paced at a tenth of the rate.
out=$(h2load -n "$total" -c 10 -m 100 -t 1 --rps $((offered / 10)) -d "$body" \
    -H 'authorization: Bearer any' -H 'content-type: application/json' \
    "http://127.0.0.1:$sink_port/v1/projects/fanout-fcm/messages:send")
kill -TERM "$sink_pid"
wait "$sink_pid" || true
forget "$sink_pid"
elapsed=$(awk '/^finished in/ {print $3}' <<<"$out" | tr -d 's,')
codes=$(grep '^status codes:' <<<"$out")
summary=$(cat "$work/fcm.out")
echo "h2load: $total sends offered at $offered/s in ${elapsed}s; $codes"
echo "$summary" | grep -E 'fcm sink|delivered'
python3 - "$total" "$elapsed" "$quota" "$summary" <<'PY'
import math, re, sys
total, elapsed, quota, summary = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
counts = dict((name, int(value.replace(",", ""))) for name, value in re.findall(r"(\w+) ([\d,]+)", summary))
delivered, refused = counts.get("delivered", 0), counts.get("quota_exceeded", 0)
windows = math.ceil(elapsed / 60)
print(f"delivered {delivered:,} in {windows} window(s) of 60 s: at most {windows * quota:,}; 429 {refused:,}; sum {delivered + refused:,} of {total:,}")
ok = delivered <= windows * quota and delivered + refused == total and delivered >= (windows - 1) * quota
print("quota holds" if ok else "QUOTA BROKEN")
sys.exit(0 if ok else 1)
PY
