import Atomics
import FanoutAPNs
import FanoutHTTP2
import FanoutListening
import FanoutMeasure
import FanoutNotation
import Foundation
import NIOConcurrencyHelpers
import NIOCore

/// What the sink has received and answered, across all connections. Connections count
/// locally and add their counts here every `SinkCounts.flushInterval` requests and when they
/// end, so the hot path does not contend on shared atomics.
public final class SinkStatistics: Sendable {
    private let requests = ManagedAtomic<Int>(0)
    private let accepted = AcceptedCount()
    private let byReason: [ManagedAtomic<Int>]
    private let bodyBytes = ManagedAtomic<Int>(0)
    private let resets = ManagedAtomic<Int>(0)
    private let untimedIDs = ManagedAtomic<Int>(0)
    private let peakStreams = ManagedAtomic<Int>(0)
    private let digestCount = ManagedAtomic<UInt64>(0)
    private let digestSum = ManagedAtomic<UInt64>(0)
    private let digestSquares = ManagedAtomic<UInt64>(0)
    private let connectionsOpened = ManagedAtomic<Int>(0)
    private let connectionsClosed = ManagedAtomic<Int>(0)
    /// How the sink defended itself (`SinkDefences`): rare events, counted where they happen.
    private let refused = ManagedAtomic<Int>(0)
    private let evicted = ManagedAtomic<Int>(0)
    private let enhanceYourCalm = ManagedAtomic<Int>(0)
    private let acceptErrors = ManagedAtomic<Int>(0)
    private let adminAcceptErrors = ManagedAtomic<Int>(0)
    private let open = NIOLockedValueBox<[Int: SinkConnectionRecord]>([:])
    /// When the statistics started, as a wall-clock time.
    public let startedAt = Date()
    /// The sink's own delays, handed over by its loops once a second (`SinkLoopRecorder`).
    let timing = SinkTimingTotals()

    public init() {
        byReason = APNsReason.all.map { _ in ManagedAtomic(0) }
    }

    /// Registers a connection from `peer`; its counts are kept apart while it is open.
    func connectionOpened(peer: String) -> SinkConnectionRecord {
        let id = connectionsOpened.wrappingIncrementThenLoad(ordering: .relaxed)
        let record = SinkConnectionRecord(id: id, peer: peer)
        open.withLockedValue { $0[id] = record }
        return record
    }

    func connectionClosed(_ record: SinkConnectionRecord) {
        open.withLockedValue { _ = $0.removeValue(forKey: record.id) }
        let summary = record.summary
        closed.withLockedValue { closed in
            if closed.kept.count < Self.closedConnectionsKept {
                closed.kept.append(summary)
            } else {
                closed.dropped += 1
            }
        }
        connectionsClosed.wrappingIncrement(ordering: .relaxed)
    }

    /// A connection was refused (a limit: `ConnectionAdmission`).
    func connectionRefused() { refused.wrappingIncrement(ordering: .relaxed) }
    /// A connection that had sent no authenticated request was closed to make room for a new one.
    func connectionEvicted() { evicted.wrappingIncrement(ordering: .relaxed) }
    /// A connection was ended with GOAWAY ENHANCE_YOUR_CALM (a flood limit).
    func connectionCalmed() { enhanceYourCalm.wrappingIncrement(ordering: .relaxed) }
    /// Accepting a connection failed (EMFILE, ENFILE: `AcceptBackoff`).
    func acceptFailed() { acceptErrors.wrappingIncrement(ordering: .relaxed) }
    func adminAcceptFailed() { adminAcceptErrors.wrappingIncrement(ordering: .relaxed) }

    /// The connections open now, oldest first, with their counts.
    public var openConnections: [SinkConnectionSummary] {
        open.withLockedValue { Array($0.values) }.map(\.summary).sorted { $0.id < $1.id }
    }

    /// Closed connections kept for the report: the first `closedConnectionsKept`; the rest are
    /// only counted (`closedConnectionsDropped`), so a provider that connects per notification
    /// cannot make the sink's memory grow with the fan-out.
    public static let closedConnectionsKept = 10_000
    private let closed = NIOLockedValueBox<(kept: [SinkConnectionSummary], dropped: Int)>(([], 0))

    /// Every connection kept, closed and open, oldest first.
    public var connections: [SinkConnectionSummary] {
        (closed.withLockedValue { $0.kept } + openConnections).sorted { $0.id < $1.id }
    }

    /// Closed connections not kept.
    public var closedConnectionsDropped: Int { closed.withLockedValue { $0.dropped } }

    /// Requests counted so far (up to `SinkCounts.flushInterval` a connection behind).
    public var requestCount: Int { requests.load(ordering: .acquiring) }
    /// Accepted notifications counted so far (as `requestCount`).
    public var acceptedCount: Int { accepted.value }
    /// Signalled when the first requests are counted, when the accepted count reaches the mark
    /// a watcher asked for (`signal(whenAccepted:)`), and when the last expected token is
    /// accepted (`expectedTokensCompleted`): what a job watching for its ends waits on. Not at
    /// every add: each signal wakes the watcher's task on another thread (a futex and a
    /// semaphore, 4.6% of the sink's CPU under h2load when it was signalled at every add), and
    /// an idle end reads `lastRequestUptime` when its time comes.
    public let changes = Wakeup()
    /// The latest add that counted requests.
    private let lastRequest = LastRequestTime()

    func add(_ counts: SinkCounts, to record: SinkConnectionRecord, at now: UInt64) {
        record.add(counts)
        add(counts, at: now)
    }

    /// The acceptance that completed `--expect-tokens`' set: the watcher ends on it.
    func expectedTokensCompleted() { changes.signal() }

    /// Adds a connection's counts, made by `now` (uptime nanoseconds).
    func add(_ counts: SinkCounts, at now: UInt64) {
        if counts.requests > 0 {
            lastRequest.moveOn(to: now)
            // Releasing: a watcher that reads the count (acquiring) reads the time told before it.
            let total = requests.wrappingIncrementThenLoad(by: counts.requests, ordering: .releasing)
            // The first requests signal, once their count is there to read: a watcher waiting for
            // a first request (`--first-request-within`) finds it and waits for idleness instead.
            if total == counts.requests { changes.signal() }
        }
        if counts.accepted > 0 && accepted.add(counts.accepted) { changes.signal() }
        bodyBytes.wrappingIncrement(by: counts.bodyBytes, ordering: .relaxed)
        resets.wrappingIncrement(by: counts.resets, ordering: .relaxed)
        if counts.untimedIDs > 0 { untimedIDs.wrappingIncrement(by: counts.untimedIDs, ordering: .relaxed) }
        var peak = peakStreams.load(ordering: .relaxed)
        while counts.peakStreams > peak {
            (_, peak) = peakStreams.compareExchange(expected: peak, desired: counts.peakStreams, ordering: .relaxed)
        }
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
        for (index, reason) in APNsReason.all.enumerated() {
            let count = byReason[index].load(ordering: .relaxed)
            if count > 0 { reasons[reason] = count }
        }
        return SinkSummary(
            requests: requests.load(ordering: .relaxed),
            accepted: accepted.value,
            rejected: reasons,
            bodyBytes: bodyBytes.load(ordering: .relaxed),
            streamsReset: resets.load(ordering: .relaxed),
            peakConcurrentStreams: peakStreams.load(ordering: .relaxed),
            connectionsOpened: connectionsOpened.load(ordering: .relaxed),
            connectionsClosed: connectionsClosed.load(ordering: .relaxed),
            digest: NotificationDigest(
                count: digestCount.load(ordering: .relaxed),
                sum: digestSum.load(ordering: .relaxed),
                squares: digestSquares.load(ordering: .relaxed)
            ),
            ownDelays: timing.summary,
            untimedIDs: untimedIDs.load(ordering: .relaxed),
            defences: SinkDefences(
                refused: refused.load(ordering: .relaxed),
                evicted: evicted.load(ordering: .relaxed),
                enhanceYourCalm: enhanceYourCalm.load(ordering: .relaxed),
                acceptErrors: acceptErrors.load(ordering: .relaxed),
                adminAcceptErrors: adminAcceptErrors.load(ordering: .relaxed)
            )
        )
    }
}

/// One open connection's counters, updated (under a lock, once per addition) when it adds
/// its counts to the statistics.
final class SinkConnectionRecord: Sendable {
    let id: Int
    let peer: String
    let openedAt = Date()
    let openedUptime = NIODeadline.now().uptimeNanoseconds
    private let totals = NIOLockedValueBox(SinkCounts())
    /// Its streams over time, and how it ended.
    private let ending = NIOLockedValueBox(Ending())

    struct Ending {
        var streams = StreamUse()
        var refused = 0
        /// Uptime ns when it closed, and whether the provider closed it (not the sink's GOAWAY
        /// or abort).
        var closedUptime: UInt64?
        var closedByProvider = false
        var maybeUnread = 0
    }

    func note(streams: StreamUse, refused: Int) {
        ending.withLockedValue {
            $0.streams = streams
            $0.refused = refused
        }
    }

    /// Answers written that the provider never showed it read, on a connection that broke.
    func maybeUnread(_ answers: Int) { ending.withLockedValue { $0.maybeUnread += answers } }

    func closed(at uptime: UInt64, byProvider: Bool) {
        ending.withLockedValue {
            $0.closedUptime = uptime
            $0.closedByProvider = byProvider
        }
    }

    init(id: Int, peer: String) {
        self.id = id
        self.peer = peer
    }

    func add(_ counts: SinkCounts) {
        totals.withLockedValue { totals in
            totals.requests += counts.requests
            totals.accepted += counts.accepted
            totals.bodyBytes += counts.bodyBytes
            totals.resets += counts.resets
            totals.peakStreams = max(totals.peakStreams, counts.peakStreams)
            for (index, count) in counts.byReason.enumerated() where count > 0 {
                totals.byReason[index] += count
            }
        }
    }

    var summary: SinkConnectionSummary {
        let totals = totals.withLockedValue { $0 }
        let ending = ending.withLockedValue { $0 }
        var rejected: [APNsReason: Int] = [:]
        for (index, count) in totals.byReason.enumerated() where count > 0 {
            rejected[APNsReason.all[index]] = count
        }
        return SinkConnectionSummary(
            id: id,
            peer: peer,
            openedAt: openedAt,
            requests: totals.requests,
            accepted: totals.accepted,
            rejected: rejected,
            bodyBytes: totals.bodyBytes,
            streamsReset: totals.resets,
            peakStreams: max(totals.peakStreams, ending.streams.peak),
            openedUptime: openedUptime,
            closedUptime: ending.closedUptime,
            closedByProvider: ending.closedByProvider,
            meanStreams: ending.streams.mean,
            busyFrom: ending.streams.firstRequest,
            busyNanoseconds: ending.streams.busy,
            refusedStreams: ending.refused,
            maybeUnread: ending.maybeUnread
        )
    }
}

/// An open connection's counters at one moment (counted up to its last addition: at most
/// `SinkCounts.flushInterval` requests or one second behind).
public struct SinkConnectionSummary: Sendable, Hashable {
    /// 1 for the sink's first connection, counting up.
    public var id: Int
    /// The client's address, `host:port`.
    public var peer: String
    public var openedAt: Date
    public var requests: Int
    public var accepted: Int
    public var rejected: [APNsReason: Int]
    public var bodyBytes: Int
    public var streamsReset: Int
    /// The most streams open at once on this connection.
    public var peakStreams: Int
    /// Uptime nanoseconds when it opened and closed (`nil`: open).
    public var openedUptime: UInt64 = 0
    public var closedUptime: UInt64?
    /// Whether the provider closed it, rather than the sink (GOAWAY, abort, drain).
    public var closedByProvider = false
    /// The time-weighted mean of its streams in flight, from its first request to its last
    /// answer (`StreamUse`), as of its last addition.
    public var meanStreams: Double = 0
    /// Its first request's arrival (uptime ns; 0 before any) and how long it was busy after.
    public var busyFrom: UInt64 = 0
    public var busyNanoseconds: UInt64 = 0
    /// Streams refused past the announced limit.
    public var refusedStreams = 0
    /// Answers written that the provider never showed it read (no acknowledgement of the PING
    /// behind them) on a connection that broke: maybe never read.
    public var maybeUnread = 0
}

/// One connection's counts since it last added them to the statistics.
struct SinkCounts {
    /// Requests between additions to the shared statistics; counts older than
    /// `flushDelay` are added on a timer when fewer requests than that arrive.
    static let flushInterval = 256
    static let flushDelay: Int64 = 1_000_000_000
    /// With the sink as an instrument, a connection with nothing in flight adds its counts
    /// after this long rather than `flushDelay` (`--expect` ends the run on them).
    static let idleFlushDelay: UInt64 = 10_000_000

    var requests = 0
    var accepted = 0
    var byReason = [Int](repeating: 0, count: APNsReason.all.count)
    var bodyBytes = 0
    var resets = 0
    /// Timed apns-ids whose send time was not believed (`AnswerWriter.timedIDBound`).
    var untimedIDs = 0
    /// The most streams open at once on the connection since the last addition.
    var peakStreams = 0
    var digest = NotificationDigest()

    /// Rejections of every reason.
    private(set) var rejected = 0

    /// Nothing counted since the last addition.
    var isEmpty: Bool { requests == 0 && accepted == 0 && rejected == 0 && resets == 0 }

    mutating func reject(_ reason: APNsReason) {
        byReason[reason.index] += 1
        rejected += 1
    }

    mutating func clear() {
        requests = 0
        accepted = 0
        rejected = 0
        for index in byReason.indices { byReason[index] = 0 }
        bodyBytes = 0
        resets = 0
        untimedIDs = 0
        peakStreams = 0
        digest = NotificationDigest()
    }
}

/// The sink's counters at one moment.
public struct SinkSummary: Sendable, Hashable {
    public var requests: Int
    public var accepted: Int
    public var rejected: [APNsReason: Int]
    public var bodyBytes: Int
    public var streamsReset: Int
    /// The most streams open at once on one connection: what the clients' concurrency reached
    /// under the limit the sink announced.
    public var peakConcurrentStreams: Int
    public var connectionsOpened: Int
    public var connectionsClosed: Int
    /// Over every accepted notification's (token, payload).
    public var digest: NotificationDigest
    /// How late the sink itself answered, what the scenario held answers for, its loops' lag
    /// and CPU (up to a second behind while it runs).
    public var ownDelays = SinkOwnDelays()
    /// Requests whose apns-id was timed (`TimedAPNsID`) but whose send time lay further from
    /// the sink's clock than it can believe (`AnswerWriter.timedIDBound`): taken as untimed,
    /// and kept out of `ownDelays.fromSend`.
    public var untimedIDs = 0
    /// Connections refused, evicted and ended for flooding; accepts that failed.
    public var defences = SinkDefences()

    /// The summary as text, one line a counter (grouped: 240,000), rejections by reason.
    public var text: String {
        var lines = [
            "requests: \(requests.grouped)",
            "accepted: \(accepted.grouped)",
            "rejected: \(rejected.values.reduce(0, +).grouped)",
        ]
        for (reason, count) in rejected.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            lines.append("  \(reason.status) \(reason.rawValue): \(count.grouped)")
        }
        lines += [
            "payload bytes: \(bodyBytes.grouped)",
            "streams reset: \(streamsReset.grouped)",
            "peak streams on a connection: \(peakConcurrentStreams.grouped)",
            "connections: \(connectionsOpened.grouped) opened, \(connectionsClosed.grouped) closed"
                + (defences.isEmpty ? "" : ", \(defences.text)"),
            "digest: \(digest.text)",
            "own lateness (answers written after their due time): \(ownDelays.lateness.text)",
            "own lateness from the send (timed apns-ids: the queues on the way in too): \(ownDelays.fromSend.text)",
            "held by the scenario (latency, pacing, stalls): \(ownDelays.injected.text)",
            "event-loop lag: \(ownDelays.loopLag.text)",
        ]
        if untimedIDs > 0 {
            lines.insert(
                "timed apns-ids not believed (sent more than \(AnswerWriter.timedIDBoundText) before they arrived, or after), "
                    + "taken as untimed: \(untimedIDs)",
                at: lines.count - 2
            )
        }
        if !ownDelays.loopUtilisation.isEmpty {
            let shares = ownDelays.loopUtilisation.map { String(format: "%.0f%%", $0 * 100) }
            lines.append("event-loop CPU: \(shares.joined(separator: ", "))")
        }
        return lines.joined(separator: "\n")
    }
}

/// How a shared sink defended itself against its clients, counted since it started.
public struct SinkDefences: Sendable, Hashable {
    /// Connections refused at a limit (in all, from one address, idle from one address).
    public var refused = 0
    /// Connections that had sent no authenticated request, closed to make room for a new one at the total.
    public var evicted = 0
    /// Connections ended with GOAWAY ENHANCE_YOUR_CALM: a flood limit (cheap frames, rapid
    /// reset, CONTINUATION, unread acknowledgements, a frame that never completes).
    public var enhanceYourCalm = 0
    /// Accepts that failed (out of descriptors: EMFILE, ENFILE), each followed by a pause.
    public var acceptErrors = 0
    /// The same on the admin port (`/stats`, `/metrics`), which pauses the same way.
    public var adminAcceptErrors = 0

    public init(
        refused: Int = 0,
        evicted: Int = 0,
        enhanceYourCalm: Int = 0,
        acceptErrors: Int = 0,
        adminAcceptErrors: Int = 0
    ) {
        self.refused = refused
        self.evicted = evicted
        self.enhanceYourCalm = enhanceYourCalm
        self.acceptErrors = acceptErrors
        self.adminAcceptErrors = adminAcceptErrors
    }

    /// None of them happened.
    public var isEmpty: Bool { self == SinkDefences() }

    /// `3 refused, 1 evicted, 2 ended with ENHANCE_YOUR_CALM, 0 accepts failed`, and when the
    /// admin port's failed too `, 12 on the admin port`.
    public var text: String {
        "\(refused.grouped) refused, \(evicted.grouped) evicted, \(enhanceYourCalm.grouped) ended with ENHANCE_YOUR_CALM, "
            + "\(acceptErrors.grouped) accepts failed"
            + (adminAcceptErrors == 0 ? "" : ", \(adminAcceptErrors.grouped) on the admin port")
    }
}

/// A watcher of the APNs sink reads its counts as connections add them (every
/// `SinkCounts.flushInterval` requests a connection, and at least once a second): the last
/// request is timed by the latest add that counted requests, and `changes` is signalled only at
/// what a watcher cannot wait for by the clock — the first requests, the accepted count it
/// asked for, the expected tokens complete.
extension SinkStatistics: SinkActivity {
    public var lastRequestUptime: UInt64? { lastRequest.value }

    public func signal(whenAccepted count: Int) { accepted.signal(at: count) }
}
