import FanoutAPNs
import FanoutHTTP2
import FanoutPayload
import NIOCore

/// What `fanout probe` does on one connection, as a state machine that returns actions: wait
/// for the server's SETTINGS, time `pings` PINGs one after another, then send each request one
/// at a time, then all of them at once (as the server's stream limit lets them go).
///
/// ```
///   settings ──► ping ⇄ ack (× pings) ──► request ⇄ answer (× n, one at a time)
///                                           ──► n requests at once ──► all answered ──► finish
/// ```
///
/// The round trip of a bare PING is the network's; a request's less the PING's is the server's
/// processing. Times are uptime nanoseconds.
public struct ProbeState: Sendable {
    public enum Phase: Sendable, Equatable {
        case waitingForSettings
        case pinging
        case oneAtATime
        case inParallel
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
        /// Answers by `status` or `status reason`.
        public var answers: [String: Int] = [:]
        /// Requests reset (REFUSED_STREAM, or the server's RST_STREAM) rather than answered.
        public var resets = 0
        public var accepted = 0

        public init() {}
    }

    public private(set) var phase = Phase.waitingForSettings
    public private(set) var record = Record()
    let pings: Int
    let requests: Int
    /// Each request in flight: its send time, by tag (the request's index).
    private var sentAt: [Int: UInt64] = [:]
    private var pingSentAt: UInt64?
    private var nextIndex = 0
    private var answeredInPhase = 0
    private var parallelStart: UInt64 = 0

    public init(pings: Int, requests: Int) {
        self.pings = max(0, pings)
        self.requests = max(0, requests)
    }

    /// The next thing to do; `availableStreams` is how many more the connection may open.
    public mutating func next(now: UInt64, hasPeerSettings: Bool, availableStreams: Int) -> Action {
        switch phase {
        case .waitingForSettings:
            guard hasPeerSettings else { return .wait }
            phase = .pinging
            return next(now: now, hasPeerSettings: true, availableStreams: availableStreams)
        case .pinging:
            guard pingSentAt == nil else { return .wait }
            guard record.pingRoundTrips.count < pings else {
                guard requests > 0 else {
                    enter(.done)
                    return .finish
                }
                enter(.oneAtATime)
                return next(now: now, hasPeerSettings: true, availableStreams: availableStreams)
            }
            pingSentAt = now
            return .ping(opaque: UInt64(record.pingRoundTrips.count) &+ 0xFA_9000)
        case .oneAtATime:
            guard sentAt.isEmpty, availableStreams > 0 else { return .wait }
            guard nextIndex < requests else {
                enter(.inParallel)
                parallelStart = now
                return next(now: now, hasPeerSettings: true, availableStreams: availableStreams)
            }
            return send(now: now)
        case .inParallel:
            if nextIndex < requests && availableStreams > 0 { return send(now: now) }
            if answeredInPhase == requests {
                enter(.done)
                return .finish
            }
            return .wait
        case .done:
            return .wait
        }
    }

    /// The PING `opaque` was acknowledged.
    public mutating func pingAcknowledged(_ opaque: UInt64, now: UInt64) {
        guard phase == .pinging, let sent = pingSentAt, opaque == UInt64(record.pingRoundTrips.count) &+ 0xFA_9000
        else { return }
        record.pingRoundTrips.append(now - min(now, sent))
        pingSentAt = nil
    }

    /// Request `tag` was answered `status` (with `reason`, for an error).
    public mutating func answered(tag: UInt64, status: Int, reason: APNsReason?, now: UInt64) {
        guard let sent = sentAt.removeValue(forKey: Int(tag)) else { return }
        let roundTrip = now - min(now, sent)
        if phase == .oneAtATime { record.oneAtATime.append(roundTrip) } else { record.inParallel.append(roundTrip) }
        if status == 200 { record.accepted += 1 }
        let key = reason.map { "\(status) \($0.rawValue)" } ?? "\(status)"
        record.answers[key, default: 0] += 1
        settled(now: now)
    }

    /// Request `tag` was reset instead of answered: counted, not timed.
    public mutating func reset(tag: UInt64, now: UInt64) {
        guard sentAt.removeValue(forKey: Int(tag)) != nil else { return }
        record.resets += 1
        settled(now: now)
    }

    private mutating func settled(now: UInt64) {
        if phase == .inParallel {
            answeredInPhase += 1
            if answeredInPhase == requests { record.parallelSpan = now - min(now, parallelStart) }
        }
    }

    private mutating func send(now: UInt64) -> Action {
        let index = nextIndex
        nextIndex += 1
        sentAt[index] = now
        if phase == .inParallel { record.peakInFlight = max(record.peakInFlight, sentAt.count) }
        return .send(index: index, tag: UInt64(index))
    }

    private mutating func enter(_ next: Phase) {
        phase = next
        nextIndex = 0
        answeredInPhase = 0
    }
}

/// What a probe saw on its connection, handed over when the connection ends.
public struct ProbeOutcome: Sendable {
    public var record: ProbeState.Record
    public var finished: Bool
    /// The TLS version, `nil` over cleartext.
    public var tlsVersion: String?
    /// The server's SETTINGS as first received, and as in force at the end (after the first
    /// accepted request, when one was).
    public var settingsFirst: HTTP2Settings?
    public var settingsLast: HTTP2Settings?
    /// When the connection ended before its answers: why.
    public var failure: EndpointFailure?
    /// A GOAWAY the server sent: its code, and the APNs reason in its debug data.
    public var goAway: String?

    public init(
        record: ProbeState.Record = .init(),
        finished: Bool = false,
        tlsVersion: String? = nil,
        settingsFirst: HTTP2Settings? = nil,
        settingsLast: HTTP2Settings? = nil,
        failure: EndpointFailure? = nil,
        goAway: String? = nil
    ) {
        self.record = record
        self.finished = finished
        self.tlsVersion = tlsVersion
        self.settingsFirst = settingsFirst
        self.settingsLast = settingsLast
        self.failure = failure
        self.goAway = goAway
    }
}

/// `fanout probe`'s connection: carries out `ProbeState`'s actions with the run's request
/// fields and payload, as `LoadConnection` does for a run.
package struct ProbeConnection: HTTP2ConnectionDelegate {
    private var state: ProbeState
    private let configuration: LoadConfiguration
    /// Device tokens as hex text.
    private let tokens: [[UInt8]]
    private var fields: APNsRequestFields
    private var body: PayloadBuffer
    private var settingsFirst: HTTP2Settings?
    private var hasAnswered = false
    /// The server's first GOAWAY, with its APNs reason.
    private var goAway: EndpointFailure?
    private let done: @Sendable (ProbeOutcome) -> Void

    package init(
        configuration: LoadConfiguration,
        tokens: [[UInt8]],
        pings: Int,
        done: @escaping @Sendable (ProbeOutcome) -> Void
    ) {
        self.configuration = configuration
        self.tokens = tokens
        self.done = done
        state = ProbeState(pings: pings, requests: tokens.count)
        fields = APNsRequestFields(
            shared: configuration.sharedFields(authorization: configuration.providerTokens?.current().value)
        )
        body = PayloadBuffer(byteCount: configuration.encoder.template.sizeLimit + 64)
    }

    package mutating func connectionStarted(_ connection: inout HTTP2Connection) {
        turn(&connection)
    }

    package mutating func handle(_ event: HTTP2Event, connection: inout HTTP2Connection) {
        let now = NIODeadline.now().uptimeNanoseconds
        switch event {
        case .remoteSettingsChanged(let settings):
            if settingsFirst == nil { settingsFirst = settings }
        case .pingAcknowledged(let opaque):
            state.pingAcknowledged(opaque, now: now)
        case .message(let response):
            let reason = response.status == 200 ? nil : APNsErrorBody.reason(in: response.body)
            hasAnswered = true
            state.answered(tag: response.tag, status: response.status, reason: reason, now: now)
        case .streamReset(_, let tag, _, _):
            state.reset(tag: tag, now: now)
        case .goAway(_, let code, let debugData) where goAway == nil:
            goAway = .goAway(code: code, debugData: debugData)
        case .goAway, .connectionError:
            break
        }
        turn(&connection)
    }

    package mutating func connectionEnded(_ connection: borrowing HTTP2Connection, error: (any Error)?) {
        let failure =
            state.phase == .done
            ? nil : EndpointFailure.ended(answered: hasAnswered, goAway: goAway, error: error, connection)
        done(
            ProbeOutcome(
                record: state.record,
                finished: state.phase == .done,
                tlsVersion: connection.tlsVersion,
                settingsFirst: settingsFirst,
                settingsLast: connection.hasPeerSettings ? connection.remoteSettings : nil,
                failure: failure,
                goAway: goAway?.detail
            )
        )
    }

    private mutating func turn(_ connection: inout HTTP2Connection) {
        while true {
            let now = NIODeadline.now().uptimeNanoseconds
            switch state.next(
                now: now,
                hasPeerSettings: connection.hasPeerSettings,
                availableStreams: connection.availableStreams
            ) {
            case .ping(let opaque):
                connection.ping(opaque: opaque)
            case .send(let index, let tag):
                // One that cannot go counts as reset, and the probe goes on with the next.
                if !send(index: index, tag: tag, &connection) { state.reset(tag: tag, now: now) }
            case .finish:
                connection.goAway()
                return
            case .wait:
                return
            }
        }
    }

    /// Encodes and sends request `index`; `false` when it could not go (a bad payload, a
    /// closed connection).
    private mutating func send(index: Int, tag: UInt64, _ connection: inout HTTP2Connection) -> Bool {
        tokens[index].withUnsafeBytes { token in
            let input = NotificationInput(
                token: token,
                sequence: UInt64(index),
                fields: UnsafeRawBufferPointer(start: nil, count: 0),
                tokenIsValidatedHex: true
            )
            guard let payload = try? configuration.encoder.encode(input, into: &body) else { return false }
            fields.select(token: token)
            return (try? connection.sendRequest(fields, bodyBytes: payload, tag: tag)) != nil
        }
    }
}
