import FanoutTestSupport

/// The generator lag, milliseconds, that the open model's line of a run's summary on standard
/// output says, when that line is exactly "open model, `schedule`: latency counted from each
/// notification's due time; generator lag max LAG ms (limit `limit` ms)" and LAG a number;
/// `nil` otherwise.
func openModelLag(in output: String, schedule: String, limit: String) -> Double? {
    let said = lines(of: output, keyed: "open model, ")
    guard said.count == 1 else { return nil }
    return middle(
        of: said[0],
        between: "open model, \(schedule): latency counted from each notification's due time; generator lag max ",
        and: " ms (limit \(limit) ms)"
    ).flatMap(Double.init)
}
