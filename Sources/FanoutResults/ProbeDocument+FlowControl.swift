import FanoutMeasure
import FanoutNotation
import Foundation

extension ProbeDocument {
    /// The server's windows: the connection's when the first request went and once the first
    /// answers were in, each stream's (SETTINGS_INITIAL_WINDOW_SIZE), and how the connection's
    /// was refilled.
    public struct Window: Codable, Sendable, Equatable {
        /// Bytes of DATA we could send on the connection when the first request went: 65,535
        /// plus any WINDOW_UPDATE on stream 0 before it (with no request sent: at the end).
        public var connectionAtStart: Int
        /// Our connection send window once the one-at-a-time requests were answered: the start
        /// less their bodies, plus what the server gave back by then; `nil` without requests.
        @Nullable public var connectionAfterFirstAnswers: Int?
        /// The most the server granted: the start plus WINDOW_UPDATEs beyond what we had
        /// outstanding.
        public var connectionGranted: Int
        /// Each stream's window: SETTINGS_INITIAL_WINDOW_SIZE, as in force at the end.
        public var stream: Int
        /// How the server gave the connection window back; `nil` without requests.
        @Nullable public var refill: Refill?

        enum CodingKeys: String, CodingKey {
            case connectionAtStart = "connection_at_start"
            case connectionAfterFirstAnswers = "connection_after_first_answers"
            case connectionGranted = "connection_granted"
            case stream, refill
        }
        public init(
            connectionAtStart: Int,
            connectionAfterFirstAnswers: Int? = nil,
            connectionGranted: Int,
            stream: Int,
            refill: Refill? = nil
        ) {
            self.connectionAtStart = connectionAtStart
            self.connectionAfterFirstAnswers = connectionAfterFirstAnswers
            self.connectionGranted = connectionGranted
            self.stream = stream
            self.refill = refill
        }
    }

    /// The refill the server showed, judged (`ProbeState.Refill`), with the updates it sent.
    public struct Refill: Codable, Sendable, Equatable {
        /// `half`, `each-frame`, `none-needed`, `threshold` or `not-refilled`.
        public var kind: String
        /// The smallest and largest stream-0 refill, bytes; `nil` when none came.
        @Nullable public var smallestIncrement: Int?
        @Nullable public var largestIncrement: Int?
        /// WINDOW_UPDATEs on stream 0 that refilled what we had sent, and on streams.
        public var connectionUpdates: Int
        public var streamUpdates: Int
        /// Stream-0 bytes granted beyond what we had outstanding (the window grew).
        public var enlargedBytes: Int
        /// The most DATA bytes sent and not yet credited back, the whole probe.
        public var mostBytesInFlight: Int
        /// The first `ProbeState.WindowRecord.keptUpdates` WINDOW_UPDATEs after the first request.
        public var updates: [Update]

        enum CodingKeys: String, CodingKey {
            case kind
            case smallestIncrement = "smallest_increment"
            case largestIncrement = "largest_increment"
            case connectionUpdates = "connection_updates"
            case streamUpdates = "stream_updates"
            case enlargedBytes = "enlarged_bytes"
            case mostBytesInFlight = "most_bytes_in_flight"
            case updates
        }
        public init(
            kind: String,
            smallestIncrement: Int? = nil,
            largestIncrement: Int? = nil,
            connectionUpdates: Int,
            streamUpdates: Int,
            enlargedBytes: Int,
            mostBytesInFlight: Int,
            updates: [Update]
        ) {
            self.kind = kind
            self.smallestIncrement = smallestIncrement
            self.largestIncrement = largestIncrement
            self.connectionUpdates = connectionUpdates
            self.streamUpdates = streamUpdates
            self.enlargedBytes = enlargedBytes
            self.mostBytesInFlight = mostBytesInFlight
            self.updates = updates
        }
    }

    /// One WINDOW_UPDATE.
    public struct Update: Codable, Sendable, Equatable {
        /// Milliseconds from the flow test's start (negative: before it), or from the first
        /// request when no flow test ran.
        public var atMs: Double
        /// 0: the connection.
        public var stream: Int
        public var increment: Int
        /// Our connection send window after it.
        public var windowAfter: Int

        enum CodingKeys: String, CodingKey {
            case atMs = "at_ms"
            case stream, increment
            case windowAfter = "window_after"
        }
        public init(
            atMs: Double,
            stream: Int,
            increment: Int,
            windowAfter: Int
        ) {
            self.atMs = atMs
            self.stream = stream
            self.increment = increment
            self.windowAfter = windowAfter
        }
    }

    /// The bytes one notification of the template puts on the wire, TCP/IP excluded.
    public struct Wire: Codable, Sendable, Equatable {
        /// The HEADERS block once HPACK's dynamic table holds the repeated fields (median of the
        /// 3rd request on); the first request's (every field new) beside it.
        public var headersBytes: Int
        @Nullable public var firstHeadersBytes: Int?
        /// The body: DATA payload.
        public var dataBytes: Int
        /// HEADERS (and CONTINUATION) and DATA frames, and their 9-byte headers.
        public var frames: Int
        public var frameBytes: Int
        /// TLS record overhead a notification: 22 bytes a TLS 1.3 record (5 header, 1 content
        /// type, 16 AEAD tag), 29 a TLS 1.2 one (5, 8 nonce, 16 tag), one record a notification
        /// assumed; 0 over cleartext.
        public var tlsBytes: Int
        /// `headersBytes + dataBytes + frameBytes + tlsBytes`.
        public var wireBytesPerNotification: Int
        public var note: String

        /// TLS record overhead by version.
        public static func recordOverhead(_ version: String) -> Int { version == "TLSv1.2" ? 29 : 22 }

        enum CodingKeys: String, CodingKey {
            case headersBytes = "headers_bytes"
            case firstHeadersBytes = "first_headers_bytes"
            case dataBytes = "data_bytes"
            case frames
            case frameBytes = "frame_bytes"
            case tlsBytes = "tls_bytes"
            case wireBytesPerNotification = "wire_bytes_per_notification"
            case note
        }
        public init(
            headersBytes: Int,
            firstHeadersBytes: Int? = nil,
            dataBytes: Int,
            frames: Int,
            frameBytes: Int,
            tlsBytes: Int,
            wireBytesPerNotification: Int,
            note: String
        ) {
            self.headersBytes = headersBytes
            self.firstHeadersBytes = firstHeadersBytes
            self.dataBytes = dataBytes
            self.frames = frames
            self.frameBytes = frameBytes
            self.tlsBytes = tlsBytes
            self.wireBytesPerNotification = wireBytesPerNotification
            self.note = note
        }
    }

    /// The flow test: one connection kept full, each answer replaced by a request.
    public struct Flow: Codable, Sendable, Equatable {
        /// Requests sent, answered (any status), reset; answers by `status` or `status reason`.
        public var sent: Int
        public var answered: Int
        public var resets: Int
        public var answers: [String: Int]
        /// From the first request to the last answer.
        public var seconds: Double
        /// The steady part: from 2 request round trips in to when sending stopped.
        public var steadySeconds: Double
        /// Answers a second over the steady part: the rate one connection reached.
        @Nullable public var ratePerSecond: Double?
        /// The PING round trip (median), milliseconds: the network's, the round trip of
        /// `creditedPerRoundTrip`.
        public var roundTripMs: Double
        /// A request's round trip (the one-at-a-time median, at least the PING's),
        /// milliseconds: the test lasts at least 20 of them and its first 2 are not steady.
        public var requestRoundTripMs: Double
        /// The most DATA bytes sent and not yet credited back by WINDOW_UPDATE.
        public var mostBytesInFlight: Int
        /// Stream-0 bytes credited back a round trip (`roundTripMs`), over the steady part.
        @Nullable public var creditedPerRoundTrip: Double?
        /// The median time between one stream-0 refill and the next in the steady part,
        /// milliseconds: with the `half` rule, the round trip under load (a PING's plus the
        /// time both ends take over a window of requests); `nil` for fewer than two refills.
        @Nullable public var refillIntervalMs: Double?
        /// The most requests in flight, and the most the probe would open (twice the window's
        /// bodies, at most `ProbeJob.mostFlowStreams`, 10,000).
        public var peakStreams: Int
        public var streamsTarget: Int
        /// `window`, `streams` or `neither`: what held the probe back half the steady part or more.
        public var bound: String
        /// The shares of the steady part the window (streams free) and the streams (window with
        /// room) held the probe back.
        public var windowBoundShare: Double
        public var streamsBoundShare: Double
        /// `duration` or `count`: what ended sending.
        public var stoppedBy: String

        enum CodingKeys: String, CodingKey {
            case sent, answered, resets, answers, seconds
            case steadySeconds = "steady_seconds"
            case ratePerSecond = "rate_per_second"
            case roundTripMs = "round_trip_ms"
            case requestRoundTripMs = "request_round_trip_ms"
            case mostBytesInFlight = "most_bytes_in_flight"
            case creditedPerRoundTrip = "credited_per_round_trip"
            case refillIntervalMs = "refill_interval_ms"
            case peakStreams = "peak_streams"
            case streamsTarget = "streams_target"
            case bound
            case windowBoundShare = "window_bound_share"
            case streamsBoundShare = "streams_bound_share"
            case stoppedBy = "stopped_by"
        }
        public init(
            sent: Int,
            answered: Int,
            resets: Int,
            answers: [String: Int],
            seconds: Double,
            steadySeconds: Double,
            ratePerSecond: Double? = nil,
            roundTripMs: Double,
            requestRoundTripMs: Double,
            mostBytesInFlight: Int,
            creditedPerRoundTrip: Double? = nil,
            refillIntervalMs: Double? = nil,
            peakStreams: Int,
            streamsTarget: Int,
            bound: String,
            windowBoundShare: Double,
            streamsBoundShare: Double,
            stoppedBy: String
        ) {
            self.sent = sent
            self.answered = answered
            self.resets = resets
            self.answers = answers
            self.seconds = seconds
            self.steadySeconds = steadySeconds
            self.ratePerSecond = ratePerSecond
            self.roundTripMs = roundTripMs
            self.requestRoundTripMs = requestRoundTripMs
            self.mostBytesInFlight = mostBytesInFlight
            self.creditedPerRoundTrip = creditedPerRoundTrip
            self.refillIntervalMs = refillIntervalMs
            self.peakStreams = peakStreams
            self.streamsTarget = streamsTarget
            self.bound = bound
            self.windowBoundShare = windowBoundShare
            self.streamsBoundShare = streamsBoundShare
            self.stoppedBy = stoppedBy
        }
    }

    /// The window, wire and flow lines of `text`.
    var flowLines: [String] {
        var lines: [String] = []
        if let window {
            lines.append(
                "  connection window: \(window.connectionAtStart.grouped) at start"
                    + (window.connectionAfterFirstAnswers.map { ", \($0.grouped) after the first answers" } ?? "")
                    + (window.connectionGranted != window.connectionAtStart
                        ? ", \(window.connectionGranted.grouped) granted at most" : "")
                    + "; stream window \(window.stream.grouped)"
            )
            if let refill = window.refill {
                var line =
                    "  refill: \(refill.kind) — \(refill.connectionUpdates.grouped) WINDOW_UPDATEs on the connection"
                if let smallest = refill.smallestIncrement, let largest = refill.largestIncrement {
                    line +=
                        " of \(smallest.grouped)" + (largest != smallest ? " to \(largest.grouped)" : "") + " bytes"
                }
                if refill.streamUpdates > 0 { line += ", \(refill.streamUpdates.grouped) on streams" }
                if refill.enlargedBytes > 0 { line += ", the window enlarged by \(refill.enlargedBytes.grouped)" }
                line += "; \(refill.mostBytesInFlight.grouped) bytes in flight at most"
                lines.append(line)
            }
        }
        if let wire {
            lines.append(
                "  a notification on the wire: \(wire.wireBytesPerNotification.grouped) bytes = "
                    + "\(wire.headersBytes.grouped) header block + \(wire.dataBytes.grouped) body + "
                    + "\(wire.frameBytes.grouped) frame headers (\(wire.frames) frames)"
                    + (tls != nil ? " + \(wire.tlsBytes) TLS record" : "") + " (TCP/IP excluded)"
            )
        }
        if let flow {
            let rate = flow.ratePerSecond.map { Int($0.rounded()).grouped + "/s" } ?? "no rate"
            lines.append(
                "  flow test: \(flow.answered.grouped) answered in " + String(format: "%.2f s", flow.seconds)
                    + "; one connection carried \(rate) over the steady "
                    + String(format: "%.2f s", flow.steadySeconds) + "; bound: \(flow.bound) (window "
                    + String(format: "%.0f%%", flow.windowBoundShare * 100) + ", streams "
                    + String(format: "%.0f%%", flow.streamsBoundShare * 100) + " of the time)"
            )
            lines.append(
                "    \(flow.mostBytesInFlight.grouped) bytes in flight at most, "
                    + (flow.creditedPerRoundTrip.map { Int($0.rounded()).grouped } ?? "no")
                    + " bytes credited a round trip ("
                    + millisecondsWithUnit(flow.roundTripMs) + ")"
                    + (flow.refillIntervalMs.map { ", a refill every " + millisecondsWithUnit($0) } ?? "")
                    + ", \(flow.peakStreams.grouped) streams at most "
                    + "(the probe would open \(flow.streamsTarget.grouped)); sent \(flow.sent.grouped), ended by "
                    + flow.stoppedBy
            )
        }
        return lines
    }
}
