#!/usr/bin/env bash
# Fanout's deterministic cost gate: instructions per notification through the whole hot path,
# counted by valgrind (callgrind), per stage, against the baseline committed for this toolchain.
#
#   scripts/cost.sh              measure, print, gate: exit 1 when a stage costs over +2%
#   scripts/cost.sh --record     measure and make the figures this toolchain's baseline
#                                (from a clean build, e.g. a fresh clone, as CI builds: an
#                                incremental build can differ by a percent, measured)
#   scripts/cost.sh --repeat K   measure K times and print each stage's spread (no gate)
#   scripts/cost.sh --engagement the sink's turn and mallocs with the device fleet, then with its
#                                devices engaging (the return wave's events held; issue #63)
#   scripts/cost.sh --fcm        FCM HTTP v1 sends (`fanout send --service fcm`) to the FCM sink
#                                instead: the whole program's instructions, the sink's turn and
#                                the mallocs a notification; exit 1 past the malloc limit (the
#                                instructions are printed, not gated: no baseline yet)
#   scripts/cost.sh --tokens     the mallocs a notification of the same workload over the other
#                                token sets a run reads: Fanout's binary format (`fanout tokens
#                                convert`) and generated tokens (`fanout run`'s); exit 1 past the
#                                malloc limit
#   scripts/cost.sh --calls      the Swift runtime's calls per notification (retain, release,
#                                uniqueness checks, lazy globals, object allocations) and
#                                mallocs, from the same profiles, both ends and the sink's turn
#                                alone (no gate): what a hot path should not do per request
#
# FANOUT_COST_BINARY=PATH measures that build of fanout-cost instead of building this tree's
# (another branch's, a patched copy's).
#
# The workload (`fanout-cost`, Sources/FanoutRun/CostWorkload.swift) fans a generated text token
# file out to the sink in one process: the run's TokenStream reads it, the sender's
# LoadConnection encodes each notification and its HEADERS and DATA, the sink's SinkConnection
# parses, validates and answers, the sender parses the answer and records its latency. No
# socket, no event loop, one sending thread, seeded, SWIFT_DETERMINISTIC_HASHING: the same build
# counts the same instructions on every run. Each figure is a marginal cost, (cost of 25,000 −
# cost of 5,000) / 20,000, so start-up (loading, first allocations, tables) is not in it.
#
#   stage        the inclusive instructions of                   what it covers
#   tokens       TokenReader.run()                               read and check a hex token line
#   payload      PayloadEncoder.encode(_:into:)                  the notification's JSON bytes
#   request      HTTP2Connection.sendRequest(_:bodyBytes:tag:)       HPACK-encoded HEADERS, DATA
#   sink         HTTP2InMemoryPair.serverTurn()                  the sink: frames, HPACK decode,
#                                                                validation, digest, the answer
#   response     HTTP2InMemoryPair.clientTurn() − payload        the sender: the answer's frames
#                − request − record                              and HPACK, its outcome
#   record       LoopRecorder.complete(startedAt:now:)           the latency into the histogram
#   total        the whole program                               all of it, and the harness
# and three that lie inside those (both ends' HPACK; the sink's check of the JSON body), so
# that a change to one of them shows at its own size rather than diluted in its stage's:
#   hpack-encode HPACKEncoder.encode(name:value:indexing:huffman:into:)
#   hpack-decode HPACKDecoder.decode(_:field:)
#   json-check   CheckedPayload.isJSONObject(_:)                 the body compared with the
#                                                                connection's last object, read if not
# and one that is not instructions: `mallocs`, the calls into malloc, calloc and realloc per
# notification (the same marginal count, from callgrind's call counts). It is gated on its own
# limit, not the baseline: at most 0.05 a notification, what amortised batches (token reading)
# cost — one allocation a request or a stream is 1.0. The allocation benchmarks
# (Benchmarks/Thresholds, scripts/regression.sh --allocations) count parts on their own; this
# counts the sender and sink together, as they run (it found 5 a notification that no
# benchmark had: a stream's header buffer shared with the response being read, a body left
# empty, a boxed capture), and is CI's allocation gate with --tokens and --fcm.
#
# Baselines: results/baselines/cost/swift-VERSION.txt (another compiler emits other
# instructions, so each toolchain has its own). Exit status: 0 within +2% (or no baseline for
# this toolchain: the figures are printed and a note says so), 1 a stage over +2%, 2 the
# workload or the measurement failed. valgrind (Debian's) is the one tool it needs.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=gate repeats=1
case ${1:-} in
    "") ;;
    --record) mode=record ;;
    --calls) mode=calls ;;
    --instrument) mode=instrument ;;
    --engagement) mode=engagement ;;
    --fcm) mode=fcm ;;
    --tokens) mode=tokens ;;
    --repeat)
        mode=repeat repeats=${2:-}
        [[ $repeats =~ ^[1-9][0-9]*$ ]] || { echo "--repeat takes a count of at least 1, not '${2:-}'" >&2; exit 2; }
        ;;
    *) echo "usage: scripts/cost.sh [--record | --repeat K | --calls | --instrument | --engagement | --fcm | --tokens]" >&2; exit 2 ;;
esac
command -v valgrind >/dev/null || { echo "cost.sh needs valgrind (apt-get install -y valgrind)" >&2; exit 2; }

small=5000 large=25000
limit_percent=2
stages=(tokens payload request sink response record total hpack-encode hpack-decode json-check mallocs)
malloc_limit=0.05
toolchain=$(swift --version 2>/dev/null | sed -n 's/.*Swift version \([0-9][0-9.]*\).*/swift-\1/p' | head -1)
[ -n "$toolchain" ] || { echo "cost.sh: cannot tell the Swift version from 'swift --version'" >&2; exit 2; }
baseline=results/baselines/cost/$toolchain.txt

# FANOUT_COST_BUILT=1: both products are built already (scripts/regression.sh builds once and
# runs its three measurements side by side, which would otherwise wait on one another's build).
if [ -z "${FANOUT_COST_BUILT:-}" ]; then
    swift build -c release --product fanout-cost >&2
    swift build -c release --product fanout >&2
fi
bin=$(swift build -c release --show-bin-path)
work=$(mktemp -d)
trap '[ -n "${FANOUT_COST_KEEP:-}" ] || rm -rf "$work"' EXIT
"$bin/fanout" tokens generate --count $small --output "$work/small.txt" >/dev/null
"$bin/fanout" tokens generate --count $large --output "$work/large.txt" >/dev/null
# valgrind 3.19 cannot read the DWARF Swift 6.3 writes ("possibly corrupted debuginfo"); the
# symbol table it needs for function names stays.
cp "${FANOUT_COST_BINARY:-$bin/fanout-cost}" "$work/fanout-cost"
strip --strip-debug "$work/fanout-cost"

# inclusive PROFILE NAME: the instructions spent in NAME and everything it called.
inclusive() {
    awk -v name="$2" '
        { line = $0; sub(/^ +/, "", line) }
        index(line, "???:" name " [") {
            cost = line; sub(/ .*/, "", cost); gsub(/,/, "", cost); print cost; found = 1; exit
        }
        END { if (!found) exit 1 }' "$1"
}

# profile COUNT [FUNCTION]: runs the workload over COUNT tokens under callgrind; prints the
# annotated profile's path. With FUNCTION, only what runs inside it is counted (callgrind's
# --toggle-collect, a pattern on the symbol's name). The tokens are read from the text files
# made above, or as token_set says: `binary` (the same tokens in Fanout's binary format),
# `generated` (made by the reader, no file).
token_set=text
profile() {
    local count=$1 tokens=$work/small.txt
    [ "$count" = $large ] && tokens=$work/large.txt
    local set=("$tokens" "$count")
    case $token_set in
        binary) set=("${tokens%.txt}.bin" "$count") ;;
        generated) set=(--generated "$count") ;;
    esac
    local out=$work/callgrind.$count${2:+.$2}${tag:-} only=()
    [ -n "${2:-}" ] && only=(--toggle-collect="*$2*")
    # The environment is part of the measurement: its size moves the stack, and with it the
    # alignment of what memcpy copies (12 instructions a notification in `payload`, measured).
    # So the workload runs with only what it needs, from paths of one length (mktemp's).
    if ! env -i SWIFT_DETERMINISTIC_HASHING=1 "$(command -v valgrind)" --tool=callgrind "${only[@]}" \
        --callgrind-out-file="$out" "$work/fanout-cost" "${set[@]}" "${workload_options[@]}" \
        >"$work/run.$count" 2>"$work/valgrind.$count"; then
        cat "$work/run.$count" "$work/valgrind.$count" >&2
        echo "cost.sh: the workload failed over $count tokens" >&2
        exit 2
    fi
    callgrind_annotate --inclusive=yes --threshold=100 "$out" | swift demangle --simplified >"$out.txt"
    echo "$out.txt"
}

# calls_into PROFILE NAME...: the calls into the functions NAME… a raw callgrind profile
# counts. Its function names are compressed: `cfn=(12) malloc` the first time, `cfn=(12)` after;
# the `calls=N …` line after a cfn= line is how often that callee was called from there.
calls_into() {
    local profile=$1
    shift
    awk -v wanted="$*" '
        BEGIN { n = split(wanted, list, " "); for (i = 1; i <= n; i++) want[list[i]] = 1 }
        /^c?fn=\(/ {
            id = $0; sub(/^c?fn=\(/, "", id); sub(/\).*/, "", id)
            name = $0
            if (sub(/^c?fn=\([0-9]+\) /, "", name)) names[id] = name
            callee = ($0 ~ /^cfn=/) ? names[id] : ""
            next
        }
        /^calls=/ {
            if (callee in want) { split(substr($0, 7), c, " "); total += c[1] }
            callee = ""
        }
        END { print total + 0 }' "$profile"
}

allocations() { calls_into "$1" malloc calloc realloc; }

# Options of the workload (--instrument mode adds the sink's instrument).
workload_options=()

# measure: one measurement, "stage instructions-per-notification" lines.
measure() {
    local a b
    a=$(profile $small)
    b=$(profile $large)
    declare -A cost
    local -A function=(
        [tokens]="TokenReader.run()"
        [payload]="PayloadEncoder.encode(_:into:)"
        [request]="HTTP2Connection.sendRequest<A>(_:bodyBytes:tag:)"
        [sink]="HTTP2InMemoryPair.serverTurn()"
        [client]="HTTP2InMemoryPair.clientTurn()"
        [record]="LoopRecorder.complete(startedAt:now:)"
        [hpack-encode]="HPACKEncoder.encode(name:value:indexing:huffman:into:)"
        [hpack-decode]="HPACKDecoder.decode(_:field:)"
        [json-check]="CheckedPayload.isJSONObject(_:)"
    )
    for stage in "${!function[@]}"; do
        local x y
        if ! x=$(inclusive "$a" "${function[$stage]}") || ! y=$(inclusive "$b" "${function[$stage]}"); then
            echo "cost.sh: ${function[$stage]} is not in the profile (inlined or renamed?): keep it out of line or update the stage table" >&2
            exit 2
        fi
        cost[$stage]=$((y - x))
    done
    local x y
    x=$(awk '/PROGRAM TOTALS/ { gsub(/,/, "", $1); print $1 }' "$a")
    y=$(awk '/PROGRAM TOTALS/ { gsub(/,/, "", $1); print $1 }' "$b")
    cost[total]=$((y - x))
    cost[response]=$((cost[client] - cost[payload] - cost[request] - cost[record]))
    cost[mallocs]=$(($(allocations "${b%.txt}") - $(allocations "${a%.txt}")))
    for stage in "${stages[@]}"; do
        awk -v s="$stage" -v c="${cost[$stage]}" -v n=$((large - small)) \
            'BEGIN { printf (s == "mallocs" ? "%s %.4f\n" : "%s %.1f\n"), s, c / n }'
    done
}

case $mode in
    tokens)
        # Token reading is one stage of the text workload (`tokens`); each other set has its own
        # reader loop (BinaryTokenFormat's records, TokenGenerator's), batched as text's is.
        "$bin/fanout" tokens convert --tokens "$work/small.txt" --output "$work/small.bin" >/dev/null
        "$bin/fanout" tokens convert --tokens "$work/large.txt" --output "$work/large.bin" >/dev/null
        failed=0
        for token_set in binary generated; do
            tag=.$token_set
            a=$(profile $small)
            b=$(profile $large)
            m=$(($(allocations "${b%.txt}") - $(allocations "${a%.txt}")))
            awk -v set=$token_set -v m=$m -v n=$((large - small)) -v limit=$malloc_limit '
                BEGIN {
                    verdict = m / n > limit + 0 ? "FAIL" : "ok"
                    printf "%-10s mallocs %10.4f  limit %.2f a notification   %s\n", set, m / n, limit, verdict
                    exit verdict == "FAIL"
                }' || failed=1
        done
        if ((failed)); then
            echo "cost gate: reading a token set allocates: more than $malloc_limit mallocs a notification"
            exit 1
        fi
        ;;
    fcm)
        # The FCM workload's stages are not the APNs sink's (no PayloadSyntax, no digest):
        # the program's total, the sink's turn and the allocations, a notification each.
        workload_options=(--fcm) tag=.fcm
        a=$(profile $small)
        b=$(profile $large)
        x=$(awk '/PROGRAM TOTALS/ { gsub(/,/, "", $1); print $1 }' "$a")
        y=$(awk '/PROGRAM TOTALS/ { gsub(/,/, "", $1); print $1 }' "$b")
        sx=$(inclusive "$a" "HTTP2InMemoryPair.serverTurn()") sy=$(inclusive "$b" "HTTP2InMemoryPair.serverTurn()")
        px=$(inclusive "$a" "PayloadEncoder.encode(_:into:)") py=$(inclusive "$b" "PayloadEncoder.encode(_:into:)")
        m=$(($(allocations "${b%.txt}") - $(allocations "${a%.txt}")))
        awk -v t=$((y - x)) -v s=$((sy - sx)) -v p=$((py - px)) -v m=$m -v n=$((large - small)) -v limit=$malloc_limit '
            BEGIN {
                printf "fcm total    %10.1f instructions a notification (both ends, FCM sink)\n", t / n
                printf "fcm sink     %10.1f   of which the FCM sink'"'"'s turn\n", s / n
                printf "fcm payload  %10.1f   of which the send request'"'"'s bytes\n", p / n
                verdict = m / n > limit + 0 ? "FAIL" : "ok"
                printf "fcm mallocs  %10.4f  limit %.2f a notification   %s\n", m / n, limit, verdict
                if (verdict == "FAIL") { print "cost gate: an FCM send allocates: more than " limit " mallocs a notification"; exit 1 }
            }'
        ;;
    instrument)
        # The sink's turn and the allocations with the sink measuring the provider (`fanout
        # sink --output`: arrivals, stream use, the card), beside the same without: what the
        # instrument costs a notification. Exit 1 past the malloc limit with it.
        off=$(measure | awk '$1 == "sink" || $1 == "mallocs"')
        workload_options=(--instrument) tag=.instrument
        on=$(measure | awk '$1 == "sink" || $1 == "mallocs"')
        paste <(echo "$off") <(echo "$on") | awk -v limit=$malloc_limit '
            { printf "%-8s a notification: without %10s   with --output %10s\n", $1, $2, $4 }
            $1 == "mallocs" && $4 > limit + 0 { bad = 1 }
            END {
                if (bad) { printf "cost gate: the instrument allocates: more than %s mallocs a notification\n", limit; exit 1 }
            }'
        ;;
    engagement)
        # The sink's turn and the allocations with the device fleet (--devices), then with its
        # devices engaging (issue #63: each delivered poll's media download, 3% opening, held as
        # return events): what engagement costs the sink a notification. Exit 1 past the malloc
        # limit with it.
        workload_options=(--devices) tag=.devices
        off=$(measure | awk '$1 == "sink" || $1 == "mallocs"')
        workload_options=(--devices --engagement) tag=.engagement
        on=$(measure | awk '$1 == "sink" || $1 == "mallocs"')
        paste <(echo "$off") <(echo "$on") | awk -v limit=$malloc_limit '
            { printf "%-8s a notification: the fleet %10s   engaging %10s\n", $1, $2, $4 }
            $1 == "mallocs" && $4 > limit + 0 { bad = 1 }
            END {
                if (bad) { printf "cost gate: engagement allocates: more than %s mallocs a notification\n", limit; exit 1 }
            }'
        ;;
    record)
        mkdir -p "$(dirname "$baseline")"
        {
            echo "# Instructions per notification (scripts/cost.sh), $toolchain, recorded $(date -u +%Y-%m-%d)."
            measure
        } >"$baseline.new"
        mv "$baseline.new" "$baseline"
        cat "$baseline"
        ;;
    calls)
        # Both ends, and the sink's turn alone (the in-memory pair's serverTurn: frames in,
        # HPACK, validation, the answer out).
        a=$(profile $small)
        b=$(profile $large)
        sa=$(profile $small serverTurn)
        sb=$(profile $large serverTurn)
        printf '%-44s %12s %12s\n' "calls a notification" "both ends" "sink's turn"
        for name in swift_retain swift_release swift_isUniquelyReferenced_nonNull_native swift_once \
            swift_allocObject swift_beginAccess malloc; do
            both=$(($(calls_into "${b%.txt}" "$name") - $(calls_into "${a%.txt}" "$name")))
            sink=$(($(calls_into "${sb%.txt}" "$name") - $(calls_into "${sa%.txt}" "$name")))
            awk -v s="$name" -v b=$both -v k=$sink -v n=$((large - small)) \
                'function r(x) { return (x > -0.005 && x < 0.005) ? 0 : x }
                 BEGIN { printf "%-44s %12.2f %12.2f\n", s, r(b / n), r(k / n) }'
        done
        ;;
    repeat)
        for ((i = 1; i <= repeats; i++)); do
            measure >"$work/repeat.$i"
            echo "measurement $i: $(tr '\n' ' ' <"$work/repeat.$i")"
        done
        # Each stage: median, and the largest distance of a measurement from it.
        cat "$work"/repeat.* | awk -v stages="${stages[*]}" '
            { v[$1] = v[$1] " " $2 }
            END {
                printf "%-12s %12s %12s %12s %9s\n", "stage", "median", "min", "max", "spread"
                n_order = split(stages, order, " ")
                for (i = 1; i <= n_order; i++) {
                    s = order[i]; n = split(substr(v[s], 2), x, " ")
                    for (a = 1; a <= n; a++) for (b = a + 1; b <= n; b++) if (x[b] < x[a]) { t = x[a]; x[a] = x[b]; x[b] = t }
                    m = n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2
                    d = 0; for (a = 1; a <= n && m != 0; a++) { e = (x[a] - m) / m * 100; if (e < 0) e = -e; if (e > d) d = e }
                    printf "%-12s %12.1f %12.1f %12.1f %8.3f%%\n", s, m, x[1], x[n], d
                }
            }'
        ;;
    gate)
        measure >"$work/now"
        if [ ! -f "$baseline" ]; then
            cat "$work/now"
            echo "no cost baseline for $toolchain: record one with scripts/cost.sh --record (not gated)"
            exit 0
        fi
        awk -v limit=$limit_percent -v malloc_limit=$malloc_limit '
            FNR == NR { if ($0 !~ /^#/ && NF == 2) base[$1] = $2; next }
            $1 == "mallocs" {
                verdict = $2 > malloc_limit + 0 ? "FAIL" : "ok"
                printf "%-12s %10.4f  limit %13.2f  a notification   %s\n", $1, $2, malloc_limit, verdict
                if (verdict == "FAIL") { failed++; mallocs_failed = 1 }
                next
            }
            {
                stage = $1; now = $2
                if (!(stage in base)) { printf "%-12s %10.1f   (not in the baseline)\n", stage, now; next }
                change = (now - base[stage]) / base[stage] * 100
                verdict = change > limit ? "FAIL" : (change < -limit ? "better: record a new baseline" : "ok")
                printf "%-12s %10.1f  baseline %10.1f  %+7.2f%%  %s\n", stage, now, base[stage], change, verdict
                if (change > limit) failed++
            }
            END {
                if (mallocs_failed) printf "cost gate: more than %s mallocs a notification: something allocates per request or per stream\n", malloc_limit
                if (failed - mallocs_failed) printf "cost gate: %d stage(s) over +%d%% instructions per notification\n", failed - mallocs_failed, limit
                if (failed) exit 1
                printf "cost gate: every stage within +%d%% of the baseline, %s mallocs a notification at most\n", limit, malloc_limit
            }' "$baseline" "$work/now"
        ;;
esac
