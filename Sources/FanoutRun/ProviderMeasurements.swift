import FanoutAPNs
import FanoutAssembly
import FanoutDevices
import FanoutFiles
import FanoutInstrument
import FanoutNotation
import FanoutPush
import FanoutReport
import FanoutResults
import FanoutSink
import Foundation
import NIOConcurrencyHelpers
import NIOCore

/// `fanout sink --output DIR`: the folder, made ready before the sink listens so that an
/// unwritable one is said at once, and emptied of what this run wrote if it fails.
struct OutputFolder: Sendable {
    let path: String
    /// Whether this run made the folder (then `discard` removes it when empty).
    let created: Bool
    /// The folder checked and locked for this sink (`RunOutput`): a second sink or run into it
    /// is refused while this one lives.
    let lock: RunOutput

    /// Makes `path` (and its parents) if missing, checks that a file can be written in it,
    /// and locks it; a folder holding an earlier run's or sink's results is refused, as a run
    /// refuses it (it once replaced a run's summary.json with the sink's).
    init(prepare path: String) throws {
        let existed = FileManager.default.fileExists(atPath: path)
        lock = try RunOutput(preparing: path, earlierResults: .refuse)
        self.path = path
        created = !existed
    }

    /// Writes `report`'s files here and tells `reporter`; a failure removes what was written
    /// and says where.
    func write(_ report: SinkRunReport, telling reporter: any JobReporter) throws {
        do {
            try report.write(to: path)
        } catch {
            discard()
            throw JobError.cannotWrite(.optionValue("--output", path), error.reason)
        }
        reporter.report(.sinkWritten(summary: report.summaryText, folder: path))
    }

    /// Removes what this run writes there, and the folder if this run made it and it is empty.
    func discard() {
        let files = FileManager.default
        let names = RunSummary.files + [TriggerProcess.logName] + (created ? [RunOutput.lockName] : [])
        for name in names { try? files.removeItem(atPath: path + "/" + name) }
        if created, (try? files.contentsOfDirectory(atPath: path))?.isEmpty == true {
            try? files.removeItem(atPath: path)
        }
    }
}

/// `--trigger CMD`: a command run with `/bin/sh -c` once the sink listens — a `curl` to the
/// provider's broadcast API, or the provider itself. Its standard output and error go to
/// `trigger.log` in the folder; the sink stops it if it is still running when the sink stops:
/// SIGTERM, then SIGKILL after 2 s, to its process group (`ChildProcess`), so a provider the
/// shell started stops with it. Its environment names the port the sink listens on,
/// `FANOUT_SINK_PORT`, so a sink told `--listen HOST:0` can still be found.
final class TriggerProcess: Sendable {
    static let logName = "trigger.log"

    let command: String
    let logPath: String
    private let child: ChildProcess
    /// Whether it was still running when the sink stopped it.
    private let stopped = NIOLockedValueBox(false)

    /// `ended`: told once the command has ended (on another thread).
    init(command: String, log path: String, sinkPort: Int?, ended: (@Sendable () -> Void)? = nil) throws {
        self.command = command
        logPath = path
        guard FileManager.default.createFile(atPath: path, contents: nil) else {
            throw JobError.cannotWrite(.file(path), "the --trigger's output goes there")
        }
        var environment: [String: String]?
        if let sinkPort {
            environment = ProcessInfo.processInfo.environment
            environment?["FANOUT_SINK_PORT"] = String(sinkPort)
        }
        do {
            child = try ChildProcess(
                "/bin/sh",
                ["-c", command],
                output: path,
                environment: environment,
                ended: { _ in ended?() }
            )
        } catch {
            throw JobError.resource(.optionValue("--trigger", command), "it could not start: \(error.reason)")
        }
    }

    /// Its exit status (128 + the signal's number when a signal ended it); `nil` while it
    /// runs, and when the sink had to stop it.
    var exitStatus: Int? {
        if stopped.withLockedValue({ $0 }) { return nil }
        return child.termination.map { Int($0.status) }
    }

    /// Why the command could not start, once the shell said so (status 126: not executable;
    /// 127: not found), with the shell's words.
    var startFailure: String? {
        guard let status = exitStatus, status == 126 || status == 127 else { return nil }
        let said =
            (try? String(contentsOfFile: logPath, encoding: .utf8))?
            .split(separator: "\n").last.map(String.init) ?? ""
        return "--trigger \(command) could not start (exit \(status)): \(said)"
    }

    /// Lets it finish for up to `grace` (a provider run as the trigger reports its own figures
    /// as it ends), then stops its group: SIGTERM, and SIGKILL 2 s later.
    func stop(grace: Duration = .seconds(5)) {
        guard child.wait(upTo: grace) == nil else { return }
        stopped.withLockedValue { $0 = true }
        child.stop(grace: .seconds(2))
    }
}

/// What a sink measured of the provider, read once it has drained.
enum ProviderMeasurements {
    static func read(
        _ sink: Sink,
        listen: String,
        instrument: ProviderInstrument,
        job: SinkJob,
        settings: SinkJob.Instrument,
        endedBy: String,
        trigger: TriggerProcess?
    ) -> SinkRunReport.Measurements {
        let summary = sink.statistics.summary
        let totals = instrument.totals.snapshot
        let nowUptime = NIODeadline.now().uptimeNanoseconds
        let now = Date()
        let markUptime = instrument.startedAt
        let mark = markUptime.map { now.addingTimeInterval(-Double(nowUptime - min(nowUptime, $0)) / 1e9) }
        /// Seconds since the mark of an uptime (negative before it).
        func sinceMark(_ uptime: UInt64) -> Double {
            guard let markUptime else { return 0 }
            return (Double(uptime) - Double(markUptime)) / 1e9
        }
        let connections = connections(sink.statistics.connections, sinceMark: sinceMark)
        let card = instrument.card
        let checks = Self.checks(instrument, fleet: sink.fleet, sinceMark: sinceMark)
        let expected = instrument.expected
        let expect = job.ending.expect
        let reached =
            (expect.map { summary.accepted >= $0 } ?? true) && (expected.map(\.isComplete) ?? true)
        let wall = now.timeIntervalSince(sink.statistics.startedAt)
        let own = summary.ownDelays
        var measurements = SinkRunReport.Measurements(
            listen: listen,
            tls: job.tls != .none,
            tokenAuth: job.tokenKey != nil,
            started: sink.statistics.startedAt,
            mark: mark,
            markKind: instrument.startMark == .firstRequest ? "first-request" : "trigger",
            requests: summary.requests,
            accepted: summary.accepted,
            rejected: PushReason.counts(summary.rejected),
            retries: card.count(.permanentRetried) + card.count(.fastRetry),
            digest: summary.digest.description,
            deliveries: totals.deliveries,
            arrivals: totals.arrivals,
            firstAccepted: totals.firstAccepted,
            lastAccepted: totals.lastAccepted,
            streamLimit: Int(job.configuration.maxConcurrentStreams),
            initialStreams: Int(job.configuration.initialMaxConcurrentStreams),
            connections: connections,
            connectionsNotListed: sink.statistics.closedConnectionsDropped,
            card: .init(checks: checks, forgotten: card.forgotten + instrument.broadcasts.forgotten),
            sinkOwn: own.figures,
            sinkCPUSeconds: own.loopUtilisation.isEmpty ? nil : own.loopUtilisation.reduce(0, +) * wall,
            expected: .init(
                notifications: expect,
                tokens: expected?.count,
                tokensSeen: expected?.seen,
                reached: reached
            ),
            endedBy: endedBy,
            trigger: trigger.map {
                .init(command: $0.command, exitStatus: $0.exitStatus, output: TriggerProcess.logName)
            },
            planRTT: settings.planRTT,
            scenario: describe(job.configuration.scenario)
        )
        measurements.scenarioFile = job.configuration.scenario.file
        measurements.minMeasured = settings.minMeasured
        measurements.delivery = sink.fleet.map { DeliverySummary($0.snapshot()) }
        if let records = sink.broadcastRecords {
            (measurements.broadcast, measurements.broadcastRows) = BroadcastReading.read(records)
        }
        return measurements
    }

    /// The connections the sink kept, each with its share of the requests; times since the mark.
    static func connections(
        _ kept: [SinkConnectionSummary],
        sinceMark: (UInt64) -> Double
    ) -> [SummaryDocument.Provider.Connection] {
        let requests = max(1, kept.map(\.requests).reduce(0, +))
        return kept.map { connection in
            SummaryDocument.Provider.Connection(
                id: connection.id,
                peer: connection.peer,
                openedSeconds: sinceMark(connection.openedUptime),
                closedSeconds: connection.closedUptime.map(sinceMark),
                closedBy: connection.closedUptime == nil ? nil : connection.closedByProvider ? "provider" : "sink",
                requests: connection.requests,
                accepted: connection.accepted,
                share: Double(connection.requests) / Double(requests),
                peakStreams: connection.peakStreams,
                meanStreams: connection.meanStreams,
                busySeconds: Double(connection.busyNanoseconds) / 1e9,
                refusedStreams: connection.refusedStreams,
                busyFromSeconds: connection.busyFrom == 0 ? nil : sinceMark(connection.busyFrom),
                maybeUnread: connection.maybeUnread
            )
        }
    }

    /// The card's checks, each with its examples (times since the mark). The fleet's rules are
    /// on the card when the sink has devices: the fleet counted them as it decided each
    /// outcome, and is read now. The broadcast rules are on it once a channel or broadcast
    /// request came; the channels left open are those still open now.
    static func checks(
        _ instrument: ProviderInstrument,
        fleet: DeviceFleetShards?,
        sinceMark: (UInt64) -> Double
    ) -> [SummaryDocument.Provider.Card.Check] {
        let card = instrument.card
        let findings = fleet?.findings()
        let broadcasts = instrument.broadcasts
        let leftOpen = broadcasts.sawRequests ? broadcasts.leftOpen() : []
        let shown = ProviderRule.allCases.filter {
            $0.isShown(service: .apns, devices: findings != nil, broadcasts: broadcasts.sawRequests)
        }
        return shown.map { rule in
            var examples = rule.isFleet ? findings?.examples[rule] ?? [] : card.examples(rule)
            var count = rule.isFleet ? findings?.counts[rule] ?? 0 : card.count(rule)
            if rule == .channelsLeftOpen {
                count = leftOpen.count
                examples = leftOpen.prefix(ProviderCard.examplesPerRule).map {
                    .init(
                        token: "",
                        connection: $0.connection,
                        at: $0.createdAt,
                        detail: "channel \($0.id) never deleted"
                    )
                }
            }
            return SummaryDocument.Provider.Card.Check(
                rule: rule,
                service: .apns,
                count: count,
                examples: examples.map {
                    .init(
                        token: $0.token,
                        connection: $0.connection,
                        atSeconds: sinceMark($0.at),
                        detail: $0.detail,
                        apnsID: $0.apnsID
                    )
                }
            )
        }
    }

    /// The scenario's latency and errors in a line: `latency fixed:5ms; errors Unregistered 3%`
    /// (the latency as its option writes it: it read `fixed(0.005 seconds)`).
    static func describe(_ scenario: SinkScenario) -> String {
        var parts: [String] = []
        if let latency = scenario.latency { parts.append("latency \(latency.notation)") }
        if !scenario.errors.isEmpty {
            let errors = scenario.errors.map { "\($0.reason.rawValue) \(String(format: "%g", $0.probability * 100))%" }
            parts.append("errors " + errors.joined(separator: ", "))
        }
        return parts.joined(separator: "; ")
    }
}
