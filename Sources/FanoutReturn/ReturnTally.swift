import FanoutMeasure
import FanoutResults
import Histogram

/// The wave's measures as requests end, on the wave's event loop (`ReturnOutcomes`): seconds
/// from `origin`, each closed once it is past (its latency percentiles read, its histogram
/// cleared), and the whole run's histograms.
final class ReturnTally: ReturnOutcomes {
    private(set) var figures: ReturnWaveSummary
    private var origin: UInt64?
    private var current = makeMicrosecondHistogram()
    private var currentSecond = 0
    private var latency = makeMicrosecondHistogram()
    private var service = makeMicrosecondHistogram()
    private let mediaBudget: UInt64
    private let say: @Sendable (String) -> Void

    init(
        backend: String,
        poolSize: Int,
        http: ReturnHTTPVersion = .http1,
        streamsPerConnection: Int? = nil,
        mediaBudget: Duration,
        say: @escaping @Sendable (String) -> Void
    ) {
        figures = ReturnWaveSummary(backend: backend, poolSize: poolSize)
        figures.http = http.rawValue
        figures.streamsPerConnection = http == .http2 ? streamsPerConnection : nil
        self.mediaBudget = mediaBudget.wholeNanoseconds
        self.say = say
    }

    /// Seconds count from here (the fan-out's start), else from the first request offered.
    func start(at time: UInt64) {
        if origin == nil { origin = time }
    }

    private func second(of time: UInt64) -> Int {
        let origin = origin ?? time
        if self.origin == nil { self.origin = time }
        return time > origin ? Int((time - origin) / 1_000_000_000) : 0
    }

    private func row(_ second: Int) -> Int {
        while figures.seconds.count <= second { figures.seconds.append(ReturnSecond(second: figures.seconds.count)) }
        return second
    }

    /// A request went out (its due time's second).
    func offered(_ request: ReturnRequest) {
        figures.offered += 1
        figures.byKind[request.kind.rawValue, default: .init()].offered += 1
        figures.seconds[row(second(of: request.due))].offered += 1
    }

    func answered(_ request: ReturnRequest, status: Int, sentAt: UInt64, now: UInt64) {
        close(upTo: now)
        let row = row(second(of: now))
        figures.answered += 1
        figures.seconds[row].answered += 1
        figures.byKind[request.kind.rawValue, default: .init()].answered += 1
        figures.byStatus[String(status), default: 0] += 1
        if status >= 400 {
            figures.byKind[request.kind.rawValue, default: .init()].errors += 1
            figures.seconds[row].errors += 1
            // A download refused is a notification shown without its media.
            if request.kind == .media { figures.fallbackContent += 1 }
        }
        let waited = now &- request.due
        current.record(nanoseconds: waited)
        latency.record(nanoseconds: waited)
        service.record(nanoseconds: now &- sentAt)
        if request.kind == .media && status < 400 && waited > mediaBudget { figures.fallbackContent += 1 }
    }

    func failed(_ request: ReturnRequest, _ failure: ReturnFailure, now: UInt64) {
        close(upTo: now)
        let row = row(second(of: now))
        figures.seconds[row].errors += 1
        figures.seconds[row].failed += 1
        figures.byKind[request.kind.rawValue, default: .init()].errors += 1
        figures.failures[failure.rawValue, default: 0] += 1
        if request.kind == .media { figures.fallbackContent += 1 }
    }

    func unreachable(_ message: String) { say(message) }

    /// The second being counted now; the ones before it are closed.
    var openSecond: Int { currentSecond }

    /// Closes the seconds before `now`'s: their percentiles read from `current`.
    func close(upTo now: UInt64) {
        let second = second(of: now)
        guard second > currentSecond else { return }
        closeCurrent()
        currentSecond = second
    }

    /// The figures so far, for `/metrics`: the counts, the whole latency at the buckets, and
    /// the last second closed.
    func live(inFlight: Int) -> ReturnWaveLive {
        ReturnWaveLive(
            byKind: figures.byKind,
            byStatus: figures.byStatus,
            failures: figures.failures,
            inFlight: inFlight,
            latency: LatencyBuckets.counts(of: latency),
            lastSecond: currentSecond > 0 && currentSecond - 1 < figures.seconds.count
                ? figures.seconds[currentSecond - 1] : nil
        )
    }

    private func closeCurrent() {
        guard current.totalCount > 0 else { return }
        let row = row(currentSecond)
        figures.seconds[row].p50Micros = current.valueAtPercentile(50)
        figures.seconds[row].p90Micros = current.valueAtPercentile(90)
        figures.seconds[row].p99Micros = current.valueAtPercentile(99)
        figures.seconds[row].maxMicros = current.max
        current.clear()
    }

    /// The figures, the open second closed and the knee found.
    func finish(notSent: Int) -> ReturnWaveSummary {
        closeCurrent()
        figures.notSent = notSent
        figures.latency = ReturnPercentiles(latency)
        figures.service = ReturnPercentiles(service)
        figures.findKnee()
        return figures
    }
}
