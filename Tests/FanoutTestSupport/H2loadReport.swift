/// What h2load's summary says of its requests and their status codes, read from its whole
/// lines:
///
/// ```
/// requests: 20000 total, 20000 started, 20000 done, 20000 succeeded, 0 failed, 0 errored, 0 timeout
/// status codes: 20000 2xx, 0 3xx, 0 4xx, 0 5xx
/// ```
public struct H2loadReport: Equatable, Sendable, CustomStringConvertible {
    public var total: Int
    public var started: Int
    public var done: Int
    public var succeeded: Int
    public var failed: Int
    public var errored: Int
    public var timeout: Int
    /// The status codes by class: 2xx, 3xx, 4xx, 5xx.
    public var statusCodes: [Int]

    public init(
        total: Int,
        started: Int,
        done: Int,
        succeeded: Int,
        failed: Int = 0,
        errored: Int = 0,
        timeout: Int = 0,
        statusCodes: [Int]
    ) {
        (self.total, self.started, self.done, self.succeeded) = (total, started, done, succeeded)
        (self.failed, self.errored, self.timeout, self.statusCodes) = (failed, errored, timeout, statusCodes)
    }

    /// Every one of `count` requests succeeded with a 2xx.
    public static func allSucceeded(_ count: Int) -> H2loadReport {
        H2loadReport(total: count, started: count, done: count, succeeded: count, statusCodes: [count, 0, 0, 0])
    }

    /// `output`'s report; `nil` when either line is missing or not whole.
    public init?(_ output: String) {
        let requests = lines(of: output, keyed: "requests: ")
        let codes = lines(of: output, keyed: "status codes: ")
        guard requests.count == 1, codes.count == 1,
            let counts = requests[0].wholeMatch(
                of:
                    #/requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout/#
            ),
            let classes = codes[0].wholeMatch(of: #/status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx/#)
        else { return nil }
        self.init(
            total: Int(counts.1)!,
            started: Int(counts.2)!,
            done: Int(counts.3)!,
            succeeded: Int(counts.4)!,
            failed: Int(counts.5)!,
            errored: Int(counts.6)!,
            timeout: Int(counts.7)!,
            statusCodes: [Int(classes.1)!, Int(classes.2)!, Int(classes.3)!, Int(classes.4)!]
        )
    }

    public var description: String {
        "\(total) total, \(started) started, \(done) done, \(succeeded) succeeded, \(failed) failed, "
            + "\(errored) errored, \(timeout) timeout; status codes \(statusCodes)"
    }
}
