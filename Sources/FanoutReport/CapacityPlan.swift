import FanoutMeasure
import FanoutSettings
import Foundation

/// The answer to "how many connections and machines deliver N notifications by a deadline?",
/// from the two limits a fan-out meets:
///
/// ```
///   required rate          R = devices ÷ deadline
///   a connection's ceiling  C = streams ÷ (round trip + processing)      (Little's law)
///   a core's ceiling        K = 1 s ÷ CPU per notification                (measured)
///   connections             ⌈R ÷ (C × headroom)⌉
///   sender cores            R ÷ (K × headroom);  machines ⌈cores ÷ cores a machine⌉
/// ```
///
/// A connection lives on one event loop, so it cannot go faster than one core: when K < C the
/// CPU binds each connection, else round trips × streams do.
public struct CapacityPlan: Sendable {
    public struct Question: Sendable, Hashable {
        public var devices: UInt64
        public var deadline: Duration
        public var roundTrip: Duration
        /// APNs' own time on a request, added to the round trip.
        public var processing = Self.defaultProcessing
        /// Concurrent streams a connection is allowed (APNs advertises about 1000).
        public var streams = Self.defaultStreams
        /// The sender's CPU per notification, when known (a run's summary, or a calibration).
        public var cpuMicroseconds: Double?
        /// Where that figure came from, for the plan's assumptions.
        public var cpuSource: String?
        /// The probe the round trip, processing and streams came from (`fanout plan --probe`).
        public var probeSource: String?
        public var coresPerMachine: Int
        /// The share of each ceiling the plan uses (0.7: 30% spare for what a plan cannot see).
        public var headroom = Self.defaultHeadroom
        public static let defaultProcessing: Duration = .milliseconds(5)
        public static let defaultStreams = 1000
        public static let defaultHeadroom = 0.7

        public init(devices: UInt64, deadline: Duration, roundTrip: Duration, coresPerMachine: Int) {
            self.devices = devices
            self.deadline = deadline
            self.roundTrip = roundTrip
            self.coresPerMachine = coresPerMachine
        }
    }

    /// What limits each connection.
    public enum Binding: String, Sendable {
        case roundTrips = "round trips × streams"
        case cpu = "CPU"
    }

    public let question: Question
    /// Notifications a second the deadline needs.
    public let requiredRate: Double
    /// Notifications a second one connection carries at most: streams ÷ (RTT + processing).
    public let connectionCeiling: Double
    /// Notifications a second one core sends, when the CPU cost is known.
    public let coreCeiling: Double?
    public let connections: Int
    /// Sender cores the rate needs at the headroom, and whole machines, when the cost is known.
    public let cores: Double?
    public let machines: Int?
    /// How long the planned connections take at their ceilings (the first round trip included:
    /// a connection may open one stream until its first request is accepted).
    public let expectedDuration: Duration
    public let binding: Binding

    public init(_ question: Question) {
        self.question = question
        let seconds = Self.seconds(question.deadline)
        let roundTrip = Self.seconds(question.roundTrip + question.processing)
        requiredRate = Double(question.devices) / seconds
        connectionCeiling = Double(question.streams) / roundTrip
        coreCeiling = question.cpuMicroseconds.map { 1e6 / $0 }
        let perConnection = min(connectionCeiling, coreCeiling ?? .infinity)
        binding = perConnection < connectionCeiling ? .cpu : .roundTrips
        connections = max(1, Int((requiredRate / (perConnection * question.headroom)).rounded(.up)))
        if let coreCeiling {
            let cores = requiredRate / (coreCeiling * question.headroom)
            self.cores = cores
            machines = max(1, Int((cores / Double(question.coresPerMachine)).rounded(.up)))
        } else {
            cores = nil
            machines = nil
        }
        var rate = Double(connections) * perConnection
        if let coreCeiling, let machines {
            rate = min(rate, coreCeiling * Double(machines * question.coresPerMachine))
        }
        expectedDuration = .nanoseconds(Int64((Double(question.devices) / rate + roundTrip) * 1e9))
    }

    /// `duration` in seconds.
    public static func seconds(_ duration: Duration) -> Double { Double(duration.wholeNanoseconds) / 1e9 }

    /// `85 ms`, `300 s`, `1.5 s`.
    static func spoken(_ duration: Duration) -> String {
        let seconds = Self.seconds(duration)
        if seconds < 1 { return "\(String(format: "%g", (seconds * 1e6).rounded() / 1e3)) ms" }
        return "\(String(format: "%g", (seconds * 1e3).rounded() / 1e3)) s"
    }

    /// What the plan takes for granted, in words.
    public var assumptions: [String] {
        var list =
            question.probeSource.map { probe in
                [
                    "\(question.streams) concurrent streams a connection, a round trip of \(Self.spoken(question.roundTrip)) and \(Self.spoken(question.processing)) of processing per request: measured by \(probe)"
                ]
            } ?? [
                "\(question.streams) concurrent streams a connection (APNs advertises about 1000; 500 and 1500 have been seen; 1 until a connection's first accepted request)",
                "a round trip of \(Self.spoken(question.roundTrip)) plus \(Self.spoken(question.processing)) of APNs' processing per request",
            ]
        list += [
            "\(Int((question.headroom * 100).rounded()))% of each ceiling used, the rest spare",
            "devices spread evenly over connections and machines; every notification answered once (no retries)",
        ]
        if let cpu = question.cpuMicroseconds {
            list.append(
                "\(String(format: "%.2f", cpu)) µs of sender CPU a notification (\(question.cpuSource ?? "given")), "
                    + "\(question.coresPerMachine) cores a machine, one connection on one core at a time"
            )
        } else {
            list.append("the sender's CPU is not known: give --cost RUN_DIR or --calibrate for cores and machines")
        }
        return list
    }

    /// The plan as `plan.json` holds it.
    public var document: Document {
        Document(
            devices: question.devices,
            deadlineSeconds: Self.seconds(question.deadline),
            roundTripMilliseconds: Self.seconds(question.roundTrip) * 1000,
            processingMilliseconds: Self.seconds(question.processing) * 1000,
            streamsPerConnection: question.streams,
            headroom: question.headroom,
            cpuMicroseconds: question.cpuMicroseconds,
            cpuSource: question.cpuSource,
            coresPerMachine: question.coresPerMachine,
            requiredRate: requiredRate,
            connectionCeiling: connectionCeiling,
            coreCeiling: coreCeiling,
            connections: connections,
            cores: cores,
            machines: machines,
            expectedDurationSeconds: Self.seconds(expectedDuration),
            binds: binding.rawValue,
            assumptions: assumptions
        )
    }

    /// `plan.json`: the question, each figure of the answer, what binds and every assumption;
    /// what is unknown without a CPU cost is `null`.
    public struct Document: Codable, Sendable, Equatable {
        public var devices: UInt64
        public var deadlineSeconds: Double
        public var roundTripMilliseconds: Double
        public var processingMilliseconds: Double
        public var streamsPerConnection: Int
        public var headroom: Double
        @Nullable public var cpuMicroseconds: Double?
        @Nullable public var cpuSource: String?
        public var coresPerMachine: Int
        public var requiredRate: Double
        public var connectionCeiling: Double
        @Nullable public var coreCeiling: Double?
        public var connections: Int
        @Nullable public var cores: Double?
        @Nullable public var machines: Int?
        public var expectedDurationSeconds: Double
        /// `Binding`'s raw value.
        public var binds: String
        public var assumptions: [String]

        enum CodingKeys: String, CodingKey {
            case devices
            case deadlineSeconds = "deadline_seconds"
            case roundTripMilliseconds = "rtt_ms"
            case processingMilliseconds = "processing_ms"
            case streamsPerConnection = "streams_per_connection"
            case headroom
            case cpuMicroseconds = "cpu_us_per_notification"
            case cpuSource = "cpu_source"
            case coresPerMachine = "cores_per_machine"
            case requiredRate = "required_rate_per_second"
            case connectionCeiling = "connection_ceiling_per_second"
            case coreCeiling = "core_ceiling_per_second"
            case connections, cores, machines
            case expectedDurationSeconds = "expected_duration_seconds"
            case binds, assumptions
        }
    }

    /// The plan for a terminal: one figure a line, how it was reached beside it.
    public var text: String {
        func rate(_ value: Double) -> String { "\(grouped(Int(value.rounded())))/s" }
        let roundTrip = question.roundTrip + question.processing
        var lines = [
            "\(grouped(Int(question.devices))) devices in \(Self.spoken(question.deadline)):",
            "  required rate          \(rate(requiredRate))",
            "  a connection carries   \(rate(connectionCeiling)) at most (\(question.streams) streams ÷ \(Self.spoken(roundTrip)))",
        ]
        if let coreCeiling {
            lines.append(
                "  a core sends           \(rate(coreCeiling)) (\(String(format: "%.2f", question.cpuMicroseconds!)) µs a notification)"
            )
        }
        lines.append(
            "  connections            \(connections) (at \(Int((question.headroom * 100).rounded()))% of a connection's ceiling)"
        )
        if let cores, let machines {
            lines.append("  sender cores           \(String(format: "%.1f", cores))")
            lines.append(
                "  machines               \(machines) (\(question.coresPerMachine) cores each)"
                    + (machines > 1
                        ? ": fanout send --shard i/\(machines) on each, \(Int((Double(connections) / Double(machines)).rounded(.up))) connections each"
                        : "")
            )
        }
        lines.append("  expected duration      \(String(format: "%.1f", Self.seconds(expectedDuration))) s")
        lines.append("  binds                  \(binding.rawValue)")
        lines.append("assuming:")
        lines += assumptions.map { "  - \($0)" }
        return lines.joined(separator: "\n")
    }
}
