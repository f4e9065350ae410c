import FuzzSupport

// The gate's threshold language fed arbitrary text.
//
// A thresholds file that parses must parse again from its own thresholds' text to the same
// thresholds, and each verdict line must be writable for any measured value and limit,
// including the NaN a missing baseline gives and values beyond any integer.
@testable import FanoutReport

runFuzzer(
    seeds: textSeeds([
        "p99 < 25ms\nthroughput > 100000/s   # the floor\nerrors < 0.1%\nfailed == 0\n",
        "p99 < baseline + 10%\nthroughput >= baseline - 5%\np50 <= baseline + 2ms\np99.9<1.5s\nmax != 250us\n",
    ]),
    test
)

func test(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let text = String(decoding: FuzzInput(start, count).bytes, as: UTF8.self)
    guard let thresholds = try? Threshold.thresholds(in: text, source: "fuzz") else { return 0 }
    for threshold in thresholds {
        guard let again = try? Threshold(parsing: threshold.description), again == threshold else {
            fatalError("\(threshold.description) does not parse back to itself")
        }
        for (measured, limit) in [(0.0, 1.5), (1e300, -1e300), (.nan, .infinity), (-0.0, 9.2e18)] {
            let verdict = Threshold.Verdict(threshold: threshold, measured: measured, limit: limit, passed: false)
            _ = verdict.line(width: 40)
        }
    }
    return 0
}
