import FanoutAPNs
import FanoutHTTP2
import FanoutRandom
import FanoutSettings
import FanoutTokens
import Foundation

/// What a capacity plan asks of the sink beyond APNs' rules: response latency, stalls, and
/// errors. Seeded: the same scenario, seed and tokens give the same errors whatever the order
/// requests arrive in, and the same latency sequence on each connection.
public struct SinkScenario: Sendable {
    /// The longest latency a sample takes, in nanoseconds: the far tail of a distribution is cut
    /// here (a year, the longest duration Fanout reads) rather than overflowing.
    public static let longestLatency = DurationNotation.longest.wholeNanoseconds

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

/// `limit` events per `window`, written `LIMIT/WINDOW` (`100/s`, `10/1m`, `5000/1.5s`).
public struct Rate: Sendable, Hashable, CustomStringConvertible {
    public var limit: Int
    public var window: Duration

    public init(limit: Int, window: Duration) {
        self.limit = limit
        self.window = window
    }

    /// Events per second.
    public var perSecond: Double { Double(limit) * 1e9 / Double(window.wholeNanoseconds) }

    public var description: String { "\(limit)/\(window)" }
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
    /// then GOAWAY ENHANCE_YOUR_CALM saying so: `HTTP2Refusal`): a bound
    /// on the sink's memory by default (each connection may hold MAX_CONCURRENT_STREAMS
    /// streams; docs/sink.md has the figures), a fault to test a client's recovery when low.
    public var maxConnections = Self.defaultMaxConnections
    public static let defaultMaxConnections = 1024

    public init() {}
}

/// A set of device tokens, held as 64-bit hashes of their lowercase hex so that a lookup needs
/// no allocation (a false match needs a 64-bit collision).
public struct TokenList: Sendable {
    private var hashes: Set<UInt64> = []

    public init() {}

    /// Every token in a text file, in the lines `fanout send` reads (`TokenListFile`).
    public init(contentsOf path: String) throws(SinkScenarioError) {
        do {
            for token in try TokenListFile.tokens(at: path) { insert(token) }
        } catch {
            throw SinkScenarioError(
                error.line == nil ? "cannot read the token list \(path): \(error.message)" : error.description
            )
        }
    }

    public mutating func insert(_ token: String) {
        let hash = Array(token.utf8).withUnsafeBytes { Self.hash($0) }
        hashes.insert(hash)
    }

    public var count: Int { hashes.count }

    func contains(_ token: UnsafeRawBufferPointer) -> Bool {
        !hashes.isEmpty && hashes.contains(Self.hash(token))
    }

    var isEmpty: Bool { hashes.isEmpty }

    /// Whether the token whose `hash(_:)` is `hash` is in the list.
    func contains(hash: UInt64) -> Bool { hashes.contains(hash) }

    /// FNV-1a over the lowercased hex digits.
    static func hash(_ token: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in token {
            hash = (hash ^ UInt64(byte | 0x20)) &* 0x0000_0100_0000_01B3
        }
        return hash
    }
}

/// A distribution of response latencies.
public enum LatencyDistribution: Sendable, Hashable {
    case fixed(Duration)
    case uniform(Duration, Duration)
    /// Mean and standard deviation; samples below zero are zero.
    case normal(mean: Duration, deviation: Duration)
    /// The median and the σ of the underlying normal distribution.
    case logNormal(median: Duration, sigma: Double)
    /// Latencies drawn uniformly from observed values.
    case empirical([Duration])

    /// Whether its draws differ: every distribution but a fixed one (or one of no width).
    var hasSpread: Bool {
        switch self {
        case .fixed: false
        case .uniform(let low, let high): low != high
        case .normal(_, let deviation): deviation > .zero
        case .logNormal(_, let sigma): sigma > 0
        case .empirical(let values): Set(values).count > 1
        }
    }

    /// Its median in nanoseconds: half its draws are shorter (a normal one's mean, a uniform
    /// one's middle, an empirical one's middle value).
    var median: UInt64 {
        switch self {
        case .fixed(let value): return value.wholeNanoseconds
        case .uniform(let low, let high): return (low.wholeNanoseconds + high.wholeNanoseconds) / 2
        case .normal(let mean, _): return mean.wholeNanoseconds
        case .logNormal(let median, _): return median.wholeNanoseconds
        case .empirical(let values):
            return values.isEmpty ? 0 : values.map(\.wholeNanoseconds).sorted()[values.count / 2]
        }
    }

    /// A drawn value as nanoseconds: below zero (or not a number) is zero, beyond a year is a year
    /// (log-normal's far tail with a large σ reaches infinity).
    static func nanoseconds(_ value: Double) -> UInt64 {
        guard value > 0 else { return 0 }
        guard value < Double(SinkScenario.longestLatency) else { return SinkScenario.longestLatency }
        return UInt64(value)
    }

    /// One sample in nanoseconds, using `random` for its uniform draws.
    func sample(_ random: inout SinkRandom) -> UInt64 {
        switch self {
        case .fixed(let value):
            return value.wholeNanoseconds
        case .uniform(let low, let high):
            let span = high.wholeNanoseconds - low.wholeNanoseconds
            return low.wholeNanoseconds + (span == 0 ? 0 : random.next() % (span + 1))
        case .normal(let mean, let deviation):
            return Self.nanoseconds(
                Double(mean.wholeNanoseconds) + Double(deviation.wholeNanoseconds) * random.normal()
            )
        case .logNormal(let median, let sigma):
            return Self.nanoseconds(Double(median.wholeNanoseconds) * Foundation.exp(sigma * random.normal()))
        case .empirical(let values):
            return values.isEmpty ? 0 : values[Int(random.next() % UInt64(values.count))].wholeNanoseconds
        }
    }
}

/// The sink's draws: uniform and normal, from a `SeededRandom`.
struct SinkRandom {
    private var generator: SeededRandom

    init(seed: UInt64) {
        generator = SeededRandom(seed: seed)
    }

    mutating func next() -> UInt64 { generator.next() }

    /// A uniform draw from [0, 1).
    mutating func unit() -> Double { generator.unit() }

    /// A standard normal draw (Box–Muller).
    mutating func normal() -> Double {
        let u = max(unit(), 0x1p-53)
        return (-2 * Foundation.log(u)).squareRoot() * Foundation.cos(2 * Double.pi * unit())
    }
}

/// A scenario that cannot be run, said in one line.
public struct SinkScenarioError: Error, Sendable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}
