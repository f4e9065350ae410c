/// How many measured values a folder needs before its figures stand (`--min-measured`'s
/// default, for a run's answers and a sink's requests alike): with fewer than 100 latencies a
/// p99 is simply their maximum, and a rate over a dozen answers is one of chance.
public enum MinimumMeasured {
    public static let `default` = 100
}
