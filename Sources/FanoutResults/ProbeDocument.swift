import FanoutFiles
import FanoutMeasure
import FanoutNotation
import Foundation

/// `probe.json`: what `fanout probe` measured of an endpoint — its TLS, its SETTINGS before
/// and after the first accepted request, the round trip of a bare PING and of requests (one at
/// a time, then in parallel), the server's processing (a request's round trip less a PING's),
/// and the streams a connection got; since schema 2 also HTTP/2 flow control: the connection
/// window and how the server refilled it (`window`), the bytes a notification puts on the wire
/// (`wire`), and a flow test keeping one connection full (`flow`). `fanout plan --probe` plans
/// with it.
public struct ProbeDocument: Codable, Sendable, Equatable {
    public static let schemaVersion = 2
    /// The schemas `load` reads: a schema 1 file has `window`, `wire` and `flow` as `nil`.
    public static let readableSchemas = 1...schemaVersion

    public var schema = Self.schemaVersion
    public var kind = "probe"
    public var endpoint: String
    /// When the probe ran; written RFC 3339 to the millisecond.
    @RFC3339Time public var started: Date
    /// `null` over cleartext (h2c with prior knowledge).
    @Nullable public var tls: TLS?
    public var settings: Settings
    /// Milliseconds; `null` when no PING was answered.
    @Nullable public var pingRoundTrip: Figures?
    @Nullable public var oneAtATime: Requests?
    @Nullable public var inParallel: Requests?
    /// One-at-a-time requests' round trips less the PING's median, milliseconds.
    @Nullable public var processing: Figures?
    public var streams: Streams
    /// Answers by `status` or `status reason`, both phases.
    public var answers: [String: Int]
    /// Requests reset rather than answered.
    public var resets: Int
    /// The connection window and its refills; `nil` in schema 1 and when no SETTINGS came.
    @Nullable public var window: Window?
    /// What a notification of the template puts on the wire; `nil` without requests.
    @Nullable public var wire: Wire?
    /// The flow test; `nil` when it did not run (no `--tokens`, or `--no-flow`).
    @Nullable public var flow: Flow?
    public var notes: [String]

    public struct TLS: Codable, Sendable, Equatable {
        public var version: String?
        public var alpn: String
        public init(
            version: String? = nil,
            alpn: String
        ) {
            self.version = version
            self.alpn = alpn
        }
    }

    /// The server's SETTINGS as first received, and as in force at the end.
    public struct Settings: Codable, Sendable, Equatable {
        @Nullable public var first: Values?
        /// `null` when no request was accepted (APNs raises its limits after the first).
        @Nullable public var afterFirstAccepted: Values?

        enum CodingKeys: String, CodingKey {
            case first
            case afterFirstAccepted = "after_first_accepted"
        }
        public init(
            first: Values? = nil,
            afterFirstAccepted: Values? = nil
        ) {
            self.first = first
            self.afterFirstAccepted = afterFirstAccepted
        }
    }

    public struct Values: Codable, Sendable, Equatable {
        /// `null`: no limit announced.
        @Nullable public var maxConcurrentStreams: Int?
        public var initialWindowSize: Int
        public var maxFrameSize: Int
        public var headerTableSize: Int
        @Nullable public var maxHeaderListSize: Int?

        enum CodingKeys: String, CodingKey {
            case maxConcurrentStreams = "max_concurrent_streams"
            case initialWindowSize = "initial_window_size"
            case maxFrameSize = "max_frame_size"
            case headerTableSize = "header_table_size"
            case maxHeaderListSize = "max_header_list_size"
        }
        public init(
            maxConcurrentStreams: Int? = nil,
            initialWindowSize: Int,
            maxFrameSize: Int,
            headerTableSize: Int,
            maxHeaderListSize: Int? = nil
        ) {
            self.maxConcurrentStreams = maxConcurrentStreams
            self.initialWindowSize = initialWindowSize
            self.maxFrameSize = maxFrameSize
            self.headerTableSize = headerTableSize
            self.maxHeaderListSize = maxHeaderListSize
        }
    }

    /// A handful of samples: nearest-rank percentiles, milliseconds.
    public struct Figures: Codable, Sendable, Equatable {
        public var count: Int
        public var p50: Double
        public var p99: Double
        public var min: Double
        public var max: Double

        /// `nanoseconds` less `minus` ms each; `nil` for none.
        public init?(nanoseconds: [UInt64], minus: Double = 0) {
            guard !nanoseconds.isEmpty else { return nil }
            let sorted = nanoseconds.sorted().map { Double($0) / 1e6 - minus }
            func rank(_ percentile: Double) -> Double {
                sorted[Swift.max(0, Int((percentile / 100 * Double(sorted.count)).rounded(.up)) - 1)]
            }
            count = sorted.count
            p50 = rank(50)
            p99 = rank(99)
            min = sorted.first!
            max = sorted.last!
        }
        public init(
            count: Int,
            p50: Double,
            p99: Double,
            min: Double,
            max: Double
        ) {
            self.count = count
            self.p50 = p50
            self.p99 = p99
            self.min = min
            self.max = max
        }
    }

    public struct Requests: Codable, Sendable, Equatable {
        public var roundTrip: Figures
        /// From the first request to the last answer (in parallel); `null` one at a time.
        @Nullable public var seconds: Double?

        enum CodingKeys: String, CodingKey {
            case roundTrip = "round_trip_ms"
            case seconds
        }
        public init(
            roundTrip: Figures,
            seconds: Double? = nil
        ) {
            self.roundTrip = roundTrip
            self.seconds = seconds
        }
    }

    public struct Streams: Codable, Sendable, Equatable {
        /// MAX_CONCURRENT_STREAMS at first and after the first accepted request (`null`: none
        /// announced, or none accepted).
        @Nullable public var first: Int?
        @Nullable public var afterFirstAccepted: Int?
        /// The most requests the probe had in flight at once.
        public var peakInFlight: Int

        enum CodingKeys: String, CodingKey {
            case first
            case afterFirstAccepted = "after_first_accepted"
            case peakInFlight = "peak_in_flight"
        }
        public init(
            first: Int? = nil,
            afterFirstAccepted: Int? = nil,
            peakInFlight: Int
        ) {
            self.first = first
            self.afterFirstAccepted = afterFirstAccepted
            self.peakInFlight = peakInFlight
        }
    }

    enum CodingKeys: String, CodingKey {
        case schema, kind, endpoint, started, tls, settings
        case pingRoundTrip = "ping_round_trip_ms"
        case oneAtATime = "one_at_a_time"
        case inParallel = "in_parallel"
        case processing = "processing_ms"
        case streams, answers, resets, window, wire, flow, notes
    }

    /// Reads `probe.json`.
    public static func load(_ path: String) throws -> ProbeDocument {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw ResultsError(.unreadable, "cannot read \(path): \(error.reason)")
        }
        try DuplicateKeyScan.refuse(data, at: path)
        let document: ProbeDocument
        do {
            document = try JSONDecoder().decode(ProbeDocument.self, from: data)
        } catch {
            throw ResultsError(.notADocument, "\(path) is not a probe.json of fanout probe: \(error)")
        }
        guard document.kind == "probe", readableSchemas.contains(document.schema) else {
            throw ResultsError(
                .version,
                "\(path) is a \(document.kind) document of schema \(document.schema), not a probe of schema \(schemaVersion)"
            )
        }
        return document
    }

    public func data() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return try encoder.encode(self) + Data("\n".utf8)
    }

    /// What a person reads.
    public var text: String {
        func ms(_ value: Double) -> String { String(format: value < 10 ? "%.2f ms" : "%.1f ms", value) }
        func figures(_ figures: Figures) -> String {
            "p50 \(ms(figures.p50)), p99 \(ms(figures.p99)) (\(figures.count))"
        }
        func settingsText(_ values: Values) -> String {
            "max concurrent streams \(values.maxConcurrentStreams.map { $0.grouped } ?? "unlimited"), "
                + "initial window \(values.initialWindowSize.grouped), max frame \(values.maxFrameSize.grouped), "
                + "header table \(values.headerTableSize.grouped), "
                + "max header list \(values.maxHeaderListSize.map { $0.grouped } ?? "unlimited")"
        }
        var lines = ["probe of \(endpoint)"]
        lines.append(
            tls.map { "  TLS: \($0.version ?? "version unknown"), ALPN \($0.alpn)" }
                ?? "  cleartext: HTTP/2 with prior knowledge (h2c)"
        )
        if let first = settings.first { lines.append("  SETTINGS at first: " + settingsText(first)) }
        if let after = settings.afterFirstAccepted {
            lines.append("  SETTINGS after the first accepted request: " + settingsText(after))
        }
        if let ping = pingRoundTrip { lines.append("  PING round trip: " + figures(ping)) }
        if let one = oneAtATime { lines.append("  requests one at a time: " + figures(one.roundTrip)) }
        if let parallel = inParallel {
            lines.append(
                "  requests in parallel: " + figures(parallel.roundTrip)
                    + ", \(streams.peakInFlight) in flight at most, \(ms((parallel.seconds ?? 0) * 1000)) in all"
            )
        }
        if let processing {
            lines.append("  processing (a request's round trip less the PING's): " + figures(processing))
        }
        if !answers.isEmpty {
            lines.append(
                "  answers: "
                    + answers.sorted { $0.key < $1.key }.map { "\($0.key) × \($0.value.grouped)" }
                    .joined(separator: ", ") + (resets > 0 ? "; reset \(resets.grouped)" : "")
            )
        }
        let first = streams.first.map { $0.grouped } ?? "unlimited"
        lines.append(
            "  streams a connection gets: \(first) at first"
                + (settings.afterFirstAccepted == nil
                    ? " (no request accepted: the limit after one is not known)"
                    : ", \(streams.afterFirstAccepted.map { $0.grouped } ?? "unlimited") after the first accepted request")
        )
        lines += flowLines
        lines += notes.map { "  note: \($0)" }
        return lines.joined(separator: "\n")
    }
    public init(
        endpoint: String,
        started: Date,
        tls: TLS? = nil,
        settings: Settings,
        pingRoundTrip: Figures? = nil,
        oneAtATime: Requests? = nil,
        inParallel: Requests? = nil,
        processing: Figures? = nil,
        streams: Streams,
        answers: [String: Int],
        resets: Int,
        window: Window? = nil,
        wire: Wire? = nil,
        flow: Flow? = nil,
        notes: [String]
    ) {
        self.endpoint = endpoint
        self.started = started
        self.tls = tls
        self.settings = settings
        self.pingRoundTrip = pingRoundTrip
        self.oneAtATime = oneAtATime
        self.inParallel = inParallel
        self.processing = processing
        self.streams = streams
        self.answers = answers
        self.resets = resets
        self.window = window
        self.wire = wire
        self.flow = flow
        self.notes = notes
    }
}
