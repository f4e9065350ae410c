import Atomics
import FanoutAPNs

/// What the sink has received and answered, across all connections. Connections count
/// locally and add their counts here every `SinkCounts.flushInterval` requests and when they
/// end, so the hot path does not contend on shared atomics.
public final class SinkStatistics: Sendable {
    private let requests = ManagedAtomic<Int>(0)
    private let accepted = ManagedAtomic<Int>(0)
    private let byReason: [ManagedAtomic<Int>]
    private let bodyBytes = ManagedAtomic<Int>(0)
    private let resets = ManagedAtomic<Int>(0)
    private let digestCount = ManagedAtomic<UInt64>(0)
    private let digestSum = ManagedAtomic<UInt64>(0)
    private let digestSquares = ManagedAtomic<UInt64>(0)
    private let connectionsOpened = ManagedAtomic<Int>(0)
    private let connectionsClosed = ManagedAtomic<Int>(0)

    public init() {
        byReason = APNsReason.allCases.map { _ in ManagedAtomic(0) }
    }

    func connectionOpened() { connectionsOpened.wrappingIncrement(ordering: .relaxed) }
    func connectionClosed() { connectionsClosed.wrappingIncrement(ordering: .relaxed) }

    func add(_ counts: SinkCounts) {
        requests.wrappingIncrement(by: counts.requests, ordering: .relaxed)
        accepted.wrappingIncrement(by: counts.accepted, ordering: .relaxed)
        bodyBytes.wrappingIncrement(by: counts.bodyBytes, ordering: .relaxed)
        resets.wrappingIncrement(by: counts.resets, ordering: .relaxed)
        for (index, count) in counts.byReason.enumerated() where count > 0 {
            byReason[index].wrappingIncrement(by: count, ordering: .relaxed)
        }
        digestCount.wrappingIncrement(by: counts.digest.count, ordering: .relaxed)
        digestSum.wrappingIncrement(by: counts.digest.sum, ordering: .relaxed)
        digestSquares.wrappingIncrement(by: counts.digest.squares, ordering: .relaxed)
    }

    /// A snapshot of every counter.
    public var summary: SinkSummary {
        var reasons: [APNsReason: Int] = [:]
        for (index, reason) in APNsReason.allCases.enumerated() {
            let count = byReason[index].load(ordering: .relaxed)
            if count > 0 { reasons[reason] = count }
        }
        return SinkSummary(
            requests: requests.load(ordering: .relaxed),
            accepted: accepted.load(ordering: .relaxed),
            rejected: reasons,
            bodyBytes: bodyBytes.load(ordering: .relaxed),
            streamsReset: resets.load(ordering: .relaxed),
            connectionsOpened: connectionsOpened.load(ordering: .relaxed),
            connectionsClosed: connectionsClosed.load(ordering: .relaxed),
            digest: NotificationDigest(
                count: digestCount.load(ordering: .relaxed),
                sum: digestSum.load(ordering: .relaxed),
                squares: digestSquares.load(ordering: .relaxed)
            )
        )
    }
}

/// One connection's counts since it last added them to the statistics.
struct SinkCounts {
    /// Requests between additions to the shared statistics.
    static let flushInterval = 256

    var requests = 0
    var accepted = 0
    var byReason = [Int](repeating: 0, count: APNsReason.allCases.count)
    var bodyBytes = 0
    var resets = 0
    var digest = NotificationDigest()

    mutating func reject(_ reason: APNsReason) {
        byReason[Self.index[reason]!] += 1
    }

    mutating func clear() {
        requests = 0
        accepted = 0
        for index in byReason.indices { byReason[index] = 0 }
        bodyBytes = 0
        resets = 0
        digest = NotificationDigest()
    }

    /// Every reason, made once (`allCases` builds an array per call); counts are kept in this order.
    static let reasons = APNsReason.allCases

    static let index: [APNsReason: Int] = Dictionary(
        uniqueKeysWithValues: APNsReason.allCases.enumerated().map { ($1, $0) }
    )
}

/// The sink's counters at one moment.
public struct SinkSummary: Sendable, Hashable {
    public var requests: Int
    public var accepted: Int
    public var rejected: [APNsReason: Int]
    public var bodyBytes: Int
    public var streamsReset: Int
    public var connectionsOpened: Int
    public var connectionsClosed: Int
    /// Over every accepted notification's (token, payload).
    public var digest: NotificationDigest

    /// The summary as text, one line a counter, rejections by reason.
    public var text: String {
        var lines = [
            "requests: \(requests)",
            "accepted: \(accepted)",
            "rejected: \(rejected.values.reduce(0, +))",
        ]
        for (reason, count) in rejected.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            lines.append("  \(reason.status) \(reason.rawValue): \(count)")
        }
        lines += [
            "payload bytes: \(bodyBytes)",
            "streams reset: \(streamsReset)",
            "connections: \(connectionsOpened) opened, \(connectionsClosed) closed",
            "digest: \(digest)",
        ]
        return lines.joined(separator: "\n")
    }
}
