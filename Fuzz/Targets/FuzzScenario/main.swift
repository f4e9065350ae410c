import FuzzSupport

// The sink's scenario parser (and the settings-file reader under it) fed arbitrary text.
//
// A scenario that parses is used as the sink uses it: latencies drawn, durations turned into
// nanoseconds. None of that may trap (a σ of 100 or a latency of 1e300 s once did), and no
// draw may exceed the longest latency the sink holds an answer for. Settings that name files
// (`empirical:`, `unregistered-tokens`, `bad-tokens`) are left out: reading whatever path
// the fuzzer makes up would test the file system, not the parser.
@testable import FanoutScenarioTerms
@testable import FanoutSink

runFuzzer(
    seeds: textSeeds([
        "# a lab's scenario\nlatency = lognormal:5ms,0.5\nstall = 30s/1s\nerror = Unregistered:3%\nerror = InternalServerError:0.1%\ntoken-rate = 10/1s\nseed = 42\n",
        "latency = uniform:1ms..20ms\nconnection-rate = 5/100ms\ngoaway-after-requests = 1000:Shutdown\ngoaway-after-time = 90s\n",
        "latency = normal:10ms,3ms\nclose-after-requests = 7\nunanswered = 0.5%\nmax-connections = 4\n",
        "latency = fixed:250us\n",
    ]),
    test
)

func test(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let text = String(decoding: FuzzInput(start, count).bytes, as: UTF8.self)
    if text.contains("empirical") || text.contains("tokens") { return 0 }
    var scenario = SinkScenario()
    do {
        try scenario.apply(file: text, source: "fuzz")
    } catch {
        precondition(!error.description.isEmpty, "an error that says nothing")
        return 0
    }
    var random = SinkRandom(seed: scenario.seed)
    if let latency = scenario.latency {
        for _ in 0..<64 {
            precondition(latency.sample(&random) <= SinkScenario.longestLatency, "a latency beyond the longest")
        }
    }
    if let stall = scenario.stall { _ = (stall.every.wholeNanoseconds, stall.length.wholeNanoseconds) }
    if let after = scenario.faults.goAwayAfter { _ = after.wholeNanoseconds }
    for rate in [scenario.tokenRate, scenario.connectionRate].compactMap({ $0 }) {
        precondition(rate.limit > 0 && rate.window.wholeNanoseconds > 0, "a rate the sink cannot keep")
    }
    try? scenario.validate()
    return 0
}
