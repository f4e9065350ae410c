import FanoutAPNs
import FanoutMeasure
import FanoutPush
import Foundation

// summary.json's sections of what was measured: latency, CPU, the harness's own share,
// each second, the tokens read and the sink's counts.
extension SummaryDocument {
    /// Latency percentiles, milliseconds.
    public struct Latency: Codable, Sendable, Equatable {
        public var p50: Double
        public var p90: Double
        public var p99: Double
        public var p99_9: Double
        public var p99_99: Double
        public var max: Double

        /// Each of `RunSummary.percentiles` read from `milliseconds(at:)`.
        public init(milliseconds: (Double) -> Double) {
            p50 = milliseconds(50)
            p90 = milliseconds(90)
            p99 = milliseconds(99)
            p99_9 = milliseconds(99.9)
            p99_99 = milliseconds(99.99)
            max = milliseconds(100)
        }

        /// The percentiles reported everywhere, with their labels.
        public static let percentiles:
            [(label: String, percentile: Double, value: KeyPath<Latency, Double> & Sendable)] = [
                ("p50", 50, \.p50), ("p90", 90, \.p90), ("p99", 99, \.p99), ("p99.9", 99.9, \.p99_9),
                ("p99.99", 99.99, \.p99_99), ("max", 100, \.max),
            ]
    }
    /// CPU time measured per event-loop thread: seconds over the run, µs per notification sent.
    public struct CPU: Codable, Sendable, Equatable {
        @Nullable public var senderSeconds: Double?
        @Nullable public var senderPerNotification: Double?
        @Nullable public var sinkSeconds: Double?
        @Nullable public var sinkPerNotification: Double?

        enum CodingKeys: String, CodingKey {
            case senderSeconds = "sender_seconds"
            case senderPerNotification = "sender_us_per_notification"
            case sinkSeconds = "sink_seconds"
            case sinkPerNotification = "sink_us_per_notification"
        }

        public init(
            senderSeconds: Double?,
            senderPerNotification: Double?,
            sinkSeconds: Double?,
            sinkPerNotification: Double?
        ) {
            self.senderSeconds = senderSeconds
            self.senderPerNotification = senderPerNotification
            self.sinkSeconds = sinkSeconds
            self.sinkPerNotification = sinkPerNotification
        }

        /// From seconds over the run and the notifications sent.
        public init(sender: Double?, sink: Double?, sent: Int) {
            func perNotification(_ seconds: Double?) -> Double? {
                seconds.flatMap { sent > 0 ? $0 * 1e6 / Double(sent) : nil }
            }
            self.init(
                senderSeconds: sender,
                senderPerNotification: perNotification(sender),
                sinkSeconds: sink,
                sinkPerNotification: perNotification(sink)
            )
        }
    }
    /// How much of the measured latency Fanout itself accounts for (`HarnessAccount`).
    public struct Harness: Codable, Sendable, Equatable {
        public struct Sender: Codable, Sendable, Equatable {
            /// The open model's generator lag; `null` in the closed model.
            @Nullable public var sendLateness: DelayFigures?
            public var loopLag: DelayFigures
            public var readDelay: DelayFigures
            /// Timed answers only; `null` without them.
            @Nullable public var returnPath: DelayFigures?
            @Nullable public var perAnswer: DelayFigures?
            public var loopUtilisation: [Double]

            enum CodingKeys: String, CodingKey {
                case sendLateness = "send_lateness_ms"
                case loopLag = "loop_lag_ms"
                case readDelay = "read_delay_ms"
                case returnPath = "return_path_ms"
                case perAnswer = "per_answer_ms"
                case loopUtilisation = "loop_utilisation"
            }
            public init(
                sendLateness: DelayFigures? = nil,
                loopLag: DelayFigures,
                readDelay: DelayFigures,
                returnPath: DelayFigures? = nil,
                perAnswer: DelayFigures? = nil,
                loopUtilisation: [Double]
            ) {
                self.sendLateness = sendLateness
                self.loopLag = loopLag
                self.readDelay = readDelay
                self.returnPath = returnPath
                self.perAnswer = perAnswer
                self.loopUtilisation = loopUtilisation
            }
        }

        public var sender: Sender
        /// The embedded sink's; `null` for an endpoint elsewhere.
        @Nullable public var sink: SinkOwnDelays.Figures?
        public var ownP99: Double
        /// Timed answers' latency less the sink's hold; `null` without them, and in a merge.
        @Nullable public var own: DelayFigures?
        public var ownMeasured: Bool
        public var largest: String
        public var measuredP99: Double
        public var shareOfP99: Double
        public var maxShare: Double
        public var bound: Bool
        /// The embedded sink answered at once: no endpoint's time is in the latency, which is
        /// all Fanout's own (`fanout run` as it ships). Absent from files written before it was (read as false).
        public var selfMeasurement: Bool?
        public var guidance: [String]

        enum CodingKeys: String, CodingKey {
            case sender, sink
            case ownP99 = "own_p99_ms"
            case own = "own_ms"
            case ownMeasured = "own_measured"
            case largest
            case measuredP99 = "measured_p99_ms"
            case shareOfP99 = "share_of_p99"
            case maxShare = "max_share"
            case bound, guidance
            case selfMeasurement = "self_measurement"
        }
        public init(
            sender: Sender,
            sink: SinkOwnDelays.Figures? = nil,
            ownP99: Double,
            own: DelayFigures? = nil,
            ownMeasured: Bool,
            largest: String,
            measuredP99: Double,
            shareOfP99: Double,
            maxShare: Double,
            bound: Bool,
            selfMeasurement: Bool? = nil,
            guidance: [String]
        ) {
            self.sender = sender
            self.sink = sink
            self.ownP99 = ownP99
            self.own = own
            self.ownMeasured = ownMeasured
            self.largest = largest
            self.measuredP99 = measuredP99
            self.shareOfP99 = shareOfP99
            self.maxShare = maxShare
            self.bound = bound
            self.selfMeasurement = selfMeasurement
            self.guidance = guidance
        }
    }
    /// One second of the run.
    public struct Interval: Codable, Sendable, Equatable {
        public var second: Int
        public var completed: Int
        public var latencyCount: Int
        public var p50: Double
        public var p90: Double
        public var p99: Double
        public var max: Double
        public var maxLag: Double
        /// Schema 5; not kept by a merge.
        public var maxLoopLag: Double?
        public var readDelayP99: Double?
        /// Schema 8: notifications due in it that waited for a stream (the open model).
        public var streamWaits: Int? = nil
        /// Schema 8: the rejections and failures counted in the second, by reason, written as
        /// objects keyed by name (`{"Unregistered": 3}`) as the run's totals are; `nil` in a
        /// folder written before they were kept. Counted when the connections hand their counts
        /// over (at least once a second), so one may fall in the second after its answer.
        public var rejected: [PushReason: Int]? = nil
        public var failed: [FailureCause: Int]? = nil
        /// Schema 8: at the second's end, the connections open or opening and the notifications
        /// sent without a final outcome (as the connections last handed their counts over, at
        /// least once a second); `nil` for the run's last second and in older folders.
        public var connections: Int? = nil
        public var inFlight: Int? = nil
        /// Schema 8: the CPU time the sender's event-loop threads used in the second (ms, summed
        /// over the loops); `nil` where not measured (a merge of shards one of which did not).
        public var cpu: Double? = nil

        enum CodingKeys: String, CodingKey {
            case second, completed
            case latencyCount = "latency_count"
            case p50 = "p50_ms"
            case p90 = "p90_ms"
            case p99 = "p99_ms"
            case max = "max_ms"
            case maxLag = "max_lag_ms"
            case maxLoopLag = "max_loop_lag_ms"
            case readDelayP99 = "read_delay_p99_ms"
            case streamWaits = "stream_waits"
            case rejected, failed, connections
            case inFlight = "in_flight"
            case cpu = "cpu_ms"
        }
        public init(
            second: Int,
            completed: Int,
            latencyCount: Int,
            p50: Double,
            p90: Double,
            p99: Double,
            max: Double,
            maxLag: Double,
            maxLoopLag: Double? = nil,
            readDelayP99: Double? = nil,
            streamWaits: Int? = nil,
            rejected: [PushReason: Int]? = nil,
            failed: [FailureCause: Int]? = nil,
            connections: Int? = nil,
            inFlight: Int? = nil,
            cpu: Double? = nil
        ) {
            self.second = second
            self.completed = completed
            self.latencyCount = latencyCount
            self.p50 = p50
            self.p90 = p90
            self.p99 = p99
            self.max = max
            self.maxLag = maxLag
            self.maxLoopLag = maxLoopLag
            self.readDelayP99 = readDelayP99
            self.streamWaits = streamWaits
            self.rejected = rejected
            self.failed = failed
            self.connections = connections
            self.inFlight = inFlight
            self.cpu = cpu
        }
    }
    public struct Tokens: Codable, Sendable, Equatable {
        public var read: Int
        public var lines: Int
        public var turnedDown: Int
        /// A campaign half's: the other service's lines it passed over (absent outside a
        /// campaign, and when there were none).
        public var otherService: Int?

        enum CodingKeys: String, CodingKey {
            case read, lines
            case turnedDown = "turned_down"
            case otherService = "other_service"
        }
        public init(
            read: Int,
            lines: Int,
            turnedDown: Int,
            otherService: Int? = nil
        ) {
            self.read = read
            self.lines = lines
            self.turnedDown = turnedDown
            self.otherService = otherService
        }
    }
    /// What the sink counted (`fanout run`, or `--reconcile`).
    public struct Sink: Codable, Sendable, Equatable {
        public var requests: Int
        public var accepted: Int
        public var rejected: [PushReason: Int]
        public var digest: String
        public var differences: [String]
        public init(
            requests: Int,
            accepted: Int,
            rejected: [PushReason: Int],
            digest: String,
            differences: [String]
        ) {
            self.requests = requests
            self.accepted = accepted
            self.rejected = rejected
            self.digest = digest
            self.differences = differences
        }
    }
}
