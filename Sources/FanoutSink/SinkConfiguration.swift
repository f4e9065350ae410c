import FanoutAPNs
import FanoutHTTP2
import FanoutInstrument
import FanoutListening
import FanoutNotation

/// How the sink behaves: the APNs rules it enforces and the limits it announces.
public struct SinkConfiguration: Sendable {
    /// Accepted device-token lengths (hex digits, even).
    public var tokenFormat = DeviceTokenFormat.default
    /// Bundle identifiers the sink accepts topics for; `nil` accepts any bundle.
    public var allowedBundles: Set<String>? {
        didSet { bundleBytes = allowedBundles.map { Set($0.map { Array($0.utf8) }) } }
    }
    /// The same, as bytes, so a request's topic is checked without building a `String`.
    private(set) var bundleBytes: Set<[UInt8]>?
    /// MAX_CONCURRENT_STREAMS before a connection's first accepted request (APNs: 1).
    public var initialMaxConcurrentStreams: UInt32 = 1
    /// MAX_CONCURRENT_STREAMS after it (APNs: 1000).
    public var maxConcurrentStreams = UInt32(APNsRequest.concurrentStreams)
    /// A connection with nothing open, held or received for this long (up to twice it) gets
    /// GOAWAY with APNs' reason IdleTimeout; `nil` keeps idle connections forever.
    public var idleTimeout: Duration? = Self.defaultIdleTimeout
    public static let defaultIdleTimeout: Duration = .seconds(10 * 60)
    /// How long the start of a frame may wait for its rest before GOAWAY ENHANCE_YOUR_CALM
    /// (`HTTP2Connection.Configuration.incompleteFrameTimeout`); `nil` waits forever.
    public var incompleteFrameTimeout: Duration? = HTTP2Connection.Configuration().incompleteFrameTimeout
    /// How long a request may take to arrive whole, from its HEADERS to the end of its body: a
    /// stream still open from the client's side past it is reset (RST_STREAM CANCEL) and its
    /// slot given back, so streams that never end cannot hold a connection (and its idle
    /// timeout) forever; `nil` waits forever.
    public var requestTimeout: Duration? = Self.defaultRequestTimeout
    /// 10 s: an APNs request is under 5 KB, its HEADERS and DATA leave in one write, and the
    /// sink grants each stream 1 MiB of window, so a whole request is late only when its bytes
    /// are: 10 s covers three TCP retransmissions (1 + 2 + 4 s) of them. nginx's
    /// `client_body_timeout` (60 s) is made for uploads from phones.
    public static let defaultRequestTimeout: Duration = .seconds(10)
    /// Connections one peer address may hold at once (the total is `scenario.faults.maxConnections`);
    /// the next is refused with SETTINGS and GOAWAY ENHANCE_YOUR_CALM saying which limit. `nil`:
    /// a quarter of the total the open-file limit allows by default (`peerLimits(defaultTotal:)`).
    public var maxConnectionsPerPeer: Int?
    /// Connections one peer address may hold at once that have not sent an authenticated request
    /// yet (a connection stops counting at its first request that passed APNs's rule 4), once
    /// half the total is open (`ConnectionAdmission`); the next is refused in words. `nil`: a
    /// quarter of the per-peer limit.
    public var maxIdleConnectionsPerPeer: Int?
    /// How long a connection may go without an authenticated request before a newcomer from
    /// its own address, at one of the address's limits, has it evicted (`ConnectionAdmission`):
    /// silent connections cannot lock out a client that sends from the same address. `nil`:
    /// such a newcomer is refused in words.
    public var idleGrace: Duration? = Self.defaultIdleGrace
    public static var defaultIdleGrace: Duration { ConnectionAdmission<Int>.defaultGrace }

    /// The per-peer limits, given or by default. One address may hold a quarter of the total
    /// the open-file limit allows (`defaultTotal`: 1,024 with room to spare, 93 under `ulimit -n
    /// 256`), so at least four clients always get in and one address cannot take a sink that a
    /// low limit made small; 256 of the 1,024 is far above what one sender needs (`fanout send`
    /// opens 4 connections by default; APNs asks providers to keep few). Idle ones a quarter of
    /// that (64 of 256): a provider's pool opens a few connections and sends on each within a
    /// round trip. Idle connections fill half the total unheld (two addresses of 256), then 64 an
    /// address; at the total the oldest idle one is evicted for a newcomer. The default total,
    /// not a `--max-connections` given: a low total given is a fault for one client to meet.
    public func peerLimits(defaultTotal: Int) -> (perPeer: Int, idlePerPeer: Int) {
        ConnectionAdmission<Int>.peerLimits(
            perPeer: maxConnectionsPerPeer,
            idlePerPeer: maxIdleConnectionsPerPeer,
            defaultTotal: defaultTotal
        )
    }

    /// The configuration for a sink a run starts for itself (`fanout run`, a plan's rehearsal):
    /// no neighbour shares it, and the run's own pool opens all its connections at once, before
    /// any sends a request, so neither per-peer limit binds: the run's pool is the only peer,
    /// held to the total alone (a quarter of a total lowered by the open-file limit, 167 under
    /// `ulimit -n 1024`, would refuse a run's own `--connections 200`).
    public var embedded: SinkConfiguration {
        var configuration = self
        configuration.maxConnectionsPerPeer = .max
        configuration.maxIdleConnectionsPerPeer = .max
        return configuration
    }
    /// Where the sink's lines about refusals and limits reached go (`LimitLog`: at most one a
    /// second of each kind, with the peer); `nil` drops them.
    public var limitLog: (@Sendable (String) -> Void)?
    /// Drop to the initial limit after a rejected request, and rise again after the next
    /// accepted one, as APNs has been seen to do.
    public var throttleAfterRejection = false
    /// Token authentication (ES256 JWT); with neither this nor certificate authentication,
    /// every request is taken as authenticated.
    public var tokenAuthentication: TokenAuthentication?
    /// Certificate authentication: a connection whose TLS client certificate was verified
    /// (see `HTTP2Transport.tlsServer(clientCertificateAuthorities:)`) is authenticated by it,
    /// for the bundle ids it names; one without a certificate needs token auth.
    public var certificateAuthentication = false
    /// Where received notifications are written, if anywhere.
    public var capture: SinkCapture?
    /// Latency, stalls and errors beyond APNs' rules.
    public var scenario = SinkScenario()
    /// The sink as an instrument for the provider under test: delivery times, stream use, the
    /// conformance card (`fanout sink --output`); `nil` counts only what every sink counts.
    public var instrument: ProviderInstrument?
    /// How far a hold drawn from a spread may move to go out with others drawn close to it
    /// (`AnswerCoalescing`): `--coalesce`'s share of it, at most `longestCoalescing`. A floor
    /// (fixed, a stall's end, the pacing) never moves.
    public var coalescing = AnswerCoalescing(
        share: Self.defaultCoalescingShare,
        longest: Self.longestCoalescing.wholeNanoseconds
    )
    /// 3% of a hold: see docs/sink.md ("Coalescing") for the measurements behind it.
    public static let defaultCoalescingShare = 0.03
    /// 4 ms: holds of seconds would otherwise move by tens of milliseconds.
    public static let longestCoalescing: Duration = .milliseconds(4)

    /// The clocks connections read (tests give made-up ones).
    public var clock = SinkClock.system

    public init() {}
}
