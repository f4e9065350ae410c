#!/usr/bin/env bash
# The two ratio pairs of two builds of fanout, alternating in one run, RUNS times:
#   sink pair: h2load -n 400000 -c 8 -m 100 -t 1 → `fanout sink` (each build) ÷ the same → nghttpd
#   send pair: `fanout send` (each build) → nghttpd, 4 × 100, one device, 1M notifications ÷
#              h2load -n 1000000 -c 4 -m 100 -t 1 → the same nghttpd
# Prints each run's rates and ratios; a build's ratio moving by more than the runs' spread is a
# change of its own, not the machine's.
#
#   scripts/bench/ratios.sh OLD-FANOUT NEW-FANOUT [RUNS=3]
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -ge 2 ] || { echo "usage: scripts/bench/ratios.sh OLD-FANOUT NEW-FANOUT [RUNS]" >&2; exit 2; }
OLD=$1 NEW=$2 runs=${3:-3}
command -v h2load >/dev/null && command -v nghttpd >/dev/null || {
    echo "needs h2load and nghttpd: apt-get install -y nghttp2-client nghttp2-server" >&2
    exit 2
}
NP=
W=$(mktemp -d); trap '[ -n "$NP" ] && kill $NP 2>/dev/null; rm -rf $W' EXIT
dev=$(printf 'ab%.0s' $(seq 32)); mkdir -p $W/www/3/device; printf '{}' > $W/www/3/device/$dev
python3 -c "import sys; sys.stdout.write('$dev\n' * 1000000)" > $W/one.txt
nghttpd --no-tls -d $W/www 18555 >/dev/null 2>&1 & NP=$!; sleep 0.5
rate() { grep -o "finished in [0-9.]*m\?s, [0-9.]* req/s" | awk '{print int($4)}'; }
for i in $(seq "$runs"); do
  n=$(h2load -n 400000 -c 8 -m 100 -t 1 -d fixtures/poll.json http://127.0.0.1:18555/3/device/$dev 2>&1 | rate)
  line="run $i  sink pair: nghttpd $n"
  for b in old new; do
    F=$OLD; [ $b = new ] && F=$NEW
    $F sink --listen 127.0.0.1:18666 --no-auth >/dev/null 2>&1 & SP=$!; sleep 0.5
    s=$(h2load -n 400000 -c 8 -m 100 -t 1 -d fixtures/poll.json -H "apns-topic: com.example.app" -H "apns-push-type: alert" http://127.0.0.1:18666/3/device/$dev 2>&1 | rate)
    kill $SP; wait $SP 2>/dev/null || true
    line="$line  $b $s ($(python3 -c "print(f'{$s/$n:.3f}')"))"
  done
  echo "$line"
  h=$(h2load -n 1000000 -c 4 -m 100 -t 1 -d fixtures/poll.json http://127.0.0.1:18555/3/device/$dev 2>&1 | rate)
  line="run $i  send pair: h2load $h"
  for b in old new; do
    F=$OLD; [ $b = new ] && F=$NEW
    $F send --endpoint http://127.0.0.1:18555 --tokens $W/one.txt --template fixtures/poll.json --topic com.example.app --connections 4 --streams 100 --output $W/s-$b-$i >/dev/null 2>&1 || true
    t=$(python3 -c "import json; s=json.load(open('$W/s-$b-$i/summary.json')); assert s['accepted']==1000000; print(int(s['throughput_per_second']))")
    line="$line  $b $t ($(python3 -c "print(f'{$t/$h:.3f}')"))"
  done
  echo "$line"
done
