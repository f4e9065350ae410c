import FanoutAssembly
import FanoutClient
import FanoutFiles
import FanoutMachine
import FanoutNotation
import FanoutPayload
import FanoutPush
import FanoutReport
import FanoutResults
import FanoutScenarioTerms
import FanoutSink
import FanoutWire
import Foundation
import NIOCore

/// `fanout plan`: a `CapacityPlan` for the question, with the sender's CPU cost taken from a
/// run folder (`--cost`) or measured here (`--calibrate`), printed and written as `plan.json`.
public struct PlanJob: Sendable {
    public var question: CapacityPlan.Question
    /// Where the CPU cost comes from.
    public enum Cost: Sendable, Hashable {
        case unknown
        /// A run folder: its `summary.json`, or the median over its `repeat-*` folders.
        case runFolder(String)
        /// A run here, over TLS with token auth, as APNs requires.
        case calibrate(notifications: UInt64)
    }
    public var cost = Cost.unknown
    /// Where `plan.json` (and the rehearsal's run folder, `verify/`) go, if anywhere.
    public var output: String?
    /// Whether to rehearse the plan here: one machine's share of a per-token plan (`Verification`),
    /// or a broadcast plan's updates (`BroadcastVerification`).
    public var verify = false
    /// The devices behind APNs (`--device-…`): the plan then says when the fan-out reaches
    /// them (`DeviceReach`), not only when APNs has accepted it.
    public var devices: DeviceReach.Question?
    /// The return wave a fan-out sets off, and the backend's capacity (`WavePlan`), when asked.
    public var wave: WavePlan.Question?
    /// `--verify` with the wave's options and `--return-to`: the wave rehearsed, sampled, against
    /// that backend (`WaveVerification`) instead of the fan-out's share.
    public var waveRehearsal: WaveRehearsal?
    /// `--broadcast`: channels, their subscribers and the update interval; `question`'s devices
    /// and deadline are then the per-token fan-out of the same audience.
    public var broadcast: Broadcast?
    /// SIGINT, SIGTERM and SIGHUP while the job sends (a calibration, a rehearsal): the run
    /// going stops taking tokens, drains, and is written marked interrupted.
    public var stopSignals: StopSignals?
    /// Where the job's events go (the calibration beginning, the rehearsal's summary): by
    /// default nowhere.
    public var reporter: any JobReporter = SilentReporter()

    public init(question: CapacityPlan.Question) {
        self.question = question
    }

    /// The most notifications a calibration sends.
    public static let calibrationNotifications: UInt64 = 300_000
    /// The fewest: a steady figure needs some thousands of round trips' worth.
    static let fewestCalibrationNotifications: UInt64 = 20_000
    /// How long a calibration aims to send, at the planned connections' ceilings: its first
    /// `calibrationSettle` seconds settle, the rest are measured (`SteadyCost`).
    static let calibrationSeconds = 20.0
    /// The seconds a calibration's cost leaves out: a run's connections start together, so
    /// their answers come back together and cost less a notification until the round trips'
    /// jitter has spread them. Measured (`plan --devices 600000 --deadline 60s --rtt 100ms
    /// --streams 100 --calibrate --verify`, 15 × 100 streams): 6.8, 8.6 and 9.8 µs a
    /// notification in seconds 0–2, 13–16 in seconds 3–11, 16–17 from second 14 on.
    static let calibrationSettle = 5
    /// The most connections a calibration opens.
    static let mostCalibrationConnections = 64

    /// The spread of the processing the calibration and the rehearsal hold answers for: σ of a
    /// log-normal, as fixtures/scenarios/apns-80ms.scenario has it for a whole round trip (p99
    /// near 1.8 times the median), the shape of measured provider → APNs round trips.
    public static let roundTripSpread = 0.25

    /// APNs' processing as the sink's hold on each answer: log-normal with the planned
    /// processing as its *mean* (median = mean ÷ e^(σ²/2)), so that Little's law, which takes
    /// the mean, holds for the rehearsal as for the plan; `nil` for none. The round trip itself
    /// is the wire's (`putOnTheWire`).
    public static func processing(_ question: CapacityPlan.Question) -> LatencyDistribution? {
        let mean = question.processing.seconds
        guard mean > 0 else { return nil }
        let median = mean / exp(roundTripSpread * roundTripSpread / 2)
        return .logNormal(median: .nanoseconds(Int64((median * 1e9).rounded())), sigma: roundTripSpread)
    }

    /// The planned round trip plus processing, in seconds: the wire's and the hold's means.
    static func meanRoundTrip(_ question: CapacityPlan.Question) -> Double {
        (question.roundTrip + question.processing).seconds
    }

    /// `a 50 ms wire, processing log-normal of mean 5 ms (σ 0.25)`: the calibration's and the
    /// rehearsal's regime (`putOnTheWire`).
    static func spokenWire(_ question: CapacityPlan.Question) -> String {
        let wire = (question.roundTrip.seconds * 1e6).rounded() / 1e3
        let processing = (question.processing.seconds * 1e6).rounded() / 1e3
        // "an 80 ms", "an 11 ms", "an 18 ms": as the number is said.
        let said = String(format: "%g", wire)
        let article = said.hasPrefix("8") || said.hasPrefix("11") || said.hasPrefix("18") ? "an" : "a"
        return "\(article) \(String(format: "%g", wire)) ms wire, processing log-normal of mean "
            + "\(String(format: "%g", processing)) ms (σ \(roundTripSpread))"
    }

    /// The calibration: the plan's regime on this machine — its streams a connection, its
    /// round trips with APNs-like jitter (`roundTrips`), as many connections as the plan needs
    /// before the CPU is known (at most `mostCalibrationConnections`), for about
    /// `calibrationSeconds` at their ceilings. CPU per notification depends on how many answers
    /// arrive together, which a run flat out against a sink answering at once does not show
    /// (1.3–3.8 µs there against 2.9–13 µs in a rehearsal, measured when this came in).
    static func calibration(for question: CapacityPlan.Question, notifications: UInt64) throws -> RunJob {
        var roundTripBound = question
        roundTripBound.cpuMicroseconds = nil
        let plan = CapacityPlan(roundTripBound)
        let connections = min(plan.connections, mostCalibrationConnections)
        let aimed = UInt64(max(0, Int(saturating: Double(connections) * plan.connectionCeiling * calibrationSeconds)))
        var job = RunJob()
        job.count = min(notifications, max(fewestCalibrationNotifications, aimed))
        job.shape.connections = connections
        job.shape.streamsPerConnection = question.streams
        // The rehearsal's regime: how answers arrive (a wire's chunks, APNs' processing spread
        // over them) sets what a notification costs the sender.
        try putOnTheWire(&job, plan: plan)
        return job
    }

    public func run() throws -> CapacityPlan {
        let plan = CapacityPlan(try costed())
        if let output {
            try Self.write(document(plan, verification: verify ? .init(status: .running) : nil), to: output)
        }
        return plan
    }

    /// plan.json's document for `plan`, with its reach and `verification`.
    public func document(_ plan: CapacityPlan, verification: PlanDocument.Verification?) -> PlanDocument {
        var document = plan.document
        document.reach = reach(for: plan)?.document
        document.wave = wave(for: plan)?.document
        document.verification = verification
        return document
    }

    /// The plan's file, under `output`.
    public static let fileName = "plan.json"

    /// The rehearsal's run folder, under `output`.
    static let rehearsalFolder = "verify"

    /// Writes `document` again as plan.json with how its rehearsal ended: `nil` when it was
    /// verified or not (`verdict`), a signal when one stopped it, an error when it could not run.
    public func record(
        _ document: PlanDocument,
        verdict: (any RehearsalVerdict)?,
        stoppedBy signal: StopSignal?,
        error: (any Error)? = nil
    ) throws {
        guard let output else { return }
        var document = document
        let folder =
            FileManager.default.fileExists(atPath: output + "/" + Self.rehearsalFolder)
            ? Self.rehearsalFolder : nil
        document.verification =
            if let signal {
                .init(status: .interrupted, signal: signal.name, folder: folder)
            } else if let verdict {
                .init(
                    status: verdict.passed ? .verified : .notVerified,
                    folder: folder,
                    detail: verdict.text.split(separator: "\n").last.map(String.init)
                )
            } else {
                .init(status: .failed, folder: folder, detail: error.map { "\($0)" })
            }
        try Self.write(document, to: output)
    }

    /// Writes a campaign's plan (`fanout plan --fleet`) as fleet-plan.json under `output`.
    public static func write(_ document: FleetPlanDocument, to output: String) throws {
        do {
            try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
            try JSONDocument.data(document).write(
                to: URL(fileURLWithPath: output + "/" + FleetPlanDocument.fileName),
                options: .atomic
            )
        } catch {
            throw JobError.cannotWrite(.file("\(output)/\(FleetPlanDocument.fileName)"), error.reason)
        }
    }

    static func write(_ document: PlanDocument, to output: String) throws {
        do {
            try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
            // Atomically: plan.json is written again when a rehearsal ends, and a reader (a gate, a
            // person) never sees half of it.
            try JSONDocument.data(document).write(to: URL(fileURLWithPath: output + "/" + fileName), options: .atomic)
        } catch {
            throw JobError.cannotWrite(.file("\(output)/\(fileName)"), error.reason)
        }
    }

    /// Hands an engine the job started to `stopSignals`.
    func following(_ engine: LoadEngine) {
        stopSignals?.onStop { engine.interrupt(by: $0) }
    }

    /// The question with the sender's CPU cost from `cost` (a run folder's, or calibrated here).
    func costed() throws -> CapacityPlan.Question {
        var question = question
        switch cost {
        case .unknown:
            break
        case .runFolder(let folder):
            let (cost, flatOut) = try Self.senderCost(in: folder)
            question.cpuMicroseconds = cost
            question.cpuSource = "measured by the \(flatOut ? "flat-out " : "")run in \(folder)"
            if flatOut { reporter.report(.costFromFlatOut(folder: folder)) }
        case .calibrate(let notifications):
            var job = try Self.calibration(for: question, notifications: notifications)
            job.apnsSecurity = true
            reporter.report(
                .calibrating(
                    Calibration(
                        notifications: job.tokenCount,
                        connections: job.shape.connections,
                        streams: question.streams,
                        wire: Self.spokenWire(question)
                    )
                )
            )
            let summary = try job.run(started: following)
            if let signal = stopSignals?.received {
                throw JobError.outcome(.part("the calibration"), "interrupted by \(signal.name): no plan was made")
            }
            guard summary.reconciliation?.agrees == true, summary.report.snapshot.failed.isEmpty,
                let whole = RunSummary.microsecondsPerNotification(
                    summary.report.senderCPU,
                    sent: summary.report.snapshot.sent
                )
            else {
                throw JobError(
                    .outcome,
                    at: .part("the calibration run"),
                    .invalidRun(
                        summary.invalidReasons,
                        consequence: "it did not complete cleanly, so its cost stands for nothing"
                    )
                )
            }
            let steady = SteadyCost(summary.report.snapshot.intervals, settle: Self.calibrationSettle)
            question.cpuMicroseconds = steady?.microseconds ?? whole
            question.cpuSource =
                "calibrated here over TLS with token auth, \(job.tokenCount) notifications over "
                + "\(job.shape.connections) × \(question.streams) streams, \(Self.spokenWire(question)); "
                + (steady.map(\.spoken) ?? "the whole run (too short to leave its first seconds out)")
        }
        return question
    }

    /// When `plan`'s fan-out reaches the devices, if the job has them: APNs accepts it over the
    /// plan's expected duration.
    /// The return wave of `plan`'s fan-out, when asked (`WavePlan`).
    public func wave(for plan: CapacityPlan) -> WavePlan? {
        wave.map {
            WavePlan(
                $0,
                devices: plan.question.devices,
                fanOutSeconds: plan.expectedDuration.seconds,
                deadlineSeconds: plan.question.deadline.seconds
            )
        }
    }

    public func reach(for plan: CapacityPlan) -> DeviceReach? {
        devices.map { DeviceReach($0, acceptedSeconds: plan.expectedDuration.seconds) }
    }

    /// The body a template renders for a 64-digit token (FCM: a send for a registration token
    /// of 163 characters), in bytes: the flow-controlled bytes a notification of it costs.
    public static func bodyBytes(template path: String, service: PushService = .apns) throws -> Int {
        let template: PayloadTemplate
        do {
            template =
                service == .fcm ? try PayloadTemplate(fcmSendContentsOf: path) : try PayloadTemplate(contentsOf: path)
        } catch {
            throw JobError.input(.command, "\(error)")
        }
        return try bodyBytes(template)
    }

    /// The registration token an FCM plan's body is rendered for: 163 characters, the length
    /// Firebase's tokens commonly have (`CapacityPlan.Flow.defaultFCMBodyBytes`).
    static let plannedFCMToken = "fanout-plan-" + String(repeating: "x", count: 163 - 12)

    static func bodyBytes(_ template: PayloadTemplate) throws -> Int {
        var buffer = ByteBufferAllocator().buffer(capacity: template.sizeLimit + 256)
        let fcm = if case .fcmSend = template.document { true } else { false }
        do {
            return try PayloadEncoder(template: template, oversizePolicy: .send).encode(
                token: fcm ? plannedFCMToken : String(repeating: "ab", count: 32),
                sequence: 0,
                fields: [],
                into: &buffer
            )
        } catch {
            throw JobError.input(
                .option("--template"),
                "it cannot be rendered for a \(fcm ? "163-character" : "64-digit") token: \(error)"
            )
        }
    }

    /// A template whose body is exactly `bytes` long (an alert padded with spaces), for a
    /// rehearsal of a plan given `--body-bytes` (at least 20 bytes: the JSON around the alert).
    static func template(ofBodyBytes bytes: Int) throws -> PayloadTemplate {
        let skeleton = #"{"aps":{"alert":""}}"#
        let padding = max(0, bytes - skeleton.utf8.count)
        let json = #"{"aps":{"alert":""# + String(repeating: "a", count: padding) + #""}}"#
        var options = PayloadTemplate.Options()
        options.sizeLimit = max(options.effectiveSizeLimit, json.utf8.count)
        do {
            return try PayloadTemplate(json: Array(json.utf8), file: "<\(bytes)-byte body>", options: options)
        } catch {
            throw JobError.outcome(
                .optionValue("--body-bytes", "\(bytes)"),
                "no rehearsal template of that size: \(error)"
            )
        }
    }

    /// The sender's CPU µs per notification in a run folder (the median over repeats), and
    /// whether a run was flat out (the closed model).
    static func senderCost(in folder: String) throws -> (cost: Double, flatOut: Bool) {
        // A cost from a run that measured nothing (no answers, interrupted, …) is the cost of
        // something else: 562 µs a notification from a run that never reached its endpoint.
        let run: RunSet
        do { run = try RunSet.load(folder) } catch { throw JobError.input(.option("--cost"), "\(error)") }
        guard run.valid else {
            throw JobError(
                .input,
                at: .optionValue("--cost", folder),
                .invalidRun(
                    run.invalidReasons,
                    consequence: "its CPU per notification stands for nothing; measure a valid run, or --calibrate"
                )
            )
        }
        let manager = FileManager.default
        var files = [folder + "/summary.json"]
        if !manager.fileExists(atPath: files[0]) {
            let repeats = (try? manager.contentsOfDirectory(atPath: folder)) ?? []
            files = repeats.filter { $0.hasPrefix("repeat-") }.sorted().map { "\(folder)/\($0)/summary.json" }
        }
        guard !files.isEmpty else {
            throw JobError.holdsNo(.optionValue("--cost", folder), "summary.json (nor repeat-*/summary.json)")
        }
        var flatOut = false
        let costs = try files.map { file -> Double in
            let summary: SummaryDocument
            do { summary = try SummaryDocument.read(file) } catch {
                throw JobError.input(.option("--cost"), "\(error)")
            }
            guard let cost = summary.cpu?.senderPerNotification, cost > 0 else {
                throw JobError.holdsNo(
                    .optionValue("--cost", file),
                    "sender CPU per notification (cpu, summary version 3 and later)"
                )
            }
            if summary.model == .closed { flatOut = true }
            return cost
        }
        return (costs.sorted()[costs.count / 2], flatOut)
    }
}

extension PlanJob {
    /// Sets the embedded sink as the plan has APNs: the planned round trip on a wire in front of
    /// it (every byte each way waits half of it: WINDOW_UPDATEs take the round trip as they
    /// would), APNs' processing as its hold on each answer (log-normal of that mean, as
    /// `roundTrips` has the whole), the windows, refill and bandwidth the plan assumed, the
    /// streams it allows, and a body of the plan's size.
    static func putOnTheWire(_ job: inout RunJob, plan: CapacityPlan) throws {
        let question = plan.question
        let flow = question.flow
        job.sink.scenario.wire = SinkWire(roundTrip: .fixed(question.roundTrip), bandwidth: flow.bandwidth)
        job.sink.scenario.latency = processing(question)
        if let window = flow.connectionWindow { job.sink.scenario.windows.connection = UInt32(window) }
        if let window = flow.streamWindow { job.sink.scenario.windows.stream = UInt32(window) }
        switch flow.refill {
        case .half: job.sink.scenario.windows.refill = .half
        case .eachFrame: job.sink.scenario.windows.refill = .eachFrame
        case .threshold:
            throw JobError.option(
                .option("--verify"),
                "the sink refills at half or after each frame; a rehearsal of a refill once "
                    + "\(flow.refillThreshold ?? 0) bytes are consumed cannot be run here"
            )
        }
        // The sink allows what the plan assumes APNs allows.
        job.sink.maxConcurrentStreams = UInt32(clamping: question.streams)
        if let template = flow.templatePath {
            job.template = try PayloadTemplate(contentsOf: template)
        } else if flow.bodyBytes != CapacityPlan.Flow.defaultBodyBytes {
            // The run's own notification (the poll) is the default's size; another size is sent
            // as an alert of that size.
            job.template = try template(ofBodyBytes: flow.bodyBytes)
        }
        if let template = job.template, try bodyBytes(template) != flow.bodyBytes {
            throw JobError.outcome(.part("the rehearsal"), "its body is not the plan's \(flow.bodyBytes) bytes")
        }
        do {
            try job.sink.scenario.validate()
        } catch {
            throw JobError.resource(.part("the rehearsal's wire"), "it cannot be run: \(error)")
        }
    }

    /// Rehearses one machine's share of `plan` (see `Verification`); its run folder goes to
    /// `output/verify` when there is an output.
    public func rehearse(_ plan: CapacityPlan) throws -> Verification {
        if plan.question.service == .fcm { return try rehearseFCM(plan) }
        let machines = UInt64(max(1, plan.machines ?? 1))
        // Rounded up without a sum that can overflow: a plan's figures come from the options.
        let devices = plan.question.devices == 0 ? 0 : (plan.question.devices - 1) / machines + 1
        let connections = (max(1, plan.connections) - 1) / Int(machines) + 1
        do {
            try MachineLimits.current().connections("the rehearsal's connections", filesEach: 2, eventLoops: 2)
                .check(connections)
        } catch {
            throw JobError.resource(.part("one machine's share"), "it cannot be rehearsed here: \(error)")
        }
        var job = RunJob()
        job.count = devices
        job.apnsSecurity = true
        job.shape.connections = connections
        job.shape.streamsPerConnection = plan.question.streams
        try Self.putOnTheWire(&job, plan: plan)
        let roundTrip = Self.meanRoundTrip(plan.question)
        let ceiling = min(plan.connectionCeiling, plan.coreCeiling ?? .infinity)
        let predictedSeconds = Double(devices) / (Double(connections) * ceiling) + roundTrip
        // A bound on the rehearsal: three times the prediction.
        job.shape.deadline = .nanoseconds(Int(saturating: predictedSeconds * 3e9 + 1e10))
        let summary = try job.run(started: following)
        if let output { _ = try summary.finish(into: output + "/" + Self.rehearsalFolder, reporter: reporter) }
        let snapshot = summary.report.snapshot
        let elapsed = summary.report.elapsed.seconds
        return Verification(
            devices: devices,
            connections: connections,
            predictedPerConnection: Double(devices) / predictedSeconds / Double(connections),
            measuredPerConnection: Double(snapshot.sent) / elapsed / Double(connections),
            predictedDuration: .nanoseconds(Int64(predictedSeconds * 1e9)),
            measuredDuration: summary.report.elapsed,
            // The cores the share's rate needs at the measured cost, without the headroom.
            predictedCores: plan.question.cpuMicroseconds.map { Double(devices) / predictedSeconds * $0 / 1e6 },
            measuredCores: summary.report.senderCPU.seconds / elapsed,
            complete: snapshot.accepted == devices && summary.reconciliation?.agrees == true
        )
    }
}

extension PlanJob {
    /// What `fanout plan --probe FILE` takes from a probe: the round trip (a PING's median),
    /// the server's processing (requests' median less it), the streams after the first
    /// accepted request, and words that name them for the plan's assumptions.
    public struct ProbeFigures: Sendable, Hashable {
        public var roundTrip: Duration
        public var processing: Duration
        public var streams: Int
        public var source: String
        /// The windows, refill and bytes the probe saw (schema 2), as the plan takes them; the
        /// defaults' with their "not known" sources for a probe of schema 1.
        public var flow = CapacityPlan.Flow()
    }

    public static func probeFigures(_ path: String) throws -> ProbeFigures {
        let probe: ProbeDocument
        do {
            probe = try ProbeDocument.load(path)
        } catch {
            throw JobError.input(.option("--probe"), "\(error)")
        }
        guard let ping = probe.pingRoundTrip, let processing = probe.processing else {
            throw JobError.holdsNo(
                .optionValue("--probe", path),
                "request round trips: probe with --tokens FILE of real device tokens"
            )
        }
        guard let after = probe.settings.afterFirstAccepted else {
            throw JobError.input(
                .optionValue("--probe", path),
                "no request was accepted, so the streams a connection gets after one are not known"
            )
        }
        func duration(_ milliseconds: Double) -> Duration {
            .nanoseconds(Int64((max(0, milliseconds) * 1e6).rounded()))
        }
        let streams = after.maxConcurrentStreams ?? CapacityPlan.Question.defaultStreams
        let first = probe.streams.first.map(String.init) ?? "unlimited"
        let announced = after.maxConcurrentStreams.map(String.init) ?? "unlimited, taken as \(streams)"
        var figures = ProbeFigures(
            roundTrip: duration(ping.p50),
            processing: duration(processing.p50),
            streams: streams,
            source: "fanout probe of \(probe.endpoint) at \(TimeNotation.format(probe.started)) (\(path): PING p50 "
                + String(format: "%.2f", ping.p50) + " ms, processing p50 " + String(format: "%.2f", processing.p50)
                + " ms, streams \(first) then \(announced))"
        )
        figures.flow = try flow(of: probe, path: path)
        return figures
    }

    /// The windows, refill and bytes of a probe (schema 2) for the plan: the connection window
    /// the server granted, its stream window, the refill rule it showed, and the HEADERS and body
    /// bytes of the probe's notification, each named as the probe's.
    static func flow(of probe: ProbeDocument, path: String) throws -> CapacityPlan.Flow {
        var flow = CapacityPlan.Flow()
        flow.tls = probe.tls != nil
        let named = "probe \(path)"
        if let window = probe.window {
            guard window.stream > 0 else {
                throw JobError.input(
                    .optionValue("--probe", path),
                    "the server's stream window is 0: no body can be sent"
                )
            }
            flow.connectionWindow = window.connectionGranted
            flow.sources.connectionWindow = named
            flow.streamWindow = window.stream
            flow.sources.streamWindow = named
            if let refill = window.refill {
                switch refill.kind {
                case "half", "none-needed":
                    flow.refill = .half
                    flow.sources.refill =
                        refill.kind == "half"
                        ? "\(named): updates once half was consumed"
                        : "\(named): never half consumed, taken as nghttp2's rule"
                case "each-frame":
                    flow.refill = .eachFrame
                    flow.sources.refill = "\(named): an update a DATA frame"
                case "threshold":
                    flow.refill = .threshold
                    flow.refillThreshold = refill.smallestIncrement
                    flow.sources.refill = "\(named): updates of \(refill.smallestIncrement ?? 0) bytes or more"
                default:
                    throw JobError.input(
                        .optionValue("--probe", path),
                        "the server did not give its connection window back (refill "
                            + "\(refill.kind)): a connection would carry one window of bodies and stop"
                    )
                }
            }
        }
        if let wire = probe.wire {
            flow.bodyBytes = wire.dataBytes
            flow.sources.bodyBytes = "\(named)'s notification"
            flow.headerBytes = wire.headersBytes
            flow.sources.headerBytes = "\(named), HPACK in steady state"
        }
        if let measured = probe.flow, let rate = measured.ratePerSecond {
            flow.sources.connectionWindow += String(
                format: "; its flow test carried %.0f/s on one connection, bound by %@",
                rate,
                measured.bound
            )
        }
        return flow
    }
}
