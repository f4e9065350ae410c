#!/usr/bin/env bash
# The sink's throughput with its devices engaging beside the same fleet without (issue #63 asks
# ≥ 0.9×), and beside a sink without a fleet: h2load -c 8 -m 100 -t 1 over 10,000 distinct
# device tokens, against `fanout sink` (one event loop, auth off) with a fleet (a log-normal
# delivery delay, as scripts/bench/sink-devices.sh's), and the same with its devices engaging —
# 3% opening an hour later by OK (60%) or NOK (30%), four requests an open, held as return
# events — runs alternating. Two bodies: the poll without mutable-content (only the opens, held:
# engagement's own part at the sink) and fixtures/poll.json (mutable-content: every delivery's
# media download goes to nginx at once, so the return wave runs beside the sink on the same two
# cores). Prints each pair and the median ratios; the engaging sink's return-wave lines.
#
# It also keeps a CPU account (what the ratio costs, and where): each run's CPU time of the
# sinks (each one's event loop, its return wave's, its other threads), nginx, h2load and the rest
# of the machine, µs a notification, medians. The back-to-back runs (fleet and engaging, without
# media and with) are read while h2load runs (a run's downloads still due then spill into the
# next runs, the other sink's too); then the pairs with media again, each run alone (started
# once the sinks and nginx are quiet, read again once they are quiet again: everything a run set
# going, downloads included, less their idle rates), from which: the sink's loop alone (the wave
# and nginx on cores of their own), and the ceiling on the two cores all share.
#
# RETURN_HTTP=2 sends the wave over HTTP/2 (nginx's h2c port, `--return-http 2`).
#
#   [FANOUT=BINARY] [RETURN_HTTP=1.1|2] scripts/bench/sink-engagement.sh [RUNS=5] [REQUESTS=200000]
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib/peers.sh
. scripts/lib/ratios.sh
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (h2load's CPU): apt-get install -y time" >&2; exit 2; }
paired_start "$@"

# nginx answering every path itself: the backend the media downloads go to (h2c on a second port).
h2_port=$(free_port)
start_nginx "server { listen 127.0.0.1:$h2_port http2; location / { return 200 \"ok\"; } }"
nginx_pid=${pids[-1]}
wait_port "$h2_port"
return_http=${RETURN_HTTP:-1.1}
backend_port=$nginx_port
[ "$return_http" = 2 ] && backend_port=$h2_port

fleet=(--device-delay lognormal:300ms,0.5)
engaging=("${fleet[@]}" --device-open 3% --device-open-after fixed:1h --device-actions OK=60%,NOK=30%
    --device-requests-per-open 4 --return-to "http://127.0.0.1:$backend_port" --return-http "$return_http")
start_sink plain
plain_port=$sink_port
start_sink fleet "${fleet[@]}"
fleet_port=$sink_port
fleet_pid=$sink_pid
start_sink engaging "${engaging[@]}"
engaging_port=$sink_port
engaging_pid=$sink_pid

python3 - "$plain_port" "$fleet_port" "$engaging_port" "$work" <<'PY'
import sys
for name, port in (("plain", sys.argv[1]), ("fleet", sys.argv[2]), ("engaging", sys.argv[3])):
    with open(f"{sys.argv[4]}/{name}.uris", "w") as out:
        for i in range(10000):
            print(f"http://127.0.0.1:{port}/3/device/{i:064x}", file=out)
PY
sed 's/,"mutable-content":1//' "$body" >"$work/plain-poll.json"

# rate URIS BODY: h2load's requests a second, every request answered; h2load's own CPU (user,
# system seconds) in $work/h2load.time, for the CPU account.
rate() {
    local out
    out=$(/usr/bin/time -f '%U %S' -o "$work/h2load.time" h2load -n "$requests" -c 8 -m 100 -t 1 -d "$2" \
        -H 'apns-topic: com.example.app' -H 'apns-push-type: alert' -i "$1")
    grep -q "$requests done, $requests succeeded" <<<"$out" || { echo "h2load: not every request succeeded:" >&2; echo "$out" >&2; exit 1; }
    awk '/^finished in/ {print $4}' <<<"$out"
}

# The CPU account. cpu_snap LABEL PHASE appends to $cpu_log the CPU ticks so far (utime+stime
# from /proc: a process's count has its threads gone too) of each party and the machine's busy
# ticks, with the time: read with bash builtins only, so a reading starts no process and costs
# next to nothing. In a sink, the threads that accrue CPU are its NIO event loops: NIO-ELT-1-#1,
# the sink's own (made first: it alone works when the engaging sink's devices only open, later)
# and NIO-ELT-2-#1, the return wave's (it works on with nginx after a run with media); its other
# threads (Dispatch's, NIO's thread pool, the main one) take next to nothing.
cpu_log=$work/cpu.log
# ticks FILE: sets `t` to the utime+stime in a /proc stat FILE (fields 14 and 15; the name, in
# parentheses, may hold spaces).
ticks() {
    local line fields
    read -r line <"$1"
    read -ra fields <<<"${line##*) }"
    t=$((fields[11] + fields[12]))
}
# sink_ticks PID: sets `loop` (its first event loop's thread: the sink's), `wave` (its second's,
# 0 without one) and `other` (the rest of the process).
sink_ticks() {
    local task name loops=()
    for task in /proc/"$1"/task/*; do
        read -r name 2>/dev/null <"$task/comm" || continue # a thread gone meanwhile
        [[ $name =~ ^NIO-ELT-([0-9]+)-# ]] || continue
        ticks "$task/stat"
        loops[BASH_REMATCH[1]]=$t
    done
    loops=("${loops[@]}")
    loop=${loops[0]} wave=${loops[1]:-0}
    ticks "/proc/$1/stat"
    other=$((t - loop - wave))
}
# cpu_read: sets `cpu_line` (the parties' ticks and the machine's, KEY=VALUE) and `busy` (the
# sinks' and nginx's, together). nginx is one process: lib/peers.sh runs it without a master
# (master_process off), its one worker being itself.
cpu_read() {
    local loop wave other t cpu
    cpu_line="t=$EPOCHREALTIME"
    sink_ticks "$fleet_pid"
    cpu_line+=" fleet.loop=$loop fleet.other=$other"
    busy=$((loop + wave + other))
    sink_ticks "$engaging_pid"
    cpu_line+=" engaging.loop=$loop engaging.wave=$wave engaging.other=$other"
    busy=$((busy + loop + wave + other))
    ticks "/proc/$nginx_pid/stat"
    busy=$((busy + t))
    # Every CPU's busy ticks: user, nice, system, irq, softirq, steal.
    read -ra cpu </proc/stat
    cpu_line+=" nginx=$t machine=$((cpu[1] + cpu[2] + cpu[3] + cpu[6] + cpu[7] + cpu[8]))"
}
cpu_snap() {
    local cpu_line busy
    cpu_read
    echo "$1 $2 $cpu_line" >>"$cpu_log"
}
# cpu_quiet: waits until the sinks and nginx are quiet: at most 6 ticks (12% of a core) over
# the last 0.5 s (the engaging sink's idle rate, its wave's 1 ms tick, is about half that); at
# most 600 s.
cpu_quiet() {
    local seen=() cpu_line busy i
    for i in $(seq 2400); do
        cpu_read
        seen+=("$busy")
        if [ "$i" -gt 2 ] && [ $((seen[-1] - seen[-3])) -le 6 ]; then return 0; fi
        sleep 0.25
    done
    echo "the sinks and nginx are not quiet after 600 s: read as they are" >&2
}

# accounted LABEL [settle] RATE-COMMAND...: what RATE-COMMAND prints (a rate), the CPU read
# before and after it under LABEL, and h2load's own; with `settle`, started once all is quiet
# and read again once all is quiet again (what the run set going: downloads, deliveries).
accounted() {
    local label=$1 settle="" r
    shift
    if [ "$1" = settle ]; then settle=1 && shift && cpu_quiet; fi
    cpu_snap "$label" before
    r=$("$@")
    cpu_snap "$label" after
    if [ -n "$settle" ]; then cpu_quiet && cpu_snap "$label" settled; fi
    echo "$label h2load $(cat "$work/h2load.time")" >>"$cpu_log"
    echo "$label rate $r" >>"$cpu_log"
    echo "$r"
}

# cpu_report LABEL-PREFIX: the account of the runs logged under LABEL-PREFIX.fleet and
# .engaging: µs a notification, each party's median over the runs, while h2load ran; and,
# when they were read again once quiet, until then less the idle rates (logged under `idle`).
cpu_report() {
    python3 - "$cpu_log" "$1" "$requests" "$(getconf CLK_TCK)" <<'PY'
import statistics, sys

log, prefix, requests, tck = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
parties = ["fleet.loop", "fleet.other", "engaging.loop", "engaging.wave", "engaging.other", "nginx"]
names = {"fleet.loop": "fleet sink: loop", "fleet.other": "fleet sink: other threads",
         "engaging.loop": "engaging sink: loop", "engaging.wave": "engaging sink: return wave",
         "engaging.other": "engaging sink: other threads", "nginx": "nginx", "h2load": "h2load",
         "all": "all of these", "rest": "rest of the machine", "wall": "wall (× 2: the 2 cores' CPU)"}

# label -> its runs in order, a run {phase: {key: value}} from its "before" on.
runs = {}
for line in open(log):
    label, phase, *values = line.split()
    if phase == "before":
        runs.setdefault(label, []).append({})
    run = runs[label][-1]
    if phase == "h2load":
        run["h2load"] = (float(values[0]) + float(values[1])) * tck
    elif phase == "rate":
        run["rate"] = float(values[0])
    else:
        run[phase] = {k: float(v) for k, v in (kv.split("=") for kv in values)}
idle = runs.get("idle", [{}])[0]
rate = {k: (idle["after"][k] - idle["before"][k]) / (idle["after"]["t"] - idle["before"]["t"]) for k in parties} if idle else {}
us = lambda ticks: ticks * 1e6 / tck / requests


def account(run, phase):
    d = {k: run[phase][k] - run["before"][k] for k in parties + ["machine", "t"]}
    if phase == "settled":
        for k in parties:
            d[k] -= rate[k] * d["t"]
    out = {k: us(d[k]) for k in parties}
    out["h2load"] = us(run["h2load"])
    out["all"] = sum(out.values())
    if phase == "after":
        out["rest"] = us(d["machine"]) - out["all"]
        out["wall"] = 1e6 / run["rate"]
    return out


columns = {}
for side in ("fleet", "engaging"):
    for phase in ("after", "settled"):
        side_runs = runs[f"{prefix}.{side}"]
        if all(phase in run for run in side_runs):
            accounts = [account(run, phase) for run in side_runs]
            columns[side, phase] = {k: statistics.median(a[k] for a in accounts) for k in accounts[0]}
settled = ("fleet", "settled") in columns
width = 15 if settled else 9
print(f"  {'µs a notification':30} {'fleet':>{width}} {'engaging':>{width}}")
for key, name in names.items():
    cells = [" / ".join(f"{columns[side, phase][key]:5.2f}" for phase in ("after", "settled") if key in columns.get((side, phase), {}))
             for side in ("fleet", "engaging")]
    print(f"  {name:30} {cells[0]:>{width}} {cells[1]:>{width}}")
if settled:
    print("  (idle rates taken off, ms a second: " + ", ".join(f"{names[k]} {rate[k] * 1000 / tck:.1f}" for k in parties) + ")")
    fleet, engaging = columns["fleet", "settled"], columns["engaging", "settled"]
    print(f"the sink's loop alone (the wave and nginx on cores of their own): fleet ÷ engaging, µs a notification "
          f"until quiet, {fleet['fleet.loop']:.2f} ÷ {engaging['engaging.loop']:.2f} = {fleet['fleet.loop'] / engaging['engaging.loop']:.3f}")
    fleet_all = sum(fleet[k] for k in ("fleet.loop", "fleet.other", "h2load"))
    engaging_all = sum(engaging[k] for k in ("engaging.loop", "engaging.wave", "engaging.other", "nginx", "h2load"))
    print(f"2 cores, every party's CPU until quiet: fleet {fleet_all:.2f} µs a notification ({2e6 / fleet_all:,.0f}/s at most), "
          f"engaging {engaging_all:.2f} ({2e6 / engaging_all:,.0f}/s): ceiling {fleet_all / engaging_all:.3f}; the wave's one "
          f"thread alone keeps up with {1e6 / engaging['engaging.wave']:,.0f} notifications/s at most")
PY
}

echo "h2load -n $requests -c 8 -m 100 -t 1, 10,000 tokens"
echo "the poll without mutable-content: the opens held, nothing sent during the fan-out"
fleet_rate=(accounted nomedia.fleet rate "$work/fleet.uris" "$work/plain-poll.json")
engaged=(accounted nomedia.engaging rate "$work/engaging.uris" "$work/plain-poll.json")
paired_runs "$runs" 14 3 "fleet" "engaging" fleet_rate engaged
read -r median count low high <<<"$paired"
echo "median ratio engaging ÷ fleet, without media: $median over $count runs ($low … $high); target ≥ 0.9"
# The sink's loop's own part of engagement, for the with-media account's.
echo "CPU while h2load ran, medians over $runs runs:"
cpu_report nomedia
plain=(rate "$work/plain.uris" "$work/plain-poll.json")
engaged=(rate "$work/engaging.uris" "$work/plain-poll.json")
paired_runs "$runs" 14 3 "no fleet" "engaging" plain engaged
read -r median count low high <<<"$paired"
echo "median ratio engaging ÷ no fleet, without media: $median over $count runs ($low … $high)"

echo
echo "fixtures/poll.json (mutable-content): every delivery's media download sent to nginx during the fan-out"
fleet_rate=(accounted b2b.fleet rate "$work/fleet.uris" "$body")
engaged=(accounted b2b.engaging rate "$work/engaging.uris" "$body")
paired_runs "$runs" 14 3 "fleet" "engaging" fleet_rate engaged
read -r median count low high <<<"$paired"
echo "median ratio engaging ÷ fleet, with media downloads: $median over $count runs ($low … $high); target ≥ 0.9"
echo "CPU while h2load ran, medians over $runs runs (2 cores: 2 µs of CPU a µs of wall):"
cpu_report b2b

echo
echo "the same, each run alone: started once the sinks and nginx are quiet, read again once they are quiet again"
cpu_quiet
# The idle rates (the wave's 1 ms tick, mostly) over 3 s, taken off what a run took until quiet.
cpu_snap idle before && sleep 3 && cpu_snap idle after
fleet_rate=(accounted alone.fleet settle rate "$work/fleet.uris" "$body")
engaged=(accounted alone.engaging settle rate "$work/engaging.uris" "$body")
paired_runs "$runs" 14 3 "fleet" "engaging" fleet_rate engaged
read -r median count low high <<<"$paired"
echo "median ratio engaging ÷ fleet, each run alone: $median over $count runs ($low … $high)"
echo "CPU medians over $runs runs, µs a notification: while h2load ran / until quiet (less the idle rates)"
cpu_report alone
kill -INT "$engaging_pid"
wait "$engaging_pid" 2>/dev/null || true
forget "$engaging_pid"
echo
grep -A8 "^return wave" "$work/engaging.out" || echo "(the engaging sink printed no return-wave lines)"
