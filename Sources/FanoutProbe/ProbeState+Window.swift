extension ProbeState {
    /// How the server's connection window moved under the probe's DATA: what it granted when
    /// the first request went (65,535 and any WINDOW_UPDATE on stream 0 before it), and each
    /// WINDOW_UPDATE after, as a refill of what we had sent or as an enlargement past it.
    ///
    /// ```
    ///   granted ─┬─ window (what we may still send)
    ///            └─ outstanding (sent, not yet credited back)
    ///   WINDOW_UPDATE(n): n ≤ outstanding → a refill of n; the rest of n enlarges `granted`
    /// ```
    public struct WindowRecord: Sendable, Equatable {
        /// The updates listed one by one; the rest are only counted.
        public static let keptUpdates = 100

        /// The send window when the first request went; `nil` before it.
        public var atStart: Int?
        /// When the first request went.
        public var startedAt: UInt64 = 0
        /// The send window once the one-at-a-time requests were answered.
        public var afterFirstAnswers: Int?
        /// The window the server grants: `atStart` plus enlargements.
        public private(set) var granted = 0
        /// The send window last seen.
        public private(set) var current = 0
        /// The first `keptUpdates` WINDOW_UPDATEs after the first request, either stream.
        public private(set) var updates: [Update] = []
        /// WINDOW_UPDATEs on stream 0 that gave back bytes we had sent, and on streams.
        public private(set) var connectionRefills = 0
        public private(set) var streamUpdates = 0
        /// Bytes of stream 0 updates beyond what we had outstanding: the grant grew.
        public private(set) var enlarged = 0
        public private(set) var smallestRefill: Int?
        public private(set) var largestRefill: Int?
        /// Refills of about half the grant or more, arriving with at least half outstanding.
        public private(set) var halfRefills = 0
        /// Refills of at most one DATA frame.
        public private(set) var frameRefills = 0
        /// The most bytes sent and not yet credited back.
        public private(set) var mostInFlight = 0
        /// The longest DATA frame sent.
        public var largestDataFrame = 0

        public init() {}

        /// A WINDOW_UPDATE as it came.
        public struct Update: Sendable, Equatable {
            public var at: UInt64
            public var stream: UInt32
            public var increment: Int
            /// Our connection send window after it.
            public var windowAfter: Int
        }

        /// The send window now; the in-flight peak follows it once requests go.
        mutating func observe(connectionWindow: Int) {
            current = connectionWindow
            if atStart != nil { mostInFlight = max(mostInFlight, granted - connectionWindow) }
        }

        /// The first request goes: the window as it stands is the grant.
        mutating func start(at now: UInt64) {
            guard atStart == nil else { return }
            atStart = current
            granted = current
            startedAt = now
        }

        /// Counts a WINDOW_UPDATE; returns the bytes it gave back on the connection (`nil` on a
        /// stream, or before the first request, where it is part of the window at start).
        mutating func update(stream: UInt32, increment: Int, windowAfter: Int, at now: UInt64) -> Int? {
            guard atStart != nil else { return nil }
            if updates.count < Self.keptUpdates {
                updates.append(Update(at: now, stream: stream, increment: increment, windowAfter: windowAfter))
            }
            current = windowAfter
            guard stream == 0 else {
                streamUpdates += 1
                return nil
            }
            let outstanding = granted - (windowAfter - increment)
            guard increment <= outstanding else {
                enlarged += increment - max(0, outstanding)
                granted += increment - max(0, outstanding)
                return max(0, outstanding)
            }
            connectionRefills += 1
            smallestRefill = min(smallestRefill ?? increment, increment)
            largestRefill = max(largestRefill ?? increment, increment)
            if 20 * increment >= 9 * granted && outstanding >= granted / 2 { halfRefills += 1 }
            if increment <= largestDataFrame { frameRefills += 1 }
            return increment
        }

        /// How the server refills the connection window, judged on what it did; `nil` when no
        /// request went. RFC 9113 §6.9 leaves when to send WINDOW_UPDATE to the receiver.
        public var refill: Refill? {
            guard atStart != nil else { return nil }
            guard connectionRefills > 0, let smallestRefill else {
                return 2 * mostInFlight < granted ? .noneNeeded : .notRefilled
            }
            if 10 * frameRefills >= 9 * connectionRefills { return .eachFrame }
            if halfRefills == connectionRefills { return .half }
            return .threshold(smallest: smallestRefill)
        }
    }

    /// When a server gives the connection window back.
    public enum Refill: Sendable, Equatable {
        /// Once about half is consumed, about half or more at once: nghttp2's rule (nghttpd,
        /// h2load). A sender keeping the window full gets about half of it back a round trip.
        case half
        /// After each DATA frame, its length (90% of refills at most one frame long).
        case eachFrame
        /// The probe never had half the window outstanding and saw no refill: the window is
        /// larger than one connection of this probe needs.
        case noneNeeded
        /// Refills of another size, the smallest given.
        case threshold(smallest: Int)
        /// Half the window or more was outstanding and nothing came back.
        case notRefilled

        /// The name probe.json gives it.
        public var name: String {
            switch self {
            case .half: "half"
            case .eachFrame: "each-frame"
            case .noneNeeded: "none-needed"
            case .threshold: "threshold"
            case .notRefilled: "not-refilled"
            }
        }
    }

    /// The bytes a request put on the wire, from the connection's outbound bytes around its
    /// send: `bytes` in all, `dataBytes` of them DATA payload.
    ///
    /// ```
    ///   +-- 9 --+-- header block --+ [CONTINUATION …]  +-- 9 --+-- body ≤ max frame --+ …
    ///   HEADERS                                          DATA
    /// ```
    public struct WireSample: Sendable, Equatable {
        public var headerBlock: Int
        public var headerFrames: Int
        public var dataBytes: Int
        public var dataFrames: Int
        public var largestDataFrame: Int

        /// `nil` when the bytes cannot be one request's frames of at most `maxFrameSize`.
        public init?(bytes: Int, dataBytes: Int, maxFrameSize: Int) {
            guard maxFrameSize > 0, dataBytes >= 0 else { return nil }
            dataFrames = (dataBytes + maxFrameSize - 1) / maxFrameSize
            let headers = bytes - dataBytes - 9 * dataFrames
            guard headers >= 9 else { return nil }
            headerFrames = (headers + maxFrameSize + 8) / (maxFrameSize + 9)
            headerBlock = headers - 9 * headerFrames
            self.dataBytes = dataBytes
            largestDataFrame = min(dataBytes, maxFrameSize)
        }
    }

    /// What the probe's requests put on the wire: the header block once HPACK's dynamic table
    /// holds the repeated fields (the 3rd request on), the body, and the frames.
    public struct WireRecord: Sendable, Equatable {
        /// Requests whose header blocks still teach HPACK's table the shared fields.
        static let unsteadyRequests = 2
        static let keptSamples = 1000

        /// The last request's body.
        public var bodyBytes = 0
        /// The first request's header block (every field new to the table).
        public private(set) var firstHeaderBlock: Int?
        /// Steady header blocks, the first `keptSamples`.
        public private(set) var steadyHeaderBlocks: [Int] = []
        /// The last sample's frames.
        public private(set) var headerFrames = 1
        public private(set) var dataFrames = 0

        public init() {}

        mutating func add(_ sample: WireSample, steady: Bool) {
            if firstHeaderBlock == nil { firstHeaderBlock = sample.headerBlock }
            headerFrames = sample.headerFrames
            dataFrames = sample.dataFrames
            if steady && steadyHeaderBlocks.count < Self.keptSamples { steadyHeaderBlocks.append(sample.headerBlock) }
        }

        /// The steady header block's median (the lower of two); `nil` before the 3rd request.
        public var steadyHeaderBlock: Int? {
            guard !steadyHeaderBlocks.isEmpty else { return nil }
            return steadyHeaderBlocks.sorted()[(steadyHeaderBlocks.count - 1) / 2]
        }
    }
}
