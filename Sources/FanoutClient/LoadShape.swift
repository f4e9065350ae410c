import FanoutAPNs
import FanoutHPACK
import FanoutHTTP2
import FanoutMeasure
import FanoutNotation
import FanoutPayload
import FanoutTokens
import NIOCore

import struct Foundation.Date

/// How much a run sends at once and how patiently: connections, streams, timeouts, tries and
/// the load model. Every default is here, once; the commands and jobs only override.
public struct LoadShape: Sendable {
    /// Connections kept open, spread over the event loops.
    public var connections = 4
    /// At most this many streams in flight on a connection, below the server's
    /// MAX_CONCURRENT_STREAMS, which is followed as it changes.
    public var streamsPerConnection = APNsRequest.concurrentStreams
    /// A request without an answer after this long is reset and tried again.
    public var streamTimeout: Duration = .seconds(30)
    /// Tries per notification before it fails: retryable answers (429, 5xx), timeouts, resets
    /// and lost connections each use one; REFUSED_STREAM (and streams a GOAWAY turned away)
    /// do not, as the server never saw them.
    public var maxAttempts = 3
    /// The first retry's delay, doubling with each further try, with full jitter.
    public var retryBackoff: Duration = .milliseconds(100)
    /// The longest retry delay.
    public var maxRetryBackoff: Duration = .seconds(5)
    /// How long the whole run may take before what is left is failed as cancelled.
    public var deadline: Duration?
    /// Open or closed, how long, the warm-up.
    public var model = LoadModel()
    /// How a connection gathers its timed work (`--coalesce`): the open model's tickets go out
    /// a pacing window at a time, each window's at its start (`PacingWindow`: up to a window
    /// early, their latency counted from the send); retries, timeouts and the rest wake it at
    /// the next instant of the wake-up window, together with every other connection of its
    /// event loop with work in the same window, and each writes what became ready in one write.
    public enum Coalescing: Sendable, Equatable, CustomStringConvertible {
        /// A pacing window that follows the round trip (¼ of it, from 200 µs to 12.8 ms:
        /// `PacingWindow`); wake-ups on 200 µs.
        case auto
        /// Both windows this long; `.zero` for exact times.
        case fixed(Duration)

        public var description: String {
            switch self {
            case .auto: "auto"
            case .fixed(let window): DurationNotation.format(window)
            }
        }

        /// The wake-up window for timed work other than tickets.
        var wakeUpWindow: Duration {
            switch self {
            case .auto: .nanoseconds(Int64(PacingWindow.floor))
            case .fixed(let window): window
            }
        }
    }

    public var coalescing: Coalescing = .auto
    /// The longest fixed window taken: h2load paces `--rps` in bursts at most 10 ms apart; ten
    /// times that is past any use.
    public static let longestCoalescing: Duration = .milliseconds(100)

    public init() {}

    /// The HTTP/2 settings of each connection: at most `streamsPerConnection` streams open,
    /// fewer while the server allows fewer; wake-ups on the `coalescing` window.
    package var http2: HTTP2Connection.Configuration {
        var http2 = HTTP2Connection.Configuration()
        http2.maxOutboundStreams = max(1, streamsPerConnection)
        http2.wakeUpWindow = coalescing.wakeUpWindow
        return http2
    }
}
