# Paired ratios, as the side-by-side benchmarks keep them (bench/provider.sh, bench/sink.sh,
# bench/sink-builds.sh): each run's B ÷ A is appended to a file as it is printed, rounded, and
# the verdict is their median. Source it after `cd` to the repository.

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
