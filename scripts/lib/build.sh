# The one release build the scripts measure or run: source it after `cd` to the repository.
#
#   release_fanout [BUILD OPTIONS…]   sets `fanout` (and exports FANOUT) to $FANOUT when set
#                                     (another build, e.g. a baseline's, measured with this
#                                     tree's scripts), else to a release build of this tree's
#                                     `fanout`; options go to `swift build` (a build path, traits)
#   release_h2bench                   sets `h2bench`: $H2BENCH, else a release build of
#                                     Benchmarks/Tools/H2Bench
#   release_returnbench               sets `returnbench`: a release build of
#                                     Benchmarks/Tools/ReturnBench
#   results_folder NAME               makes results/bench-NAME-<UTC time>/, the folder a
#                                     benchmark keeps its runs in, and sets `out` to it
release_fanout() {
    if [ -n "${FANOUT:-}" ]; then
        fanout=$FANOUT
        return
    fi
    swift build -c release --product fanout "$@" >/dev/null
    fanout=$(swift build -c release "$@" --show-bin-path)/fanout
    export FANOUT=$fanout
}

release_h2bench() {
    if [ -n "${H2BENCH:-}" ]; then
        h2bench=$H2BENCH
    else
        (cd Benchmarks && swift build -c release --product h2bench >/dev/null)
        h2bench=$PWD/Benchmarks/.build/release/h2bench
    fi
}

# Sets `returnbench`: a release build of Benchmarks/Tools/ReturnBench (the return wave's pools
# beside async-http-client).
release_returnbench() {
    (cd Benchmarks && swift build -c release --product returnbench >/dev/null)
    returnbench=$PWD/Benchmarks/.build/release/returnbench
}

results_folder() {
    out=results/bench-$1-$(date -u +%Y%m%d-%H%M%S)
    mkdir -p "$out"
}
