import Atomics
import FanoutAPNs
import FanoutMeasure
import FanoutPush
import FanoutScenarioTerms
import Histogram
import NIOConcurrencyHelpers

/// The sink as an instrument for the provider under test (`fanout sink --output`): when the
/// fan-out started, when each notification arrived after that, how each connection used its
/// streams, and the conformance card.
///
/// ```
///   start mark ─────────────────────────────────────────────────────────────► time
///   (the first request, or --trigger's launch)
///        │◄── delivery time of one accepted notification ──►│ arrival
///        │◄──────────────── fan-out time: to the last accepted arrival ──────────────►│
/// ```
///
/// Arrivals are counted per loop (`SinkLoopRecorder`) in µs since the mark and handed over
/// once a second into `FanOutTotals`; the card is shared (`ProviderCard`).
public final class ProviderInstrument: Sendable {
    /// When the fan-out is taken to start.
    public enum StartMark: Sendable, Hashable {
        /// The first request any connection sends.
        case firstRequest
        /// Set by `markStart(at:)` (when `--trigger`'s command is launched).
        case explicit
    }

    /// When the fan-out is taken to start.
    public let startMark: StartMark
    /// The conformance card every connection writes on.
    public let card: ProviderCard
    /// What the broadcast rules remember (channels created, deleted, timestamps, budgets).
    package let broadcasts: BroadcastFindings
    /// Every accepted notification's and every request's arrival since the mark, all loops.
    public let totals = FanOutTotals()
    /// `--expect-tokens`: the set whose every token ends the run once seen.
    public let expected: ExpectedTokens?
    /// The mark in uptime nanoseconds; 0 until set.
    @usableFromInline
    let mark = ManagedAtomic<UInt64>(0)

    /// `priorityBudget` priority-10 broadcasts a channel may carry per `priorityWindow`
    /// (`--liveactivity-priority-budget`).
    public init(
        startMark: StartMark = .firstRequest,
        expected: ExpectedTokens? = nil,
        priorityBudget: Int = ProviderRule.Broadcast.priorityBudget,
        priorityWindow: Duration = ProviderRule.Broadcast.priorityWindow
    ) {
        self.startMark = startMark
        self.expected = expected
        let card = ProviderCard()
        self.card = card
        broadcasts = BroadcastFindings(card: card, budget: priorityBudget, window: priorityWindow)
    }

    /// The mark (uptime nanoseconds), if set.
    public var startedAt: UInt64? {
        let value = mark.load(ordering: .relaxed)
        return value == 0 ? nil : value
    }

    /// Sets the mark, once (later calls keep the first).
    public func markStart(at uptime: UInt64) {
        _ = mark.compareExchange(expected: 0, desired: max(1, uptime), ordering: .relaxed)
    }

    /// The mark for a request received at `received`: the first request sets it when the mark is
    /// the first request; with an explicit mark, a request before it counts from itself.
    @inlinable
    package func mark(forRequestAt received: UInt64) -> UInt64 {
        let value = mark.load(ordering: .relaxed)
        if value != 0 { return value }
        guard startMark == .firstRequest else { return received }
        markStart(at: received)
        return mark.load(ordering: .relaxed)
    }
}

/// Arrivals since the start mark, merged from every loop.
public final class FanOutTotals: Sendable {
    /// The arrivals at one moment.
    public struct Snapshot: Sendable {
        /// Accepted notifications' arrivals since the mark (µs).
        public var deliveries: Histogram<UInt64>
        /// Every request's arrival since the mark (µs): accepted, rejected and unanswered.
        public var arrivals: Histogram<UInt64>
        /// The first and last accepted arrival since the mark (ns, exact); `nil` before any.
        public var firstAccepted: UInt64?
        /// The last accepted arrival since the mark (ns, exact); `nil` before any.
        public var lastAccepted: UInt64?
        /// The last arrival of any request since the mark (ns, exact); `nil` before any.
        public var lastArrival: UInt64?
    }

    private let state = NIOLockedValueBox(
        Snapshot(
            deliveries: makeMicrosecondHistogram(),
            arrivals: makeMicrosecondHistogram(),
            firstAccepted: nil,
            lastAccepted: nil,
            lastArrival: nil
        )
    )

    package func add(_ tally: inout FanOutTally) {
        state.withLockedValue { totals in
            tally.deliveries.move(into: &totals.deliveries)
            tally.arrivals.move(into: &totals.arrivals)
            // The tally's extremes are one more than the time, so that 0 says none.
            if tally.lastAccepted > 0 {
                totals.firstAccepted = min(totals.firstAccepted ?? .max, tally.firstAccepted - 1)
                totals.lastAccepted = max(totals.lastAccepted ?? 0, tally.lastAccepted - 1)
            }
            if tally.lastArrival > 0 { totals.lastArrival = max(totals.lastArrival ?? 0, tally.lastArrival - 1) }
        }
        tally.resetExtremes()
    }

    /// What every loop handed over so far.
    public var snapshot: Snapshot { state.withLockedValue { $0 } }
}

/// One loop's arrivals since its last hand-over.
@usableFromInline
package struct FanOutTally: ~Copyable {
    @usableFromInline
    var deliveries = MicrosecondTally()
    @usableFromInline
    var arrivals = MicrosecondTally()
    /// Since the mark, ns (+1, so that 0 says none); exact.
    @usableFromInline
    var firstAccepted: UInt64 = .max
    @usableFromInline
    var lastAccepted: UInt64 = 0
    @usableFromInline
    var lastArrival: UInt64 = 0

    package init() {}

    /// The histograms reach an hour; a later arrival counts at an hour (the fan-out time, from
    /// `lastAccepted`, is exact at any length).
    @usableFromInline
    static let longest: UInt64 = 3_600_000_000_000

    @inlinable
    package mutating func arrived(after nanoseconds: UInt64, accepted: Bool) {
        let clamped = min(nanoseconds, Self.longest)
        arrivals.record(nanoseconds: clamped)
        lastArrival = max(lastArrival, nanoseconds + 1)
        guard accepted else { return }
        deliveries.record(nanoseconds: clamped)
        firstAccepted = min(firstAccepted, nanoseconds + 1)
        lastAccepted = max(lastAccepted, nanoseconds + 1)
    }

    mutating func resetExtremes() {
        firstAccepted = .max
        lastAccepted = 0
        lastArrival = 0
    }
}

/// `--expect-tokens`: a set of device tokens, and which of them have been accepted. Lookups
/// hash the token as `TokenList` does; seen ones are bits set without a lock.
public final class ExpectedTokens: @unchecked Sendable {
    @usableFromInline
    let indices: [UInt64: Int]
    @usableFromInline
    let words: UnsafeMutablePointer<UnsafeAtomic<UInt64>.Storage>
    private let wordCount: Int
    @usableFromInline
    let seenCount = ManagedAtomic(0)

    /// The tokens (hex); duplicates count once.
    public convenience init(_ tokens: some Sequence<String>) {
        self.init(hashes: tokens.lazy.map { Array($0.lowercased().utf8).withUnsafeBytes { TokenList.hash($0) } })
    }

    /// The tokens by the hash their sink looks them up by (an FCM sink's: `FCMTokenFate.hash`
    /// of the token's text as it is, for FCM tokens are not hex and their case counts);
    /// duplicates count once.
    public init(hashes: some Sequence<UInt64>) {
        var indices: [UInt64: Int] = [:]
        for hash in hashes where indices[hash] == nil { indices[hash] = indices.count }
        self.indices = indices
        wordCount = max(1, (indices.count + 63) / 64)
        words = .allocate(capacity: wordCount)
        words.initialize(repeating: UnsafeAtomic<UInt64>.Storage(0), count: wordCount)
    }

    deinit {
        words.deallocate()
    }

    /// Tokens in the set.
    public var count: Int { indices.count }
    /// Tokens of the set accepted at least once.
    public var seen: Int { seenCount.load(ordering: .sequentiallyConsistent) }
    /// Whether every token of the set was accepted.
    public var isComplete: Bool { seen >= count }

    /// The token whose hash is `hash` was accepted (per accepted request: inlinable). Says
    /// whether it was the set's last one not seen: the acceptance that completed it.
    @inlinable
    @discardableResult
    package func accepted(hash: UInt64) -> Bool {
        guard let index = indices[hash] else { return false }
        let bit: UInt64 = 1 << UInt64(index & 63)
        let word = UnsafeAtomic<UInt64>(at: words + index / 64)
        guard word.loadThenBitwiseOr(with: bit, ordering: .relaxed) & bit == 0 else { return false }
        return seenCount.wrappingIncrementThenLoad(ordering: .sequentiallyConsistent) == indices.count
    }
}
