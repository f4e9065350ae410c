import FanoutAPNs
import FanoutScenarioTerms

/// When a channel's offline subscribers come back: `--device-return`, counted from the channels'
/// first broadcast (as a fleet's devices come back counted from the fan-out's first request).
/// Worked out as shares and quantiles of that distribution, never drawn device by device.
public struct SubscriberReturns: Sendable, Equatable {
    /// `nil`: an offline subscriber does not come back within the run.
    private let returns: BroadcastTimes?

    /// Returns after `returnAfter` (`nil`: none within the run).
    public init(_ returnAfter: LatencyDistribution?) {
        returns = returnAfter.map { BroadcastTimes(delay: $0) }
    }

    /// F(t): the share of offline subscribers back by `elapsed` ns after the start.
    public func back(by elapsed: UInt64) -> Double { returns?.fraction(atMost: elapsed) ?? 0 }

    /// The returns within `span`: F(from) and F(to) worked out once (each a bisection), for the
    /// quantiles a broadcast's deliveries from storage are read at.
    public func within(_ span: StorageSpan) -> Within {
        Within(returns: returns, span: span, low: back(by: span.from), high: back(by: span.to))
    }

    /// The return distribution conditioned on a span.
    public struct Within: Sendable {
        fileprivate let returns: BroadcastTimes?
        /// The span the returns are conditioned on.
        public let span: StorageSpan
        fileprivate let low: Double
        fileprivate let high: Double

        /// The return, ns after the start, below which the share `q` of the subscribers back
        /// within the span came back: F⁻¹(F(from) + q·(F(to) − F(from))).
        public func returnTime(_ q: Double) -> UInt64 {
            guard let returns else { return span.to }
            return min(span.to, max(span.from, returns.quantile(low + min(max(q, 0), 1) * (high - low))))
        }
    }
}

/// The span in which a stored update reaches the subscribers who come back: from its acceptance
/// to the channel's next broadcast, its deletion, its `apns-expiration` or the folder's writing,
/// whichever came first (ns after the channels' first broadcast).
public struct StorageSpan: Sendable, Equatable {
    /// Its start: the update's acceptance.
    public var from: UInt64
    /// Its end.
    public var to: UInt64
}

/// A broadcast's update stored for its channel's offline subscribers (storage policy 1) while
/// its fate is open. APNs keeps the most recent update of a channel, so the channel's next
/// broadcast, or its deletion, closes the span in which a subscriber coming back gets this one:
///
/// ```
///   accepted at t ──── subscribers come back (SubscriberReturns) ────► next broadcast or delete
///     stored: away at t     back within (t, end]: from storage, at their return
///                           still away at the end: discarded
///   apns-expiration before the end: the span stops there, and those still away: expired
///   open when the folder is written (end = now): back by now from storage, the rest still stored
/// ```
struct StoredUpdate: Equatable, Sendable {
    /// Accepted, ns after the channels' first broadcast.
    var accepted: UInt64
    /// F(accepted): the share of the offline back by then (worked out once, when it was accepted).
    var backAtAcceptance: Double
    /// The channel's reachable subscribers times the offline share: whose share still away at
    /// any time is how many of them are away then.
    var offline: Double
    /// Away when it was accepted.
    var stored: Int
    /// `apns-expiration`, ns after the channels' first broadcast (`nil`: none within the run).
    var expires: UInt64?
    /// Its entry in the broadcast log (`nil`: not listed).
    var entry: Int?

    /// What became of it by `end` (ns after the start): the stored split into from storage,
    /// discarded, expired and still stored (`closed`: the channel's next broadcast or deletion
    /// ends it here, so those still away are discarded), and the span its deliveries fall in.
    /// `backByEnd`: F(end), when the caller worked it out already.
    func fate(
        at end: UInt64,
        closed: Bool,
        returns: SubscriberReturns,
        backByEnd: Double? = nil
    ) -> (reach: BroadcastReach, span: StorageSpan) {
        let until = max(accepted, min(end, expires ?? .max))
        let backByThen = until == end ? backByEnd ?? returns.back(by: until) : returns.back(by: until)
        let back = backByThen - backAtAcceptance
        let fromStorage = min(stored, max(0, Int((offline * back).rounded())))
        let rest = stored - fromStorage
        var reach = BroadcastReach(fromStorage: fromStorage)
        if let expires, expires <= end {
            reach.expired = rest
        } else if closed {
            reach.discarded = rest
        } else {
            reach.stillStored = rest
        }
        return (reach, StorageSpan(from: accepted, to: until))
    }
}
