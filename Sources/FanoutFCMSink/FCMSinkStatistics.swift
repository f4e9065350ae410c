import Atomics
import FanoutAPNs
import FanoutFCM
import FanoutListening
import FanoutPush
import Foundation

/// What an FCM sink answered, counted as it answers (relaxed atomics: read at the end or live,
/// never used to decide).
public final class FCMSinkStatistics: Sendable {
    /// Each way a request can end.
    public enum Outcome: Int, CaseIterable, Sendable {
        /// 200, delivered.
        case delivered
        /// 200 to a `validate_only` send: checked, not delivered.
        case validated
        /// 200 to a collapsible message past its device's burst: accepted, its delivery held.
        case held
        /// 400 INVALID_ARGUMENT: the body failed FCM's checks.
        case invalidArgument
        /// 404 UNREGISTERED: a token the sink holds unregistered.
        case unregistered
        /// 403 SENDER_ID_MISMATCH: a token of another sender.
        case senderIDMismatch
        /// 429 QUOTA_EXCEEDED: past the project's quota.
        case quotaExceeded
        /// 500 INTERNAL: the share of sends the sink fails (`internalShare`).
        case internalError
        /// 503 UNAVAILABLE with Retry-After: the share the sink turns away (`unavailableShare`).
        case unavailable
        /// 401 UNAUTHENTICATED: no bearer, or one the sink did not issue or that expired.
        case unauthenticated
        /// 403 PERMISSION_DENIED: another project's send.
        case wrongProject
        /// 404 NOT_FOUND: no such method or path.
        case notFound
        /// The token endpoint issued an access token.
        case tokenIssued
        /// The token endpoint refused a grant.
        case tokenRefused

        /// Its name in summaries and `/stats`.
        public var name: String {
            switch self {
            case .delivered: "delivered"
            case .validated: "validated"
            case .held: "held"
            case .invalidArgument: "invalid_argument"
            case .unregistered: "unregistered"
            case .senderIDMismatch: "sender_id_mismatch"
            case .quotaExceeded: "quota_exceeded"
            case .internalError: "internal"
            case .unavailable: "unavailable"
            case .unauthenticated: "unauthenticated"
            case .wrongProject: "wrong_project"
            case .notFound: "not_found"
            case .tokenIssued: "token_issued"
            case .tokenRefused: "token_refused"
            }
        }

        /// A send answered 200 and bound for a device (delivered, or held by its device's
        /// rate): what `--expect` counts. A `validate_only` send's 200 is not one.
        public var isAccepted: Bool { self == .delivered || self == .held }

        /// FCM's code for a refusal that has one, as a sender classifies the answer (a 401,
        /// another project's 403 and a method's 404 carry none).
        public var code: FCMErrorCode? {
            switch self {
            case .invalidArgument: .invalidArgument
            case .unregistered: .unregistered
            case .senderIDMismatch: .senderIDMismatch
            case .quotaExceeded: .quotaExceeded
            case .internalError: .internal
            case .unavailable: .unavailable
            default: nil
            }
        }
    }

    /// How a request reached the sink.
    public enum Transport: Int, CaseIterable, Sendable {
        case http2, http1

        public var name: String { self == .http2 ? "h2" : "http/1.1" }
    }

    private let outcomes = (0..<Outcome.allCases.count).map { _ in ManagedAtomic(0) }
    private let requests = (0..<Transport.allCases.count).map { _ in ManagedAtomic(0) }
    private let connections = (0..<Transport.allCases.count).map { _ in ManagedAtomic(0) }
    /// `NotificationDigest`'s count, sum and squares of the sends answered 200, added to by
    /// every connection: the digest is a sum, so the order of the adds does not matter.
    private let digestParts = (0..<3).map { _ in ManagedAtomic<UInt64>(0) }

    /// Sends accepted (`Outcome.isAccepted`), and the count at which `changes` is signalled
    /// (`signal(whenAccepted:)`).
    private let accepted = AcceptedCount()
    /// Uptime nanoseconds until which the last request kept the sink busy (`busy(until:)`).
    private let lastRequest = LastRequestTime()
    /// Whether a request was counted yet.
    private let firstCounted = ManagedAtomic(false)
    /// Signalled at the first request counted, when the accepted count reaches the mark asked
    /// for, and when every expected token was accepted (`ExpectedTokens`): what a job watching
    /// for its ends waits on. Not at every request: an idle end reads `lastRequestUptime` when
    /// its time comes.
    public let changes = Wakeup()
    /// When the sink started counting.
    public let startedAt = Date()

    public init() {}

    func count(_ outcome: Outcome, over transport: Transport) {
        outcomes[outcome.rawValue].wrappingIncrement(ordering: .relaxed)
        // Releasing: a watcher that reads this count (acquiring) reads the arrival told before it.
        requests[transport.rawValue].wrappingIncrement(ordering: .releasing)
        // The first count signals: a watcher waiting for a first request (`--idle-exit`'s
        // `--first-request-within`) then finds it counted, and waits for idleness instead.
        if !firstCounted.load(ordering: .relaxed), !firstCounted.exchange(true, ordering: .relaxed) {
            changes.signal()
        }
        if outcome.isAccepted && accepted.add(1) { changes.signal() }
    }

    /// Limits reached, by `LimitKind.index`.
    private let limits = LimitKind.allCases.map { _ in ManagedAtomic(0) }

    func limitReached(_ kind: LimitKind) {
        limits[kind.index].wrappingIncrement(ordering: .relaxed)
    }

    /// How often `kind` of limit was reached: a connection refused, closed idle, requests
    /// reset for their time, the admin port's.
    public func limitsReached(_ kind: LimitKind) -> Int { limits[kind.index].load(ordering: .relaxed) }

    /// The connection was busy with a request until `time` (uptime nanoseconds): told at its
    /// arrival, before it is counted (so a count above 0 always has a time), and again with the
    /// time its answer is held to (`--latency`), so an idle end waits for it. Only ever later:
    /// connections tell their times out of order.
    func busy(until time: UInt64) { lastRequest.moveOn(to: time) }

    /// Answers by the status written, `statusCounted`'s statuses and then every other.
    private let statuses = (0...FCMSinkStatistics.statusCounted.count).map { _ in ManagedAtomic(0) }
    /// The statuses the sink answers with.
    static let statusCounted = [200, 400, 401, 403, 404, 429, 500, 503]

    /// A request was answered with `status`.
    func answered(status: Int) {
        let index =
            switch status {
            case 200: 0
            case 400: 1
            case 401: 2
            case 403: 3
            case 404: 4
            case 429: 5
            case 500: 6
            case 503: 7
            default: Self.statusCounted.count
            }
        statuses[index].wrappingIncrement(ordering: .relaxed)
    }

    /// The answers by their status (the statuses answered at least once; `0`: any other).
    public var byStatus: [Int: Int] {
        var counts: [Int: Int] = [:]
        for (index, count) in statuses.enumerated() {
            let value = count.load(ordering: .relaxed)
            if value > 0 { counts[index < Self.statusCounted.count ? Self.statusCounted[index] : 0] = value }
        }
        return counts
    }

    func connectionOpened(_ transport: Transport) {
        connections[transport.rawValue].wrappingIncrement(ordering: .relaxed)
    }

    /// Adds a send answered 200 to the digest: `NotificationDigest.hash` of its token and its
    /// whole body, what the sender adds for the same send once it reads the 200.
    func digest(token: UnsafeRawBufferPointer, body: UnsafeRawBufferPointer) {
        let hash = NotificationDigest.hash(token: token, payload: body)
        digestParts[0].wrappingIncrement(ordering: .relaxed)
        digestParts[1].wrappingIncrement(by: hash, ordering: .relaxed)
        digestParts[2].wrappingIncrement(by: hash.multipliedFullWidth(by: hash).high, ordering: .relaxed)
    }

    /// The order-independent digest of the token sends answered 200 (a topic's or a
    /// condition's have no token and are not in it).
    public var digest: NotificationDigest {
        NotificationDigest(
            count: digestParts[0].load(ordering: .relaxed),
            sum: digestParts[1].load(ordering: .relaxed),
            squares: digestParts[2].load(ordering: .relaxed)
        )
    }

    public subscript(_ outcome: Outcome) -> Int { outcomes[outcome.rawValue].load(ordering: .relaxed) }

    /// The refusals by FCM's code, as the sender counts them (`Outcome.code`).
    public var rejected: [PushReason: Int] {
        Dictionary(uniqueKeysWithValues: rejectedByCode.map { (PushReason.fcm($0.key), $0.value) })
    }

    /// The refusals by FCM's code (`Outcome.code`), as the live page keys them.
    public var rejectedByCode: [FCMErrorCode: Int] {
        var rejected: [FCMErrorCode: Int] = [:]
        for outcome in Outcome.allCases {
            guard let code = outcome.code, self[outcome] > 0 else { continue }
            rejected[code, default: 0] += self[outcome]
        }
        return rejected
    }

    /// Requests answered over `transport`.
    public func requests(over transport: Transport) -> Int {
        requests[transport.rawValue].load(ordering: .acquiring)
    }

    /// Connections that chose `transport`.
    public func connections(over transport: Transport) -> Int {
        connections[transport.rawValue].load(ordering: .relaxed)
    }

    /// Requests answered, over both.
    public var totalRequests: Int { Transport.allCases.reduce(0) { $0 + requests(over: $1) } }
}

extension FCMSinkStatistics: SinkActivity {
    public var requestCount: Int { totalRequests }
    public var acceptedCount: Int { accepted.value }

    public var lastRequestUptime: UInt64? { lastRequest.value }

    public func signal(whenAccepted count: Int) { accepted.signal(at: count) }
}
