import FanoutMeasure
import FanoutNotation
import FanoutPush
import FanoutResults
import Foundation

/// The answer to "how many connections and machines deliver N notifications by a deadline?",
/// from every limit a fan-out meets on its way:
///
/// ```
///   required rate            R = devices ÷ deadline
///   a connection carries the least of
///     streams                  streams ÷ (round trip + processing)                (Little's law)
///     the connection window    window back a round trip ÷ round trip ÷ body bytes (flow control)
///     the stream window        streams ÷ (⌈body ÷ stream window⌉ × round trip + processing)
///     its path's bandwidth     bandwidth ÷ wire bytes a notification
///     one core                 1 s ÷ CPU per notification                         (measured)
///   a machine carries          its network interface ÷ wire bytes a notification
///   connections                ⌈R ÷ (a connection's least × headroom)⌉
///   machines                   the more of ⌈cores ÷ cores a machine⌉ and ⌈R ÷ (NIC × headroom)⌉
/// ```
///
/// FCM (`Question.service`) adds the project's quota, a bound on every machine together:
///
/// ```
///   the quota's rate         Q = messages ÷ window                              (600,000 ÷ 60 s)
///   it binds when            R > Q and devices > messages (more than one window's worth)
///   the quota allows         devices ÷ Q                                        (20M: 33.3 min)
///   then the plan paces at   P = Q × 0.99: connections, cores and machines carry P, not R,
///                            and the fan-out takes devices ÷ P                  (20M: 33.7 min)
/// ```
///
/// The 1% below Q is for the window's edge: paced at Q exactly, a window holds its messages to
/// the last, and a send that the pacing's jitter puts a few milliseconds early meets a 429 and
/// waits out Retry-After, whole seconds (measured: at 2,000/s against 2,000 a 1 s window, 101
/// of 6,000 answered 429 and the share took 4.9 s, not 3.0). A sender that bursts each window's
/// messages and waits out the rest ends no sooner than (⌈devices ÷ messages⌉ − 1) windows,
/// with a 429 for every request in flight at each window's end.
///
/// A WINDOW_UPDATE is sent when DATA arrives, not when it is answered, so the window's bound
/// counts the round trip alone. What comes back a round trip depends on when the receiver
/// refills (`Refill`): with nghttp2's rule (an update once half the window is consumed) a
/// sender keeping the window full gets one update of the bodies that reach half the window
/// back each round trip — what stays below the threshold waits — and with an update a frame
/// it gets the whole window back.
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
        /// Flow control and bytes: what the path and the receiver's windows allow.
        public var flow = Flow()
        /// The push service the fan-out goes through: its words, and for FCM the quota.
        public var service = Service.apns
        /// FCM's project quota (`nil`: none, as APNs has none).
        public var quota: Quota?
        public static let defaultProcessing: Duration = .milliseconds(5)
        public static let defaultStreams = 1000
        /// Google's front end grants 100 concurrent streams a connection (docs/fcm.md, "Transport").
        public static let defaultFCMStreams = 100
        public static let defaultHeadroom = 0.7

        public init(devices: UInt64, deadline: Duration, roundTrip: Duration, coresPerMachine: Int) {
            self.devices = devices
            self.deadline = deadline
            self.roundTrip = roundTrip
            self.coresPerMachine = coresPerMachine
        }

        /// A question for FCM: its streams, its quota, and its request's bytes.
        public static func fcm(devices: UInt64, deadline: Duration, roundTrip: Duration, coresPerMachine: Int) -> Self {
            var question = Self(
                devices: devices,
                deadline: deadline,
                roundTrip: roundTrip,
                coresPerMachine: coresPerMachine
            )
            question.service = .fcm
            question.streams = defaultFCMStreams
            question.quota = Quota()
            question.flow.bodyBytes = Flow.defaultFCMBodyBytes
            question.flow.headerBytes = Flow.defaultFCMHeaderBytes
            question.flow.sources.bodyBytes =
                "default: fixtures/fcm-poll.json's for a 163-character token; give --template"
            question.flow.sources.headerBytes = "default: Fanout's FCM request in steady state"
            return question
        }
    }

    /// The push service a plan is for.
    public typealias Service = PushService

    /// FCM's project quota: `messages` a `window` that starts with the project's first counted
    /// message (docs/fcm.md, "Quota and rate limits"; the FCM sink's `--fcm-quota`).
    public struct Quota: Sendable, Hashable {
        public var messages: Int
        public var window: Duration
        /// Sends a second it allows sustained.
        public var rate: Double { Double(messages) / window.seconds }

        /// FCM's default: 600,000 messages a minute.
        public init(messages: Int = 600_000, window: Duration = .seconds(60)) {
            self.messages = messages
            self.window = window
        }
    }

    /// What the windows, bytes and bandwidths of a plan are, each with where it came from
    /// (a probe, a template, given, a default) for the plan's assumptions.
    public struct Flow: Sendable, Hashable {
        /// The connection window the receiver grants (bytes); `nil`: not known, taken as not
        /// binding and said so.
        public var connectionWindow: Int?
        /// SETTINGS_INITIAL_WINDOW_SIZE, each stream's window; `nil`: not known.
        public var streamWindow: Int?
        public var refill = Refill.half
        /// The bytes consumed before an update, with `Refill.threshold` (a probe's smallest
        /// increment seen).
        public var refillThreshold: Int?
        /// Flow-controlled bytes a notification: the body.
        public var bodyBytes = Self.defaultBodyBytes
        /// The HEADERS frame's payload a notification in steady state (after HPACK).
        public var headerBytes = Self.defaultHeaderBytes
        /// Whether TLS carries the connection (APNs: always): 22 bytes a record, a record a
        /// notification at most.
        public var tls = true
        /// A connection's path, bytes a second each way; `nil`: not capped.
        public var bandwidth: Double?
        /// A sending machine's network interface, bytes a second.
        public var networkInterface = Self.defaultNetworkInterface
        /// Where each figure came from: "given", "default", a probe's or a template's name.
        public var sources = Sources()
        /// The template the body came from, when one did (a rehearsal sends it).
        public var templatePath: String?

        /// The body of the notification Fanout sends when told none (fixtures/poll.json, the
        /// interactive poll, for a 64-digit token): a body nothing was said of is taken as this.
        public static let defaultBodyBytes = 280
        /// Fanout's HEADERS for an APNs request in steady state: the `:path` with a 64-digit
        /// token literal each time (76 bytes), the run's fields a byte each once indexed; no
        /// apns-id (46 bytes more when one is sent). `SteadyHeaderBytesTests` keeps it true.
        public static let defaultHeaderBytes = 81
        /// Fanout's HEADERS for an FCM send in steady state: every field the same on every
        /// request (the project's path, the bearer), a byte each once indexed.
        /// `SteadyHeaderBytesTests` keeps it true.
        public static let defaultFCMHeaderBytes = 6
        /// fixtures/fcm-poll.json's body for a registration token of 163 characters (the length
        /// Firebase's tokens commonly have; Google documents none: our assumption).
        /// `FCMPlanTests` renders it.
        public static let defaultFCMBodyBytes = 432
        /// 1 Gbit/s.
        public static let defaultNetworkInterface = 125_000_000.0
        /// A TLS 1.3 record's overhead: 5 header bytes, 1 content type, 16 of AEAD tag.
        public static let tlsRecordBytes = 22
        /// TCP/IP's bytes a segment (IPv4 20, TCP 20 and 12 of timestamps) and a segment's payload
        /// (Ethernet's 1500 less them).
        public static let tcpIPBytes = 52
        public static let segmentPayload = 1448

        public struct Sources: Sendable, Hashable {
            public var connectionWindow = "not known"
            public var streamWindow = "not known"
            public var refill = "default: nghttp2's rule"
            public var bodyBytes = "default: fixtures/poll.json's; give --template"
            public var headerBytes = "default: Fanout's request in steady state, no apns-id"
            public var bandwidth = "not capped"
            public var networkInterface = "default"
            public init() {}
        }

        public init() {}

        /// `once half is consumed`, `after each DATA frame`, `once 10,000 bytes are consumed`.
        var refillWords: String {
            switch refill {
            case .half: "once half is consumed"
            case .eachFrame: "after each DATA frame"
            case .threshold: "once \(grouped(refillThreshold ?? 0)) bytes are consumed"
            }
        }

        /// HTTP/2 and TLS bytes a notification: HEADERS and DATA with their 9-byte frame
        /// headers, and a TLS record's overhead.
        public var http2Bytes: Int {
            headerBytes + 9 + bodyBytes + 9 + (tls ? Self.tlsRecordBytes : 0)
        }

        /// Bytes a notification puts on a link: HTTP/2 and TLS bytes with TCP/IP's share.
        public var wireBytes: Double {
            let payload = Double(http2Bytes)
            return payload * (1 + Double(Self.tcpIPBytes) / Double(Self.segmentPayload))
        }

        /// Bytes of the connection window that come back each round trip to a sender keeping it
        /// full: every byte with an update a frame; with updates once a threshold is consumed,
        /// as many updates as fit in the window, each the bodies that reach the threshold
        /// (⌈threshold ÷ body⌉ × body).
        public var windowBackPerRoundTrip: Double? {
            guard let window = connectionWindow else { return nil }
            let threshold: Int
            switch refill {
            case .eachFrame: return Double(window)
            case .half: threshold = window / 2
            case .threshold: threshold = min(window, refillThreshold ?? window / 2)
            }
            // Updates come at whole bodies: the first body to take the consumed bytes to the
            // threshold sends it (in steady state a round's first frame completes the body the
            // window cut short, so the counts stay on body boundaries).
            let body = max(1, bodyBytes)
            let update = Double((max(threshold, 1) + body - 1) / body * body)
            return max(1, (Double(window) / update).rounded(.down)) * update
        }
    }

    public typealias Refill = PlanDocument.Refill

    /// What limits each connection (and, for the network interface, each machine).
    public enum Binding: String, Sendable {
        case roundTrips = "round trips × streams"
        case connectionWindow = "the connection window"
        case streamWindow = "the stream window"
        case bandwidth = "a connection's bandwidth"
        case networkInterface = "the network interface"
        case cpu = "CPU"
        /// FCM: the project's quota, every machine's together.
        case quota = "the project's quota"
    }

    public typealias Bounds = PlanDocument.Bounds

    public let question: Question
    /// Notifications a second the deadline needs.
    public let requiredRate: Double
    /// Whether FCM's project quota binds: the deadline needs more than its rate, and the
    /// fan-out more than one window's messages. The plan then paces at the quota's rate.
    public let quotaBinds: Bool
    /// The rate the plan sends at: the required rate, or where the quota binds its rate less
    /// `quotaMargin`.
    public let plannedRate: Double
    /// The share of the quota's rate a plan leaves for the window's edge.
    public static let quotaMargin = 0.01
    /// The rate the send must be paced at to stay inside FCM's quota (`nil`: flat out): the
    /// quota's rate less `quotaMargin`, where the quota binds, or where the deadline is within
    /// it but the planned connections flat out (sized at the headroom, so faster than the
    /// deadline needs) would pass it on a fan-out of more than one window.
    public let pace: Double?
    /// Notifications a second one connection carries at most: the least of its bounds but
    /// the core's.
    public let connectionCeiling: Double
    /// Every bound, each on its own.
    public let bounds: Bounds
    /// Notifications a second one core sends, when the CPU cost is known.
    public let coreCeiling: Double?
    public let connections: Int
    /// Sender cores the rate needs at the headroom, and whole machines, when the cost is known.
    public let cores: Double?
    public let machines: Int?
    /// How long the planned connections take at their ceilings (the first round trip included:
    /// a connection may open one stream until its first request is accepted).
    public let expectedDuration: Duration
    /// What limits each connection.
    public let binding: Binding
    /// What sets the number of machines: their cores or their network interfaces (`nil` when
    /// neither asks for more than one and the CPU is not known).
    public let machineBinding: Binding?

    public init(_ question: Question) {
        self.question = question
        let seconds = question.deadline.seconds
        let roundTrip = (question.roundTrip + question.processing).seconds
        let wireRoundTrip = question.roundTrip.seconds
        let flow = question.flow
        requiredRate = Double(question.devices) / seconds
        if let quota = question.quota, requiredRate > quota.rate, question.devices > UInt64(max(0, quota.messages)) {
            quotaBinds = true
            plannedRate = quota.rate * (1 - Self.quotaMargin)
        } else {
            quotaBinds = false
            plannedRate = requiredRate
        }
        coreCeiling = question.cpuMicroseconds.map { 1e6 / $0 }
        let body = Double(max(1, flow.bodyBytes))
        var streamWindowBound: Double?
        if let window = flow.streamWindow, window < flow.bodyBytes {
            // Each round trip carries a stream window of the body (0: none ever goes).
            let rounds = window > 0 ? (body / Double(window)).rounded(.up) : .infinity
            streamWindowBound = Double(question.streams) / (rounds * wireRoundTrip + question.processing.seconds)
        }
        bounds = Bounds(
            streams: Double(question.streams) / roundTrip,
            connectionWindow: flow.windowBackPerRoundTrip.map { $0 / max(wireRoundTrip, 1e-9) / body },
            streamWindow: streamWindowBound,
            bandwidth: flow.bandwidth.map { $0 / flow.wireBytes },
            core: coreCeiling,
            networkInterface: flow.networkInterface / flow.wireBytes
        )
        let candidates: [(Binding, Double?)] = [
            (.roundTrips, bounds.streams), (.connectionWindow, bounds.connectionWindow),
            (.streamWindow, bounds.streamWindow), (.bandwidth, bounds.bandwidth),
        ]
        let (connectionBinding, ceiling) =
            candidates.compactMap { binding, bound in bound.map { (binding, $0) } }.min { $0.1 < $1.1 }!
        // A bound of 0 (a stream window a body never crosses) or not a number is no plan: the
        // options and the probe refuse what leads to one; a floor keeps the arithmetic finite.
        connectionCeiling = ceiling.isFinite ? max(ceiling, 1e-9) : 1e-9
        let perConnection = min(connectionCeiling, coreCeiling ?? .infinity)
        connections = max(1, Int(saturating: (plannedRate / (perConnection * question.headroom)).rounded(.up)))
        let interfaceMachines = max(
            1,
            Int(saturating: (plannedRate / (bounds.networkInterface * question.headroom)).rounded(.up))
        )
        if let coreCeiling {
            let cores = plannedRate / (coreCeiling * question.headroom)
            self.cores = cores
            machines = max(interfaceMachines, Int(saturating: (cores / Double(question.coresPerMachine)).rounded(.up)))
        } else {
            cores = nil
            machines = interfaceMachines > 1 ? interfaceMachines : nil
        }
        var rate = Double(connections) * perConnection
        let machineCount = Double(machines ?? 1)
        if let coreCeiling {
            rate = min(rate, coreCeiling * machineCount * Double(question.coresPerMachine))
        }
        rate = min(rate, bounds.networkInterface * machineCount)
        if let quota = question.quota, question.devices > UInt64(max(0, quota.messages)),
            rate > quota.rate * (1 - Self.quotaMargin)
        {
            pace = quota.rate * (1 - Self.quotaMargin)
        } else {
            pace = nil
        }
        if let pace { rate = min(rate, pace) }
        binding = quotaBinds ? .quota : perConnection < connectionCeiling ? .cpu : connectionBinding
        // Said when something asks for more than one machine (docs/planning.md): one machine is
        // bound by nothing worth naming.
        if let machines, machines > 1 {
            let cpuMachines = cores.map { Int(saturating: ($0 / Double(question.coresPerMachine)).rounded(.up)) } ?? 0
            machineBinding = interfaceMachines >= cpuMachines ? .networkInterface : .cpu
        } else {
            machineBinding = nil
        }
        expectedDuration = .nanoseconds(Int(saturating: (Double(question.devices) / rate + roundTrip) * 1e9))
    }

    /// `85 ms`, `300 s`, `1.5 s`.
    public static func spoken(_ duration: Duration) -> String {
        let seconds = duration.seconds
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
                question.service == .fcm
                    ? "\(question.streams) concurrent streams a connection (Google's front end grants 100: docs/fcm.md, \"Transport\")"
                    : "\(question.streams) concurrent streams a connection (APNs advertises about 1000; 500 and 1500 have been seen; 1 until a connection's first accepted request)",
                "a round trip of \(Self.spoken(question.roundTrip)) plus \(Self.spoken(question.processing)) of \(question.service == .fcm ? "FCM's" : "APNs'") processing per request",
            ]
        if let quota = question.quota {
            list.append(
                "the project's quota: \(grouped(quota.messages)) messages a \(Self.spoken(quota.window)) window from its first "
                    + "counted message, every machine's sends together (FCM's default is 600,000 a minute; --fcm-quota sets "
                    + "the project's own); 4xx answers count against it too, so a fan-out's bad tokens take part of it"
            )
        }
        let flow = question.flow
        if let window = flow.connectionWindow {
            list.append(
                "a connection window of \(grouped(window)) bytes (\(flow.sources.connectionWindow)), refilled "
                    + flow.refillWords + " (\(flow.sources.refill))"
            )
        } else {
            list.append(
                question.service == .fcm
                    ? "the connection window is not known and taken as never binding: give --connection-window"
                    : "the connection window is not known and taken as never binding: give --connection-window or --probe "
                        + "(nghttp2's 65,535 bytes 80 ms away carries about 1,450 bodies of 280 bytes a second)"
            )
        }
        list.append(
            flow.streamWindow.map { "a stream window of \(grouped($0)) bytes (\(flow.sources.streamWindow))" }
                ?? "the stream window is not known and taken as holding a body"
        )
        list.append(
            "\(grouped(flow.bodyBytes))-byte bodies (\(flow.sources.bodyBytes)) and \(flow.headerBytes) bytes of HEADERS "
                + "(\(flow.sources.headerBytes)): \(grouped(Int(flow.wireBytes.rounded()))) bytes on the wire a notification "
                + "with frame headers\(flow.tls ? ", a TLS record" : "") and TCP/IP"
        )
        if let bandwidth = flow.bandwidth {
            list.append(
                "\(BandwidthNotation.format(bytesPerSecond: bandwidth)) a connection's path (\(flow.sources.bandwidth))"
            )
        }
        list.append(
            "a network interface of \(BandwidthNotation.format(bytesPerSecond: flow.networkInterface)) a machine "
                + "(\(flow.sources.networkInterface)), the sending direction's bytes"
        )
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
            list.append(
                question.service == .fcm
                    ? "the sender's CPU is not known: give --cost RUN_DIR (a fanout send --service fcm run) for cores and machines"
                    : "the sender's CPU is not known: give --cost RUN_DIR or --calibrate for cores and machines"
            )
        }
        return list
    }

    /// The plan as `plan.json` holds it.
    public var document: Document {
        var document = Document(
            devices: question.devices,
            deadlineSeconds: question.deadline.seconds,
            roundTripMilliseconds: question.roundTrip.seconds * 1000,
            processingMilliseconds: question.processing.seconds * 1000,
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
            expectedDurationSeconds: expectedDuration.seconds,
            binds: binding.rawValue,
            machinesBoundBy: machineBinding?.rawValue,
            bounds: bounds,
            connectionWindow: question.flow.connectionWindow,
            streamWindow: question.flow.streamWindow,
            refill: question.flow.refill,
            bodyBytes: question.flow.bodyBytes,
            headerBytes: question.flow.headerBytes,
            wireBytesPerNotification: question.flow.wireBytes,
            bandwidth: question.flow.bandwidth,
            networkInterface: question.flow.networkInterface,
            assumptions: assumptions
        )
        if question.service == .fcm { document.service = question.service.rawValue }
        document.quota = question.quota.map {
            PlanDocument.Quota(
                messages: $0.messages,
                windowSeconds: $0.window.seconds,
                ratePerSecond: $0.rate,
                binds: quotaBinds,
                pacedRatePerSecond: pace
            )
        }
        return document
    }

    public typealias Document = PlanDocument

    /// The plan for a terminal: one figure a line, how it was reached beside it.
    public var text: String {
        // Past 10^18 (no real plan, but a figure the options allow) in %g, not past Int.
        func rate(_ value: Double) -> String {
            "\(value < 1e18 ? grouped(Int(saturating: value.rounded())) : String(format: "%.3g", value))/s"
        }
        let roundTrip = question.roundTrip + question.processing
        let flow = question.flow
        var lines = [
            "\(grouped(Int(question.devices))) devices in \(Self.spoken(question.deadline)):",
            "  required rate          \(rate(requiredRate))",
        ]
        if let quota = question.quota {
            let window = "\(grouped(quota.messages)) a \(Self.spoken(quota.window)) window"
            // 33.3 min; 40.4 s.
            func span(_ seconds: Double) -> String {
                seconds >= 120 ? String(format: "%.1f min", seconds / 60) : String(format: "%.1f s", seconds)
            }
            let devices = Double(question.devices)
            let pacedLine = pace.map { pace in
                "  paced at               \(rate(pace)), 1% under it for the windows' edges (\(span(devices / pace))): "
                    + "fanout send --service fcm --rate \(Int(pace.rounded(.down)))"
                    + (quotaBinds ? " (a higher quota is Google's to grant)" : "")
            }
            if quotaBinds {
                lines.append(
                    "  the project's quota    \(rate(quota.rate)) (\(window)): it binds at a steady pace; "
                        + "\(grouped(Int(question.devices))) take \(span(devices / quota.rate)) at it, past the "
                        + "\(Self.spoken(question.deadline)) deadline"
                )
                lines += pacedLine.map { [$0] } ?? []
            } else if let pacedLine {
                lines += [
                    "  the project's quota    \(rate(quota.rate)) (\(window)): the deadline is within it, the "
                        + "connections flat out are not",
                    pacedLine,
                ]
            } else if question.devices <= UInt64(max(0, quota.messages)), requiredRate > quota.rate {
                lines.append(
                    "  the project's quota    \(rate(quota.rate)) (\(window)): does not bind, the fan-out fits one window"
                )
            } else {
                lines.append("  the project's quota    \(rate(quota.rate)) (\(window)): does not bind")
            }
        }
        lines += [
            "  a connection carries   \(rate(connectionCeiling)) at most: the least of",
            "    streams              \(rate(bounds.streams)) (\(question.streams) streams ÷ \(Self.spoken(roundTrip)))",
        ]
        if let window = bounds.connectionWindow, let back = flow.windowBackPerRoundTrip {
            lines.append(
                "    connection window    \(rate(window)) (\(grouped(Int(back.rounded()))) bytes back a round trip ÷ "
                    + "\(Self.spoken(question.roundTrip)) ÷ \(grouped(flow.bodyBytes))-byte bodies)"
            )
        }
        if let streamWindow = bounds.streamWindow {
            lines.append(
                "    stream window        \(rate(streamWindow)) (\(grouped(flow.bodyBytes))-byte bodies through "
                    + "\(grouped(flow.streamWindow ?? 0))-byte stream windows)"
            )
        }
        if let bandwidth = bounds.bandwidth, let path = flow.bandwidth {
            lines.append(
                "    bandwidth            \(rate(bandwidth)) (\(BandwidthNotation.format(bytesPerSecond: path)) ÷ "
                    + "\(grouped(Int(flow.wireBytes.rounded()))) wire bytes)"
            )
        }
        lines.append(
            "  a machine's interface  \(rate(bounds.networkInterface)) (\(BandwidthNotation.format(bytesPerSecond: flow.networkInterface)) ÷ \(grouped(Int(flow.wireBytes.rounded()))) wire bytes)"
        )
        if let coreCeiling {
            lines.append(
                "  a core sends           \(rate(coreCeiling)) (\(String(format: "%.2f", question.cpuMicroseconds!)) µs a notification)"
            )
        }
        lines.append(
            "  connections            \(connections) (at \(Int((question.headroom * 100).rounded()))% of a connection's ceiling)"
        )
        if let machines, cores == nil {
            lines.append(
                "  machines               \(machines) (for their network interfaces; the CPU is not known)"
            )
        }
        if let cores, let machines {
            lines.append("  sender cores           \(String(format: "%.1f", cores))")
            lines.append(
                "  machines               \(machines) (\(question.coresPerMachine) cores each)"
                    + (machines > 1
                        ? ": fanout send --shard i/\(machines) on each, \(Int((Double(connections) / Double(machines)).rounded(.up))) connections each"
                        : "")
            )
        }
        lines.append("  expected duration      \(String(format: "%.1f", expectedDuration.seconds)) s")
        lines.append("  binds                  \(binding.rawValue)")
        if let machineBinding {
            lines.append("  machines bound by      \(machineBinding.rawValue)")
        }
        lines.append("assuming:")
        lines += assumptions.map { "  - \($0)" }
        return lines.joined(separator: "\n")
    }
}
