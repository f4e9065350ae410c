# Paired ratios, as the side-by-side benchmarks keep them (bench/provider.sh, bench/sink.sh,
# bench/sink-devices.sh, bench/sink-builds.sh, bench/run.sh): each run's B ÷ A is kept as it is printed,
# rounded, and the verdict is their median. Source it after `cd` to the repository (and after
# lib/peers.sh, for paired_start).

# paired_start [RUNS] [REQUESTS]: what the side-by-side h2load benchmarks begin with: sets
# `runs` (default 5) and `requests` (default 200,000) from their arguments, `fanout` to the
# release build (lib/build.sh) and `body` to the payload they send.
paired_start() {
    runs=${1:-5}
    requests=${2:-200000}
    release_fanout
    body=$PWD/fixtures/poll.json
}

# ratio_of A B DIGITS: B ÷ A to DIGITS decimals.
ratio_of() {
    python3 -c 'import sys; a, b, d = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]); print(f"{b / a:.{d}f}")' \
        "$1" "$2" "$3"
}

# median_ratio FILE DIGITS: the median of the ratios in FILE (one a line) to DIGITS decimals,
# then how many there are, the least and the greatest: `0.982 8 0.951 1.004`.
median_ratio() {
    python3 - "$1" "$2" <<'PY'
import statistics, sys
ratios = [float(line) for line in open(sys.argv[1])]
d = int(sys.argv[2])
print(f"{statistics.median(ratios):.{d}f} {len(ratios)} {min(ratios):.{d}f} {max(ratios):.{d}f}")
PY
}

# paired_runs RUNS WIDTH DIGITS A-LABEL B-LABEL A-COMMAND B-COMMAND: runs the command in the
# array named A-COMMAND, then the one named B-COMMAND (each prints a rate), RUNS times; prints a
# header, then a row a run (the rates in columns WIDTH wide, their ratio B ÷ A to DIGITS
# decimals), and sets `paired` to what median_ratio says of them: `median count least greatest`.
#
#   plain=(rate "$plain_port" -c 8 -m 100) fleet=(rate "$fleet_port" -c 8 -m 100)
#   paired_runs 5 14 3 plain "with fleet" plain fleet
#   read -r median count low high <<<"$paired"
paired_runs() {
    local runs=$1 width=$2 digits=$3 a_label=$4 b_label=$5
    local -n paired_a_command=$6 paired_b_command=$7
    local ratios run a b ratio
    ratios=$(mktemp)
    printf "%-4s %${width}s %${width}s %8s\n" run "$a_label" "$b_label" ratio
    for run in $(seq "$runs"); do
        a=$("${paired_a_command[@]}")
        b=$("${paired_b_command[@]}")
        ratio=$(ratio_of "$a" "$b" "$digits")
        printf "%-4s %${width}.0f %${width}.0f %8s\n" "$run" "$a" "$b" "$ratio"
        echo "$ratio" >>"$ratios"
    done
    paired=$(median_ratio "$ratios" "$digits")
    rm -f "$ratios"
}
