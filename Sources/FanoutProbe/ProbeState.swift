import FanoutAPNs
import FanoutHTTP2
import FanoutPayload
import NIOCore

/// What `fanout probe` does on one connection, as a state machine that returns actions: wait
/// for the server's SETTINGS, time `pings` PINGs one after another, then send each request one
/// at a time, then all of them at once (as the server's stream limit lets them go), then, with
/// a `FlowPlan`, keep the connection full for a while (the flow test, `ProbeState+Flow.swift`).
///
/// ```
///   settings ──► ping ⇄ ack (× pings) ──► request ⇄ answer (× n, one at a time)
///     ──► n requests at once ──► all answered
///     ──► flow: each answer replaced by a request, while the window and streams allow
///         (until the plan's time or count) ──► draining: the last answers ──► finish
/// ```
///
/// The round trip of a bare PING is the network's; a request's less the PING's is the server's
/// processing. Alongside, it keeps how the server's connection window moved (`WindowRecord`)
/// and what a request put on the wire (`WireRecord`): the owner reports each WINDOW_UPDATE and
/// each request's bytes. Times are uptime nanoseconds.
public struct ProbeState: Sendable {
    public enum Phase: Sendable, Equatable {
        case waitingForSettings
        case pinging
        case oneAtATime
        case inParallel
        case flowing
        case draining
        case done
    }

    public enum Action: Sendable, Equatable {
        case ping(opaque: UInt64)
        /// Send request `index` (of the probe's tokens) tagged `tag`.
        case send(index: Int, tag: UInt64)
        case wait
        /// Everything is measured: say GOAWAY and close.
        case finish
    }

    /// What was measured, in nanoseconds.
    public struct Record: Sendable {
        public var pingRoundTrips: [UInt64] = []
        public var oneAtATime: [UInt64] = []
        public var inParallel: [UInt64] = []
        /// From the first request of the parallel burst to its last answer.
        public var parallelSpan: UInt64 = 0
        /// The most requests in flight at once in the parallel burst.
        public var peakInFlight = 0
        /// Answers by `status` or `status reason`, one at a time and in parallel (the flow
        /// test's are its own).
        public var answers: [ProbeAnswer: Int] = [:]
        /// Requests reset (REFUSED_STREAM, or the server's RST_STREAM) rather than answered.
        public var resets = 0
        public var accepted = 0
        /// The server's connection window and its refills.
        public var window = WindowRecord()
        /// The bytes a request put on the wire.
        public var wire = WireRecord()
        /// The flow test, once it started.
        public var flow: FlowRecord?

        public init() {}
    }

    public private(set) var phase = Phase.waitingForSettings
    public private(set) var record = Record()
    let pings: Int
    let requests: Int
    let flowPlan: FlowPlan?
    /// Each request in flight: its send time, by tag.
    private var sentAt: [UInt64: UInt64] = [:]
    private var pingSentAt: UInt64?
    private var nextIndex = 0
    private var answeredInPhase = 0
    private var parallelStart: UInt64 = 0
    /// Requests sent in all phases: the 3rd and later show HPACK's steady state.
    private var requestsSent = 0
    /// The last `next` call's time, and what bound the flow then.
    private var lastTurn: UInt64 = 0
    private var holding = FlowRecord.Holding.nothing

    public init(pings: Int, requests: Int, flow: FlowPlan? = nil) {
        self.pings = max(0, pings)
        self.requests = max(0, requests)
        flowPlan = requests > 0 ? flow : nil
    }

    /// The next thing to do; `availableStreams` is how many more the connection may open (the
    /// server's limit less those open), `connectionWindow` what it may still send of DATA.
    public mutating func next(
        now: UInt64,
        hasPeerSettings: Bool,
        availableStreams: Int,
        connectionWindow: Int
    ) -> Action {
        record.window.observe(connectionWindow: connectionWindow)
        // A phase that ends at once goes on to the next one in the same call (`continue`).
        while true {
            switch phase {
            case .waitingForSettings:
                guard hasPeerSettings else { return .wait }
                phase = .pinging
                continue
            case .pinging:
                guard pingSentAt == nil else { return .wait }
                guard record.pingRoundTrips.count < pings else {
                    guard requests > 0 else {
                        enter(.done)
                        return .finish
                    }
                    enter(.oneAtATime)
                    continue
                }
                pingSentAt = now
                return .ping(opaque: UInt64(record.pingRoundTrips.count) &+ 0xFA_9000)
            case .oneAtATime:
                guard sentAt.isEmpty, availableStreams > 0 else { return .wait }
                guard nextIndex < requests else {
                    record.window.afterFirstAnswers = connectionWindow
                    enter(.inParallel)
                    parallelStart = now
                    continue
                }
                return send(now: now)
            case .inParallel:
                if nextIndex < requests && availableStreams > 0 { return send(now: now) }
                guard answeredInPhase == requests else { return .wait }
                guard let flowPlan else {
                    enter(.done)
                    return .finish
                }
                enter(.flowing)
                lastTurn = now
                record.flow = FlowRecord(
                    plan: flowPlan,
                    started: now,
                    roundTrip: Self.median(record.pingRoundTrips),
                    requestRoundTrip: Self.median(record.oneAtATime),
                    window: record.window.granted,
                    bodyBytes: record.wire.bodyBytes
                )
                continue
            case .flowing:
                return flow(now: now, availableStreams: availableStreams, connectionWindow: connectionWindow)
            case .draining:
                guard sentAt.isEmpty else { return .wait }
                enter(.done)
                return .finish
            case .done:
                return .wait
            }
        }
    }

    /// When the owner should call `next` again though nothing arrived: the flow test's end, and
    /// while it waits for the window, soon (a WINDOW_UPDATE is no event of its own).
    public var wakeAt: UInt64? {
        guard phase == .flowing, let flow = record.flow else { return nil }
        guard holding == .window else { return flow.stopAt }
        return min(flow.stopAt, lastTurn + FlowPlan.windowPoll)
    }

    /// The PING `opaque` was acknowledged.
    public mutating func pingAcknowledged(_ opaque: UInt64, now: UInt64) {
        guard phase == .pinging, let sent = pingSentAt, opaque == UInt64(record.pingRoundTrips.count) &+ 0xFA_9000
        else { return }
        record.pingRoundTrips.append(now - min(now, sent))
        pingSentAt = nil
    }

    /// The request just sent went out with `bodyBytes` of body and put `wire` on the wire
    /// (`nil` when flow control held some of its body back, so its bytes do not show its size).
    public mutating func sent(bodyBytes: Int, wire: WireSample?) {
        record.wire.bodyBytes = bodyBytes
        guard let wire else { return }
        record.window.largestDataFrame = max(record.window.largestDataFrame, wire.largestDataFrame)
        record.wire.add(wire, steady: requestsSent > WireRecord.unsteadyRequests)
    }

    /// The server sent WINDOW_UPDATE on `stream` (0: the connection) of `increment`, leaving
    /// our connection window at `windowAfter`, at `now`.
    public mutating func windowUpdated(stream: UInt32, increment: Int, windowAfter: Int, now: UInt64) {
        let refill = record.window.update(stream: stream, increment: increment, windowAfter: windowAfter, at: now)
        if phase == .flowing, let refill { record.flow?.credited(refill, at: now) }
    }

    /// Request `tag` was answered `status` (with `reason`, for an error).
    public mutating func answered(tag: UInt64, status: Int, reason: APNsReason?, now: UInt64) {
        guard let sent = sentAt.removeValue(forKey: tag) else { return }
        let roundTrip = now - min(now, sent)
        let key = ProbeAnswer(status: status, reason: reason)
        switch phase {
        case .flowing, .draining:
            record.flow?.answered(key, at: now)
            return
        case .oneAtATime:
            record.oneAtATime.append(roundTrip)
        default:
            record.inParallel.append(roundTrip)
        }
        if status == 200 { record.accepted += 1 }
        record.answers[key, default: 0] += 1
        settled(now: now)
    }

    /// Request `tag` was reset instead of answered: counted, not timed.
    public mutating func reset(tag: UInt64, now: UInt64) {
        guard sentAt.removeValue(forKey: tag) != nil else { return }
        if phase == .flowing || phase == .draining {
            record.flow?.resets += 1
            return
        }
        record.resets += 1
        settled(now: now)
    }

    private mutating func settled(now: UInt64) {
        if phase == .inParallel {
            answeredInPhase += 1
            if answeredInPhase == requests { record.parallelSpan = now - min(now, parallelStart) }
        }
    }

    /// The flow test's turn: the time since the last turn goes to what bound it then; then a
    /// request goes when a stream is free and the window takes its body (or, with none in
    /// flight, any of it: a window smaller than one body still lets one go, a part at a time).
    private mutating func flow(now: UInt64, availableStreams: Int, connectionWindow: Int) -> Action {
        guard var flow = record.flow else { return .wait }
        defer { record.flow = flow }
        flow.attribute(from: lastTurn, to: now, holding)
        lastTurn = now
        if now >= flow.stopAt || flow.sent >= flow.plan.mostRequests {
            flow.stop(at: now, byCount: now < flow.stopAt)
            holding = .nothing
            phase = .draining
            guard sentAt.isEmpty else { return .wait }
            enter(.done)
            return .finish
        }
        flow.observe(streams: sentAt.count, bytesInFlight: record.window.granted - connectionWindow)
        let windowShort = connectionWindow < max(1, record.wire.bodyBytes)
        holding = FlowRecord.Holding(
            windowShort: windowShort && availableStreams > 0,
            streamsFull: availableStreams == 0 && !windowShort
        )
        let windowTakesOne = !windowShort || (sentAt.isEmpty && connectionWindow > 0)
        guard availableStreams > 0, sentAt.count < flow.target, windowTakesOne else { return .wait }
        let tag = UInt64(flow.sent)
        flow.sent += 1
        sentAt[tag] = now
        requestsSent += 1
        flow.observe(streams: sentAt.count, bytesInFlight: 0)
        return .send(index: Int(tag % UInt64(requests)), tag: tag)
    }

    private mutating func send(now: UInt64) -> Action {
        record.window.start(at: now)
        let index = nextIndex
        nextIndex += 1
        requestsSent += 1
        let tag = UInt64(index)
        sentAt[tag] = now
        if phase == .inParallel { record.peakInFlight = max(record.peakInFlight, sentAt.count) }
        return .send(index: index, tag: tag)
    }

    private mutating func enter(_ next: Phase) {
        phase = next
        nextIndex = 0
        answeredInPhase = 0
    }

    /// The middle of `values` (the lower of two), 0 for none.
    static func median(_ values: [UInt64]) -> UInt64 {
        guard !values.isEmpty else { return 0 }
        return values.sorted()[(values.count - 1) / 2]
    }
}

/// What an answer said, as the probe counts answers: its status and, for an error, APNs's
/// reason. Written "200" or "400 BadDeviceToken" in probe.json (`name`).
public struct ProbeAnswer: Hashable, Sendable, CustomStringConvertible {
    public var status: Int
    public var reason: APNsReason?

    public init(status: Int, reason: APNsReason? = nil) {
        self.status = status
        self.reason = reason
    }

    public var description: String { reason.map { "\(status) \($0.rawValue)" } ?? "\(status)" }

    /// Counts by answer, keyed by their words: probe.json's `answers`.
    public static func named(_ counts: [ProbeAnswer: Int]) -> [String: Int] {
        Dictionary(counts.map { ($0.key.description, $0.value) }, uniquingKeysWith: +)
    }
}
