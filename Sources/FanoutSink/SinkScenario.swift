import FanoutAPNs
import FanoutChannels
import FanoutDevices
import FanoutFiles
import FanoutHTTP2
import FanoutMachine
import FanoutRandom
import FanoutScenarioTerms
import FanoutTokens
import FanoutWire
import Foundation

/// What a capacity plan asks of the sink beyond APNs' rules: response latency, stalls, and
/// errors. Seeded: the same scenario, seed and tokens give the same errors whatever the order
/// requests arrive in, and the same latency sequence on each connection.
public struct SinkScenario: Sendable {
    /// The longest latency a sample takes, in nanoseconds: the far tail of a distribution is cut
    /// here (a year, the longest duration Fanout reads) rather than overflowing.
    public static let longestLatency = LatencyDistribution.longest

    /// The scenario file the settings came from (`--scenario`), `nil` for options alone.
    public var file: FileUse?

    /// Latency added to every response.
    public var latency: LatencyDistribution?
    /// The whole sink holds its responses for `length` every `every`, counted from start: a
    /// client that waits for answers before sending more hides such stalls (coordinated omission).
    public var stall: (every: Duration, length: Duration)?
    /// Errors given to requests that pass validation, each with its probability (0...1).
    /// Permanent ones (4xx but 429) follow from the seed and the device token, so a token that
    /// is unregistered stays so; transient ones (429, 5xx) are drawn per request.
    public var errors: [(reason: APNsReason, probability: Double)] = []
    /// Tokens answered 410 Unregistered, and tokens answered 400 BadDeviceToken (by their
    /// hex, either case).
    public var unregisteredTokens = TokenList()
    public var badTokens = TokenList()
    public var seed: UInt64 = 1
    /// At most `limit` notifications to one device token per `window`, across connections;
    /// more are answered 429 TooManyRequests (see `TokenRateLimiter` for its exactness).
    public var tokenRate: Rate?
    /// Each connection's answers go out no faster than this: a throughput ceiling per
    /// connection (requests wait, none is refused; the client's streams fill up instead).
    public var connectionRate: Rate?
    /// Connection faults.
    public var faults = ConnectionFaults()
    /// A path with a length in front of the sink (`nil`: loopback's, no more).
    public var wire: SinkWire?
    /// The flow-control windows the sink grants and when it refills them.
    public var windows = SinkWindows()
    /// The devices behind the sink (`DeviceFleetSettings`): off unless a share or a delay is set.
    public var devices = DeviceFleetSettings()
    /// The devices subscribed to each broadcast channel (`--channel-subscribers`; docs/sink.md,
    /// "Broadcast channels"): 0 unless told, so a broadcast reaches no one by surprise.
    public var channelSubscribers = ChannelSubscribers.fixed(0)

    public init() {}

    /// The problems with the error mix: probabilities out of range or summing over 1.
    public func validate() throws(SinkScenarioError) {
        for (reason, probability) in errors where !(0...1).contains(probability) {
            throw SinkScenarioError("the probability of \(reason.rawValue) must be from 0 to 1, not \(probability)")
        }
        let total = errors.map(\.probability).reduce(0, +)
        if total > 1 { throw SinkScenarioError("the error probabilities add up to \(total), over 1") }
        try wire?.validate()
        try devices.validate()
    }
}

/// The flow-control windows a sink grants a provider, and when it gives them back: what a probe
/// measured of a server, so that a rehearsal meets the same windows (`fanout sink
/// --connection-window 65535 --window-refill half` is nghttpd's and nghttp2's default).
public struct SinkWindows: Sendable, Hashable {
    /// What a provider may send on a connection before a WINDOW_UPDATE, from 65,535 (RFC 9113's
    /// initial window) to 2^31−1.
    public var connection: UInt32 = HTTP2Connection.Configuration().connectionWindowSize
    /// SETTINGS_INITIAL_WINDOW_SIZE: what a provider may send on one stream, 1 to 2^31−1 (0
    /// would let no body through, ever: the sink refills what was consumed).
    public var stream: UInt32 = HTTP2Connection.Configuration().initialWindowSize
    public var refill: HTTP2Connection.WindowRefill = .half

    public init() {}

    /// The largest window HTTP/2 allows (RFC 9113 §6.9.1).
    public static let largest = 0x7FFF_FFFF

    /// A window's size from its text: bytes, or with a binary unit (`65535`, `64KiB`, `1MiB`),
    /// from `smallest` to 2^31−1.
    public static func size(_ text: String, name: String, smallest: Int) throws(SinkScenarioError) -> UInt32 {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        var scale = 1
        var digits = Substring(trimmed)
        for (suffix, unit) in [("KiB", 1024), ("MiB", 1024 * 1024), ("GiB", 1024 * 1024 * 1024)]
        where trimmed.hasSuffix(suffix) {
            scale = unit
            digits = digits.dropLast(suffix.count)
        }
        guard let number = Int(digits.trimmingCharacters(in: .whitespaces)) else {
            throw SinkScenarioError("\(name) takes a size in bytes, like 65535 or 1MiB; got \(text)")
        }
        let (bytes, overflow) = number.multipliedReportingOverflow(by: scale)
        guard !overflow, bytes >= smallest, bytes <= largest else {
            throw SinkScenarioError(
                "\(name) must be from \(smallest) to 2^31−1 (\(largest)) bytes; got \(text)"
                    + (smallest == 65_535 && bytes < smallest && !overflow
                        ? " (a connection window starts at 65,535 and can only be raised)" : "")
            )
        }
        return UInt32(bytes)
    }
}

/// Faults a connection meets, to test a client's recovery.
public struct ConnectionFaults: Sendable, Hashable {
    /// GOAWAY (with `goAwayReason` as APNs' JSON debug data) after this many requests on a connection.
    public var goAwayAfterRequests: Int?
    /// GOAWAY this long after a connection opens.
    public var goAwayAfter: Duration?
    public var goAwayReason: APNsReason = .shutdown
    /// Close the connection without GOAWAY after this many requests.
    public var closeAfterRequests: Int?
    /// This share of requests (0...1) is never answered.
    public var unansweredShare: Double = 0
    /// Connections beyond this many at once are refused as soon as they are accepted (SETTINGS,
    /// then GOAWAY ENHANCE_YOUR_CALM saying so: `HTTP2Refusal`), unless one that never sent a
    /// request can be evicted for them (`ConnectionAdmission`): a bound on the sink's memory
    /// and descriptors by default (each connection may hold MAX_CONCURRENT_STREAMS streams;
    /// docs/sink.md has the figures), a fault to test a client's recovery when low. `nil`: what
    /// the open-file limit allows (`defaultMaxConnections(_:eventLoops:)`).
    public var maxConnections: Int?
    /// The most connections the sink takes when not told: 1024.
    public static let mostConnectionsByDefault = 1024
    /// Descriptors the sink keeps for its admin endpoint's connections (`TextEndpoint.Limits`).
    public static let adminFiles = 64

    /// The total when none is given: three quarters of the descriptors the open-file limit
    /// leaves beside `eventLoops` loops, the reserve (`MachineLimits.reservedFiles`) and the
    /// admin endpoint, at most `mostConnectionsByDefault`. The last quarter is headroom for
    /// connections being refused (each holds its socket for up to a second) and accepted
    /// before they are counted, so admitted connections alone never exhaust the descriptors
    /// (`ulimit -n 256`, one loop: 93; 1024: 669; 4096 or more: 1024).
    public static func defaultMaxConnections(_ limits: MachineLimits, eventLoops: Int) -> Int {
        let left = limits.connections("", eventLoops: eventLoops).values.upperBound - adminFiles
        return min(mostConnectionsByDefault, max(1, left * 3 / 4))
    }

    public init() {}
}
