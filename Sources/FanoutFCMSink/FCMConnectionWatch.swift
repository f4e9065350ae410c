import FanoutAPNs
import FanoutFCM
import FanoutInstrument
import FanoutMeasure
import NIOConcurrencyHelpers

/// One connection of an FCM sink that is the provider's instrument (`fanout sink --service fcm
/// --output`): what it puts on the card (`ProviderCard+FCM`) and what its row in the folder
/// says. Used on the connection's event loop only; what it hands over (arrivals, its row) is
/// shared under locks.
///
/// ```
///   opened ──► requests: arrivals since the mark (tally, handed over once a second)
///          │            streams in flight (peak, time-weighted mean)
///          ▼
///   closed ──► by the provider (not the sink's GOAWAY or close)? short? ─► churn on the card
///          └─► its row (FCMConnectionRows)
/// ```
final class FCMConnectionWatch {
    let instrument: ProviderInstrument
    let id: Int
    let peer: String
    let transport: FCMSinkStatistics.Transport
    let openedUptime: UInt64
    private let rows: FCMConnectionRows
    private let tokens: FCMAccessTokens
    /// The last send that carried the connection's bearer (the exchange holds the bearer).
    private var bearerLastUse: UInt64 = 0
    private var tally = FanOutTally()
    private var lastHandOver: UInt64
    private(set) var requests = 0
    /// When the last send was received (for the card's churn).
    private var lastRequestAt: UInt64 = 0
    private(set) var accepted = 0
    /// Streams in flight over time.
    private var streams = StreamUse()
    /// The HTTP/2 layer's refusals and streams after GOAWAY already on the card.
    private var refusedCarded = 0
    private var afterGoAwayCarded = 0
    /// Whether the sink ended it (its GOAWAY when draining, or its close after `connection:
    /// close`): then the provider did not.
    var closedBySink = false

    init(
        instrument: ProviderInstrument,
        rows: FCMConnectionRows,
        tokens: FCMAccessTokens,
        peer: String,
        transport: FCMSinkStatistics.Transport,
        now: UInt64
    ) {
        self.instrument = instrument
        self.rows = rows
        self.tokens = tokens
        id = rows.nextID()
        self.peer = peer
        self.transport = transport
        openedUptime = now
        lastHandOver = now
        instrument.card.connectionOpened(id, now: now)
    }

    var card: ProviderCard { instrument.card }

    /// A send (not a token request) received at `received` was answered, accepted or not, with
    /// `open` streams in flight on the connection.
    func answered(received: UInt64, accepted: Bool, open: Int, now: UInt64) {
        requests += 1
        lastRequestAt = max(lastRequestAt, received)
        if accepted { self.accepted += 1 }
        let mark = instrument.mark(forRequestAt: received)
        tally.arrived(after: received - min(received, mark), accepted: accepted)
        note(streams: open, at: now)
        if now >= lastHandOver + 1_000_000_000 { handOver(now: now) }
    }

    /// The connection has `open` streams in flight from `now` on.
    func note(streams open: Int, at now: UInt64) {
        streams.note(open, at: now)
    }

    /// The HTTP/2 layer refused `refused` streams past the limit of `limit` and saw
    /// `afterGoAway` opened after its GOAWAY, so far: the new ones go on the card.
    func http2Faults(refused: Int, limit: Int, afterGoAway: Int, now: UInt64) {
        if refused > refusedCarded {
            card.refused(refused - refusedCarded, limit: limit, connection: id, now: now)
            refusedCarded = refused
        }
        if afterGoAway > afterGoAwayCarded {
            card.afterGoAway(afterGoAway - afterGoAwayCarded, connection: id, now: now)
            afterGoAwayCarded = afterGoAway
        }
    }

    /// A send carried the connection's bearer at `now`.
    func bearerUsed(at now: UInt64) { bearerLastUse = now }

    /// A send at `now` carried a bearer other than `previous`, the connection's until then:
    /// `previous`'s last use is told to the tokens' history.
    func bearerReplaced(_ previous: [UInt8], at now: UInt64) {
        if !previous.isEmpty { tokens.used(previous, at: bearerLastUse) }
        bearerLastUse = now
    }

    /// The connection closed at `now`, its sends last carrying `bearer`.
    func closed(now: UInt64, bearer: [UInt8]) {
        handOver(now: now)
        if !bearer.isEmpty { tokens.used(bearer, at: bearerLastUse) }
        let byProvider = !closedBySink
        if byProvider {
            card.providerClosed(
                id,
                lifetime: now - min(now, openedUptime),
                requests: requests,
                lastRequest: lastRequestAt,
                now: now
            )
        }
        rows.add(
            FCMConnectionRow(
                id: id,
                peer: peer,
                transport: transport,
                openedUptime: openedUptime,
                closedUptime: now,
                closedByProvider: byProvider,
                requests: requests,
                accepted: accepted,
                peakStreams: streams.peak,
                meanStreams: streams.mean,
                busyFrom: streams.firstRequest,
                busyNanoseconds: streams.busy,
                refusedStreams: refusedCarded
            )
        )
    }

    private func handOver(now: UInt64) {
        instrument.totals.add(&tally)
        lastHandOver = now
    }
}

/// One connection of an FCM sink, closed: its row in the folder.
public struct FCMConnectionRow: Sendable, Hashable {
    public var id: Int
    public var peer: String
    public var transport: FCMSinkStatistics.Transport
    public var openedUptime: UInt64
    public var closedUptime: UInt64
    public var closedByProvider: Bool
    public var requests: Int
    public var accepted: Int
    public var peakStreams: Int
    public var meanStreams: Double
    /// Uptime ns of its first request (0: none), and ns from it to its last change of streams.
    public var busyFrom: UInt64
    public var busyNanoseconds: UInt64
    public var refusedStreams: Int
}

/// The closed connections' rows, the first `kept` of them, and the ids handed out.
public final class FCMConnectionRows: Sendable {
    /// Rows kept; later connections are counted (`dropped`), not listed.
    public static let kept = 10_000
    private let state = NIOLockedValueBox((rows: [FCMConnectionRow](), dropped: 0, lastID: 0))

    public init() {}

    func nextID() -> Int {
        state.withLockedValue {
            $0.lastID += 1
            return $0.lastID
        }
    }

    func add(_ row: FCMConnectionRow) {
        state.withLockedValue {
            if $0.rows.count < Self.kept { $0.rows.append(row) } else { $0.dropped += 1 }
        }
    }

    /// The rows by id, and how many closed connections were not kept.
    public var snapshot: (rows: [FCMConnectionRow], dropped: Int) {
        state.withLockedValue { ($0.rows.sorted { $0.id < $1.id }, $0.dropped) }
    }
}
