extension ProbeState {
    /// The flow test's bounds: how long it keeps the connection full and how many requests it
    /// sends at most (each one a notification to a real device).
    public struct FlowPlan: Sendable, Equatable {
        /// Nanoseconds; raised to `leastRoundTrips` PING round trips.
        public var duration: UInt64
        public var mostRequests: Int
        /// The most streams the probe opens, whatever the server allows.
        public var mostStreams: Int

        /// A test shorter than this many round trips sees too few refills.
        public static let leastRoundTrips: UInt64 = 20
        /// The start left out of the steady part: the first window goes out unrefilled.
        public static let skippedRoundTrips: UInt64 = 2
        /// How soon the probe looks at the window again while waiting for it (1 ms).
        public static let windowPoll: UInt64 = 1_000_000
        /// What binds a connection binds it this share of the steady part or more.
        public static let bindingShare = 0.5

        public init(duration: UInt64, mostRequests: Int, mostStreams: Int) {
            self.duration = duration
            self.mostRequests = max(1, mostRequests)
            self.mostStreams = max(1, mostStreams)
        }
    }

    /// What kept the flow test from sending more.
    public enum Bound: String, Sendable, Equatable {
        /// The connection window could not take another body while streams were free.
        case window
        /// Every stream the server allows was open while the window had room.
        case streams
        /// Neither held most of the steady part (the probe's own pace, the server's answers).
        case neither

        /// The bound that held `bindingShare` of `steady` nanoseconds or more.
        public static func deciding(windowBound: UInt64, streamsBound: UInt64, steady: UInt64) -> Bound {
            guard steady > 0 else { return .neither }
            let least = FlowPlan.bindingShare * Double(steady)
            if Double(windowBound) >= least { return .window }
            if Double(streamsBound) >= least { return .streams }
            return .neither
        }
    }

    /// The flow test as it went: a closed loop of requests on one connection, each answer
    /// replaced by a request while a stream is free and the window takes its body.
    ///
    /// ```
    ///   started ──(skipped round trips)── steadyFrom ───────── steady part ───────── stopped ── ended
    ///                                     answers counted, refills summed, bounds timed   (draining)
    /// ```
    public struct FlowRecord: Sendable, Equatable {
        public var plan: FlowPlan
        public var started: UInt64
        /// The PING round trip's median: the network's, what a refill takes to come back.
        public var roundTrip: UInt64
        /// A request's round trip (the one-at-a-time median, at least the PING's): what the
        /// test's length and its skipped start are counted in.
        public var requestRoundTrip: UInt64
        /// When sending is to stop, and when the steady part begins.
        public var stopAt: UInt64
        public var steadyFrom: UInt64
        /// Streams the probe keeps open at most: enough for twice the window's bodies.
        public var target: Int
        /// When sending stopped, and whether the count stopped it (else the time).
        public var stopped: UInt64?
        public var stoppedByCount = false
        /// The last answer.
        public var ended: UInt64?
        public var sent = 0
        public var answered = 0
        public var resets = 0
        public var answers: [ProbeAnswer: Int] = [:]
        /// Answers in the steady part, and what the server credited back on the connection then.
        public var steadyAnswered = 0
        public var steadyCredited = 0
        /// The time between one connection refill and the next in the steady part (the first
        /// `keptIntervals`): with the `half` rule, the round trip under load.
        public var refillIntervals: [UInt64] = []
        private var lastRefill: UInt64?
        static let keptIntervals = 10_000
        /// Answers before sending stopped.
        public var answeredBeforeStop = 0
        /// The steady answers' count against their time, for `rate`.
        public var steadyFit = LineFit()
        /// The steady credit (bytes) against time, for `creditedPerRoundTrip`.
        public var creditFit = LineFit()
        public var peakStreams = 0
        public var mostBytesInFlight = 0
        /// Nanoseconds of the steady part the window, or the streams, held the probe back.
        public var windowBound: UInt64 = 0
        public var streamsBound: UInt64 = 0

        public init(
            plan: FlowPlan,
            started: UInt64,
            roundTrip: UInt64,
            requestRoundTrip: UInt64,
            window: Int,
            bodyBytes: Int
        ) {
            self.plan = plan
            self.started = started
            self.roundTrip = roundTrip
            self.requestRoundTrip = max(roundTrip, requestRoundTrip)
            let duration = max(plan.duration, FlowPlan.leastRoundTrips * self.requestRoundTrip)
            stopAt = started + duration
            steadyFrom = started + min(FlowPlan.skippedRoundTrips * self.requestRoundTrip, duration / 2)
            let bodies = 2 * max(0, window) / max(1, bodyBytes) + 1
            target = min(plan.mostStreams, max(1, bodies))
        }

        /// What held the probe back when it last looked.
        enum Holding: Sendable, Equatable {
            case nothing
            case window
            case streams

            init(windowShort: Bool, streamsFull: Bool) {
                self = windowShort ? .window : streamsFull ? .streams : .nothing
            }
        }

        /// The steady part: from `steadyFrom` (or the start, when the count stopped the test
        /// before it) to the stop.
        public var steadySpan: (from: UInt64, to: UInt64)? {
            guard let stopped else { return nil }
            return stopped > steadyFrom ? (steadyFrom, stopped) : stopped > started ? (started, stopped) : nil
        }

        /// Answers a second over the steady part: the least-squares slope of answers counted
        /// against time (`steadyFit`), so answers arriving a window at a time, once a round
        /// trip, count as whole round trips whichever phase the part's ends fall in (a count
        /// over the span is off by up to a round trip's answers: 5% over 20 of them); the count
        /// over the span when there is no slope to fit.
        public var rate: Double? {
            guard let span = steadySpan else { return nil }
            if span.from == steadyFrom, let slope = steadyFit.slope { return slope }
            let answers = span.from == steadyFrom ? steadyAnswered : answeredBeforeStop
            return Double(answers) / (Double(span.to - span.from) / 1e9)
        }

        /// Bytes the server credited back on the connection a round trip (the PING's), over the
        /// steady part: the slope of the credit against time, as `rate`.
        public var creditedPerRoundTrip: Double? {
            guard let span = steadySpan, span.from == steadyFrom, roundTrip > 0 else { return nil }
            let perSecond = creditFit.slope ?? Double(steadyCredited) / (Double(span.to - span.from) / 1e9)
            return perSecond * Double(roundTrip) / 1e9
        }

        /// What bound the connection over the steady part.
        public var bound: Bound {
            guard let span = steadySpan, span.from == steadyFrom else { return .neither }
            return .deciding(windowBound: windowBound, streamsBound: streamsBound, steady: span.to - span.from)
        }

        /// The share of the steady part the window, and the streams, held the probe back.
        public var boundShares: (window: Double, streams: Double) {
            guard let span = steadySpan, span.from == steadyFrom, span.to > span.from else { return (0, 0) }
            let steady = Double(span.to - span.from)
            return (Double(windowBound) / steady, Double(streamsBound) / steady)
        }

        /// `from`…`to` goes to what held the probe back, within the steady part.
        mutating func attribute(from: UInt64, to: UInt64, _ holding: Holding) {
            let start = max(from, steadyFrom)
            let end = min(to, stopped ?? stopAt)
            guard end > start else { return }
            switch holding {
            case .window: windowBound += end - start
            case .streams: streamsBound += end - start
            case .nothing: break
            }
        }

        mutating func observe(streams: Int, bytesInFlight: Int) {
            peakStreams = max(peakStreams, streams)
            mostBytesInFlight = max(mostBytesInFlight, bytesInFlight)
        }

        mutating func stop(at now: UInt64, byCount: Bool) {
            guard stopped == nil else { return }
            stopped = now
            stoppedByCount = byCount
        }

        mutating func answered(_ key: ProbeAnswer, at now: UInt64) {
            answered += 1
            answers[key, default: 0] += 1
            ended = now
            guard stopped == nil else { return }
            answeredBeforeStop += 1
            // (steadyFrom, stopped]: an answer at either end counts once over the span.
            guard now > steadyFrom else { return }
            steadyAnswered += 1
            steadyFit.add(seconds: Double(now - steadyFrom) / 1e9, count: Double(steadyAnswered))
        }

        mutating func credited(_ bytes: Int, at now: UInt64) {
            guard stopped == nil, now > steadyFrom else { return }
            steadyCredited += bytes
            creditFit.add(seconds: Double(now - steadyFrom) / 1e9, count: Double(steadyCredited))
            if let lastRefill, refillIntervals.count < Self.keptIntervals { refillIntervals.append(now - lastRefill) }
            lastRefill = now
        }

        /// The median time between refills in the steady part; `nil` for fewer than two.
        public var refillInterval: UInt64? {
            refillIntervals.isEmpty ? nil : ProbeState.median(refillIntervals)
        }
    }

    /// A least-squares line through points added one at a time (sums only).
    public struct LineFit: Sendable, Equatable {
        public private(set) var points = 0.0
        private var sumX = 0.0
        private var sumY = 0.0
        private var sumXX = 0.0
        private var sumXY = 0.0

        public init() {}

        mutating func add(seconds x: Double, count y: Double) {
            points += 1
            sumX += x
            sumY += y
            sumXX += x * x
            sumXY += x * y
        }

        /// The line's slope; `nil` for fewer than two distinct `x`.
        public var slope: Double? {
            let spread = points * sumXX - sumX * sumX
            guard points >= 2, spread > 1e-12 * max(1, points * sumXX) else { return nil }
            return (points * sumXY - sumX * sumY) / spread
        }
    }
}
