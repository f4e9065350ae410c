import Atomics
import FanoutNotation
import FanoutScenarioTerms
import Foundation

/// A network path of a given length in front of the sink: every byte, each way, arrives half a
/// round trip after it left, no faster than the path's bandwidth. With it a rehearsal meets
/// what a provider 80 ms from APNs meets — SETTINGS, WINDOW_UPDATE and PING take the round trip
/// too, so flow-control windows bind as they would — where a hold on the answers alone
/// (`--latency`, APNs' own processing) lets a window refill in microseconds.
///
/// ```
///   provider ──► [ bandwidth: serialised ] ──► [ round trip ÷ 2 ] ──► sink's HTTP/2
///   provider ◄── [ round trip ÷ 2 ] ◄── [ bandwidth: serialised ] ◄── sink's HTTP/2
/// ```
///
/// Bytes keep their order (TCP's): a chunk never overtakes one that left before it, whatever
/// the round trip's spread draws for it.
public struct SinkWire: Sendable, Hashable, CustomStringConvertible {
    /// The round trip: half of a draw delays each chunk of bytes each way (fixed at 0 for a
    /// wire with a bandwidth cap alone).
    public var roundTrip: LatencyDistribution
    /// Bytes a second each way on each connection (`nil`: no cap).
    public var bandwidth: Double?
    /// Bytes a second each way over all of the sink's connections together (`nil`: no cap).
    public var sinkBandwidth: Double?
    /// The most bytes held on the wire from a provider, a connection: past it the sink stops
    /// reading the provider's socket (TCP's window then holds the provider back, as a full path
    /// would). Bandwidth × delay must fit, each way. What the sink writes is bounded by what it
    /// answers (its streams), not by this.
    public var heldBytesCap = Self.defaultHeldBytesCap
    public static let defaultHeldBytesCap = 64 << 20

    public init(roundTrip: LatencyDistribution, bandwidth: Double? = nil, sinkBandwidth: Double? = nil) {
        self.roundTrip = roundTrip
        self.bandwidth = bandwidth
        self.sinkBandwidth = sinkBandwidth
    }

    /// The bytes bandwidth × one-way delay puts on the path, each way (`nil`: no bandwidth cap,
    /// so the flow-control windows bound it instead).
    public var bytesInFlight: Double? {
        guard let rate = [bandwidth, sinkBandwidth].compactMap({ $0 }).min() else { return nil }
        return rate * Double(roundTrip.largest) / 2e9
    }

    /// The wire in a line, for the sink's start: `a wire of 80ms round trip in front (half of it
    /// each way), 100 Mbit/s a connection: up to 488 KiB on it each way (at most 64 MiB held a
    /// connection, then reading waits)`.
    public var description: String {
        var line = "a wire of \(Self.spoken(roundTrip)) round trip in front (half of it each way)"
        var caps: [String] = []
        if let bandwidth { caps.append("\(BandwidthNotation.format(bytesPerSecond: bandwidth)) a connection") }
        if let sinkBandwidth { caps.append("\(BandwidthNotation.format(bytesPerSecond: sinkBandwidth)) in all") }
        if !caps.isEmpty { line += ", " + caps.joined(separator: " and ") }
        if let bytes = bytesInFlight {
            line += ": up to \(BandwidthNotation.bytes(bytes)) on it each way"
        } else {
            line += ": what the flow-control windows let the provider send is on it"
        }
        let cap = BandwidthNotation.bytes(Double(heldBytesCap))
        return line + " (at most \(cap) held a connection, then reading waits)"
    }

    static func spoken(_ distribution: LatencyDistribution) -> String {
        switch distribution {
        case .fixed(let value): DurationNotation.format(value)
        case .uniform(let low, let high): "\(DurationNotation.format(low))–\(DurationNotation.format(high))"
        case .normal(let mean, let deviation):
            "\(DurationNotation.format(mean)) ± \(DurationNotation.format(deviation)) (normal)"
        case .logNormal(let median, let sigma): "\(DurationNotation.format(median)) (log-normal median, σ \(sigma))"
        case .empirical(let values): "an empirical (\(values.count) samples)"
        }
    }

    /// Why the wire cannot be run, naming the option: bandwidth of 0 or less, bytes in flight
    /// past the cap.
    public func validate() throws(SinkScenarioError) {
        for (name, rate) in [("bandwidth", bandwidth), ("sink-bandwidth", sinkBandwidth)] {
            if let rate, !(rate > 0 && rate.isFinite) {
                throw SinkScenarioError("\(name) must be above 0 bytes a second; got \(rate)")
            }
        }
        if let bytes = bytesInFlight, bytes > Double(heldBytesCap) {
            throw SinkScenarioError(
                "rtt and bandwidth put \(BandwidthNotation.bytes(bytes)) on the wire each way, over the cap of "
                    + "\(BandwidthNotation.bytes(Double(heldBytesCap))) a connection: lower the bandwidth or the round trip"
            )
        }
    }
}

extension LatencyDistribution {
    /// The longest draw, in nanoseconds (for the normal and log-normal, a 4σ tail; the
    /// bytes-in-flight bound is about a path's usual length, not its rarest draw).
    package var largest: UInt64 {
        switch self {
        case .fixed(let value): value.wholeNanoseconds
        case .uniform(_, let high): high.wholeNanoseconds
        case .normal(let mean, let deviation): mean.wholeNanoseconds + 4 * deviation.wholeNanoseconds
        case .logNormal(let median, let sigma): Self.nanoseconds(Double(median.wholeNanoseconds) * exp(4 * sigma))
        case .empirical(let values): values.map(\.wholeNanoseconds).max() ?? 0
        }
    }
}

/// One direction of the wire for one connection, as a state machine over time: given a chunk's
/// size, when it was handed over (`now`) and the delay drawn for it, when it arrives. Both
/// links it crosses serialise it, TCP/IP's segment overhead included: first the connection's
/// own (`bandwidth`), then the sink's shared one (`SharedLink`), then it travels the one-way
/// delay; it never arrives before the chunk ahead of it.
///
/// ```
///   now ──► max(now, connection free) + link bytes ÷ bandwidth = d1
///           max(d1, sink free) + link bytes ÷ sink bandwidth    = d2
///           max(d2 + delay, previous arrival)                   = arrival
/// ```
///
/// A chunk's link bytes are its payload and 52 for each segment it starts. On a connection
/// whose own link has a bandwidth, bytes handed over while the connection's last segment still
/// waits for that link (it has not begun to cross) join it, up to a segment's payload, at no
/// overhead: TCP coalesces what queues behind a busy link into full segments. A segment that
/// has begun to cross, or any chunk on an idle path, starts segments of its own:
///
/// ```
///   queued   link busy ┃ 1000 + 448 ┃ 1448 ┃ …     448 bytes join the 1000 still waiting
///   idle     … ┃ 1000 ┃ 448 ┃                    a 448-byte chunk is a segment of its own
/// ```
///
/// With the sink's shared link alone nothing joins: what waits there waits behind other
/// connections, not behind this one's own bytes.
public struct WireLine: Sendable {
    /// Nanoseconds a byte takes on the connection's link (0: no cap).
    let nanosecondsPerByte: Double
    var linkFree: UInt64 = 0
    var lastArrival: UInt64 = 0
    /// When the connection's last segment begins to cross its own link, and the payload room
    /// it has left.
    var tailStart: UInt64 = 0
    var tailRoom = 0

    public init(bandwidth: Double?) {
        nanosecondsPerByte = bandwidth.map { 1e9 / $0 } ?? 0
    }

    /// Whether the connection's link takes time to carry a byte (it has a bandwidth).
    var serialises: Bool { nanosecondsPerByte > 0 }

    /// TCP/IP's bytes a segment (IPv4 20, TCP 20 and 12 of timestamps) and the payload a
    /// segment carries (Ethernet's 1500 less them): a link carries both.
    public static let segmentOverhead = 52
    public static let segmentPayload = 1448

    /// The bytes `payload` bytes of a connection take on a link when they start their own
    /// segments: with a segment's overhead for every segment they fill.
    public static func linkBytes(_ payload: Int) -> Int {
        payload + segmentOverhead * ((payload + segmentPayload - 1) / segmentPayload)
    }

    /// A piece of a chunk that arrives as one: its length, whether it joins the last segment
    /// (the holder lengthens its last piece instead of adding one), and when it arrives.
    public struct Piece: Equatable, Sendable {
        public var length: Int
        public var joins: Bool
        public var arrival: UInt64
    }

    /// The next piece of a chunk of which `left` bytes (at least 1) are still to go, handed
    /// over at `now` and delayed `delay` after crossing the links: what fits the last segment
    /// while it still waits, else a segment of its own (at most a segment's payload).
    public mutating func nextPiece(of left: Int, now: UInt64, delay: UInt64, shared: SharedLink? = nil) -> Piece {
        if serialises && tailStart > now && tailRoom > 0 {
            let length = min(left, tailRoom)
            tailRoom -= length
            return Piece(length: length, joins: true, arrival: cross(length, now: now, delay: delay, shared: shared))
        }
        let length = min(left, Self.segmentPayload)
        tailStart = max(now, linkFree)
        tailRoom = Self.segmentPayload - length
        let arrival = cross(length + Self.segmentOverhead, now: now, delay: delay, shared: shared)
        return Piece(length: length, joins: false, arrival: arrival)
    }

    /// When `bytes` handed over at `now` arrive, each run of them starting its own segments
    /// (`linkBytes`), having been delayed `delay` nanoseconds and passed `shared` (the sink's
    /// link) if there is one. An empty chunk takes no room on a link.
    public mutating func arrival(bytes: Int, now: UInt64, delay: UInt64, shared: SharedLink? = nil) -> UInt64 {
        cross(bytes == 0 ? 0 : Self.linkBytes(bytes), now: now, delay: delay, shared: shared)
    }

    /// `onTheLink` bytes across the connection's link, then the sink's, then the delay.
    private mutating func cross(_ onTheLink: Int, now: UInt64, delay: UInt64, shared: SharedLink?) -> UInt64 {
        var departed = now
        if nanosecondsPerByte > 0 {
            departed = max(now, linkFree) &+ UInt64(Double(onTheLink) * nanosecondsPerByte)
            linkFree = departed
        }
        if let shared, onTheLink > 0 { departed = shared.pass(bytes: onTheLink, from: departed) }
        let arrival = max(departed &+ delay, lastArrival)
        lastArrival = arrival
        return arrival
    }
}

/// A link every connection of a sink shares, one direction: a chunk reserves the link from when
/// it is free for as long as its bytes take, without a lock (one compare-and-exchange).
public final class SharedLink: Sendable {
    private let free = ManagedAtomic<UInt64>(0)
    private let nanosecondsPerByte: Double

    public init(bandwidth: Double) {
        nanosecondsPerByte = 1e9 / bandwidth
    }

    /// When `bytes` ready at `ready` have crossed the link.
    public func pass(bytes: Int, from ready: UInt64) -> UInt64 {
        let takes = UInt64(Double(bytes) * nanosecondsPerByte)
        var current = free.load(ordering: .relaxed)
        while true {
            let done = max(ready, current) &+ takes
            let (exchanged, original) = free.compareExchange(
                expected: current,
                desired: done,
                ordering: .relaxed
            )
            if exchanged { return done }
            current = original
        }
    }
}
