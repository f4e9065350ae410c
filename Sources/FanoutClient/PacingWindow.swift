/// The open model's pacing window on one connection: its tickets are sent a window at a time,
/// in one wake and one write, each window's tickets at its start. A ticket goes out up to one
/// window early, never late on the window's account, and its latency counts from when it went
/// out (the earlier of its due time and its send: `LoadConnectionState`), so the window moves no
/// latency; what it changes is how evenly the arrivals meet the server — within a window, not
/// within a microsecond.
///
/// ```
///   window  │   ╷       ╷       ╷       ╷      the instants: multiples of the window on the
///   due     │ a  b c   d  e    f               uptime clock, the same for every connection
///   sent    │   ▲bc     ▲de     ▲f             b c at one wake, d e at the next (a: late, at
///           │                                  once: the window never delays)
/// ```
///
/// `--coalesce auto` (`LoadShape.Coalescing.auto`, the default) follows the round trip: the
/// window is the largest of `floor` × 2ⁿ within every one of
/// - ¼ of the smallest answer time the connection saw over the last two `sampleSpan`s;
/// - `ceiling`, 12.8 ms: h2load's `--rps` bursts are 10 ms apart;
/// - `burst` of the connection's tickets (their spacing, slots ÷ rate, read from the schedule): a
///   window's tickets are encoded, written, held and answered together, and the last of a burst
///   of hundreds is handled a few hundred microseconds after the first, which its latency shows;
/// - half the streams it has to spare, (S·s − R) ÷ 2 with S streams, tickets s apart and answers
///   R on average (R ÷ s in flight): a burst then never waits for a stream that evenly paced
///   tickets would find free (at 90% of 4 × 50 streams, bursts did: GroundTruthTests read one
///   second's p99 0.3 ms over its bound).
///
/// Until the connection has an answer and its spacing (its first round trip, while APNs allows
/// one stream) the window is the floor, 200 µs, the grid of every other timed work; an endpoint
/// answering in under 1.6 ms keeps it there. Windows of powers of two times the floor nest, so
/// connections whose windows differ still wake on shared instants. Why these bounds, measured:
/// docs/load-engine.md ("Coalescing"). `--coalesce W` fixes the window at W (`0s`: every ticket
/// at its own time).
struct PacingWindow {
    /// The window now (nanoseconds; 0: none).
    private(set) var nanoseconds: UInt64
    /// The largest it has been.
    private(set) var largest: UInt64
    /// Whether it follows the round trip.
    private let follows: Bool
    /// The smallest answer time in the current span and in the one before (`UInt64.max`: none).
    private var current: UInt64 = .max
    private var previous: UInt64 = .max
    private var spanEnds: UInt64 = 0
    /// How far apart the connection's tickets are due (nanoseconds; 0: not known yet), from the
    /// schedule every `spacingEvery` tickets.
    private var spacing: UInt64 = 0
    private var ticketsSinceUpdate = 0
    static let spacingEvery = 16
    /// The mean answer time (a moving average) and the streams the connection may have open.
    private var meanRoundTrip: UInt64 = 0
    private var streams = Int.max

    static let floor: UInt64 = 200_000
    static let ceiling: UInt64 = 12_800_000
    /// The window is at most this share of the round trip: 1 / `shareDivisor`.
    static let shareDivisor: UInt64 = 4
    static let sampleSpan: UInt64 = 1_000_000_000
    /// At most this many of a connection's tickets in a window (the ladder rounds down: 20,000/s
    /// over 4 connections, 200 µs apart, gets 6.4 ms, 32 a window).
    static let burst: UInt64 = 40

    init(_ coalescing: LoadShape.Coalescing) {
        switch coalescing {
        case .auto:
            follows = true
            nanoseconds = Self.floor
            largest = Self.floor
        case .fixed(let window):
            follows = false
            nanoseconds = window.wholeNanoseconds
            largest = nanoseconds
        }
    }

    /// An answer came `now` to a request sent at `sentAt`.
    @inline(__always)
    mutating func answered(sentAt: UInt64, now: UInt64) {
        guard follows else { return }
        let roundTrip = now &- min(now, sentAt)
        meanRoundTrip = meanRoundTrip == 0 ? roundTrip : meanRoundTrip - meanRoundTrip / 16 + roundTrip / 16
        let rolled = now >= spanEnds
        if rolled {
            previous = now >= spanEnds &+ Self.sampleSpan ? .max : current
            current = .max
            spanEnds = now &+ Self.sampleSpan
        }
        guard roundTrip < current || rolled else { return }
        current = min(current, roundTrip)
        update()
    }

    /// The connection took a ticket; `spacing` reads how far apart its tickets are due now
    /// (the schedule's, at its first ticket and every `spacingEvery` after).
    @inline(__always)
    mutating func ticket(spacing: () -> UInt64?) {
        guard follows else { return }
        ticketsSinceUpdate -= 1
        guard ticketsSinceUpdate <= 0 else { return }
        ticketsSinceUpdate = Self.spacingEvery
        guard let now = spacing(), now > 0 else { return }
        self.spacing = now
        update()
    }

    /// The streams the connection may have open now (its own limit and the server's).
    @inline(__always)
    mutating func streamLimit(_ streams: Int) {
        self.streams = streams
    }

    private mutating func update() {
        let roundTrip = min(current, previous)
        // No answer yet, or no two tickets yet (the first round trip, while APNs allows one
        // stream): the floor.
        guard roundTrip < .max, spacing > 0 else { return }
        nanoseconds = Self.window(
            roundTrip: roundTrip,
            spacing: spacing,
            headroom: Self.headroom(streams: streams, spacing: spacing, meanRoundTrip: meanRoundTrip)
        )
        largest = max(largest, nanoseconds)
    }

    /// (S·s − R) ÷ 2: the longest window whose burst fits in half the spare streams; 0 when
    /// none are spare.
    static func headroom(streams: Int, spacing: UInt64, meanRoundTrip: UInt64) -> UInt64 {
        let (span, overflow) = UInt64(max(0, streams)).multipliedReportingOverflow(by: spacing)
        guard !overflow else { return .max }
        return span > meanRoundTrip ? (span - meanRoundTrip) / 2 : 0
    }

    /// The window for a round trip and a ticket spacing (0: unknown): the floor doubled while it
    /// stays within ¼ of the round trip, `burst` spacings, the streams' `headroom` and the
    /// ceiling.
    static func window(roundTrip: UInt64, spacing: UInt64 = 0, headroom: UInt64 = .max) -> UInt64 {
        var bound = min(ceiling, roundTrip / shareDivisor, headroom)
        let (spacings, overflow) = spacing.multipliedReportingOverflow(by: burst)
        if spacing > 0 && !overflow { bound = min(bound, spacings) }
        var window = floor
        while window * 2 <= bound { window *= 2 }
        return window
    }

    /// The last instant of the window holding `now`: tickets due by then go out now.
    @inline(__always)
    func horizon(now: UInt64) -> UInt64 {
        guard nanoseconds > 0 else { return now }
        return now - now % nanoseconds + nanoseconds - 1
    }

    /// When to wake for a ticket due at `due`: the start of its window.
    @inline(__always)
    func wake(for due: UInt64) -> UInt64 {
        guard nanoseconds > 0 else { return due }
        return due - due % nanoseconds
    }
}
