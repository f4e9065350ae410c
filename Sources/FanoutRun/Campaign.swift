import FanoutAssembly
import FanoutClient
import FanoutNotation
import FanoutPush
import FanoutResults
import FanoutReturn
import Foundation
import Histogram
import NIOConcurrencyHelpers

/// One campaign across push services: its halves sent together, each on a thread of its own,
/// each into its run folder, and `campaign.json` for the whole. `fanout run --fleet`
/// (`CampaignJob`, both sinks embedded) and `fanout send --fcm-endpoint` (`CampaignSendJob`,
/// a labelled token set to two endpoints) are its two callers:
///
/// ```
///   half (apns) ──► its engine ──► apns/ (summary.json, latency.hgrm…) ─┐
///   half (fcm)  ──► its engine ──► fcm/                                 ├─► campaign.json
///   the first stop signal stops both engines                            ┘   per service and whole
/// ```
enum Campaign {
    /// One service's half: how many devices it has when that is known ahead (a fleet's draw),
    /// and the run that sends it, handing its engine (and its return wave, when it sends one)
    /// to the campaign's `Engines` as they start.
    struct Half: Sendable {
        var service: PushService
        var devices: UInt64?
        var run: @Sendable (_ engines: Engines) throws -> RunSummary

        init(
            service: PushService,
            devices: UInt64?,
            run: @escaping @Sendable (_ engines: Engines) throws -> RunSummary
        ) {
            self.service = service
            self.devices = devices
            self.run = run
        }
    }

    /// Runs `campaign` (which makes the document and the status) with stop signals watched and
    /// `directory` checked and locked before any traffic; writes `campaign.json` and reports it.
    static func run(
        into directory: String,
        reporter: any JobReporter,
        _ campaign: (StopSignals) throws -> (CampaignDocument, RunStatus)
    ) throws -> RunStatus {
        try StopSignals.watch { signals in
            let output = try RunOutput(preparing: directory)
            return try withExtendedLifetime(output) {
                let (document, status) = try campaign(signals)
                try write(document, to: directory)
                let files = [CampaignDocument.fileName] + document.services.map { $0.folder + "/" }
                reporter.report(.campaign(lines: lines(document), folder: directory, files: files))
                return status
            }
        }
    }

    /// Sends `halves` together; writes each one's folder (`directory/apns`, `directory/fcm`)
    /// and makes the campaign's document. `fleet`: the shares asked for, or `nil` for the shares
    /// the halves turned out to have (a token set's). A half that could not run ends the
    /// campaign with its error, the others' folders written.
    static func run(
        _ halves: [Half],
        fleet: [String: Double]?,
        into directory: String,
        signals: StopSignals?,
        reporter: any JobReporter
    ) throws -> (CampaignDocument, RunStatus) {
        // One stop action for both engines (`onStop` keeps one action): each engine joins it as
        // it starts, and one that starts after the signal is stopped at once.
        let engines = Engines()
        signals?.onStop { engines.stop(by: $0) }
        let results = NIOLockedValueBox([PushService: Result<RunSummary, any Error>]())
        let group = DispatchGroup()
        // A thread each, started now: a half blocks its thread for the whole run, and Dispatch's
        // global queue, one thread a core, started the second half a second late (measured:
        // the FCM half began 1.0 s after the APNs half, which had ended at 0.6 s).
        for half in halves {
            group.enter()
            Thread {
                // The half runs outside the lock: the other half runs beside it.
                let result = Result { try half.run(engines) }
                // A half that could not run ends the campaign: the other is cancelled, not
                // left to send its whole set for a campaign that has already failed.
                if case .failure = result { engines.cancel() }
                results.withLockedValue { $0[half.service] = result }
                group.leave()
            }.start()
        }
        group.wait()
        var parts: [(half: Half, summary: RunSummary)] = []
        var failure: (any Error)?
        for half in halves {
            switch results.withLockedValue({ $0[half.service] }) {
            case .success(let summary): parts.append((half, summary))
            case .failure(let error): failure = failure ?? error
            case nil: break
            }
        }
        if let failure {
            for (half, summary) in parts {
                _ = try? summary.finish(into: directory + "/" + half.service.rawValue, reporter: reporter)
            }
            throw failure
        }
        // The campaign begins with the first half's start (each half's own set-up before it).
        let start = parts.map(\.summary.report.started).min() ?? Date()
        var status = RunStatus.clean
        var services: [CampaignDocument.Half] = []
        for (half, summary) in parts {
            status = max(status, try summary.finish(into: directory + "/" + half.service.rawValue, reporter: reporter))
            services.append(Self.half(half, summary, start: start))
        }
        var latencies = parts.first?.summary.report.snapshot.latency
        for part in parts.dropFirst() { latencies?.add(part.summary.report.snapshot.latency) }
        let devices = services.reduce(0) { $0 + $1.devices }
        let reconciled = services.map(\.reconciled)
        let document = CampaignDocument(
            fleet: fleet
                ?? Dictionary(
                    services.map { ($0.service.rawValue, Double($0.devices) / Double(max(1, devices))) },
                    uniquingKeysWith: +
                ),
            services: services,
            campaign: CampaignDocument.Whole(
                devices: devices,
                accepted: services.reduce(0) { $0 + $1.accepted },
                rejected: services.reduce(0) { $0 + $1.rejected.values.reduce(0, +) },
                failed: services.reduce(0) { $0 + $1.failed },
                // Known only when every half's is: a half sent to an endpoint elsewhere has none.
                reconciled: reconciled.contains(nil) ? nil : reconciled.allSatisfy { $0 == true },
                seconds: services.map(\.seconds).max() ?? 0,
                latencyMilliseconds: latencies.flatMap(latency)
            )
        )
        return (document, status)
    }

    static func latency(_ histogram: Histogram<UInt64>) -> CampaignDocument.Latency? {
        guard histogram.totalCount > 0 else { return nil }
        return CampaignDocument.Latency(
            p50: Double(histogram.valueAtPercentile(50)) / 1000,
            p99: Double(histogram.valueAtPercentile(99)) / 1000,
            max: Double(histogram.max) / 1000
        )
    }

    /// A half's line in the document: its devices (known ahead, else the tokens its reader
    /// handed out), outcomes, reconciliation (with an embedded sink), and times from `start`.
    static func half(_ half: Half, _ summary: RunSummary, start: Date) -> CampaignDocument.Half {
        let snapshot = summary.report.snapshot
        let began = summary.report.started.timeIntervalSince(start)
        return CampaignDocument.Half(
            service: half.service,
            folder: half.service.rawValue,
            devices: half.devices ?? summary.report.tokens?.tokens ?? UInt64(snapshot.sent),
            sent: snapshot.sent,
            accepted: snapshot.accepted,
            rejected: snapshot.rejected,
            failed: snapshot.failed.values.reduce(0, +),
            reconciled: summary.reconciliation.map(\.agrees),
            started: max(0, began),
            seconds: max(0, began) + summary.report.elapsed.seconds,
            latencyMilliseconds: latency(snapshot.latency)
        )
    }

    static func write(_ document: CampaignDocument, to directory: String) throws {
        do {
            try JSONDocument.data(document).write(
                to: URL(fileURLWithPath: directory + "/" + CampaignDocument.fileName),
                options: .atomic
            )
        } catch {
            throw JobError.cannotWrite(.file("\(directory)/\(CampaignDocument.fileName)"), error.reason)
        }
    }

    /// The campaign for a terminal: a line for the whole and one a service.
    static func lines(_ document: CampaignDocument) -> [String] {
        func latency(_ value: CampaignDocument.Latency?) -> String {
            value.map { String(format: "p50 %.2f ms, p99 %.2f ms", $0.p50, $0.p99) } ?? "no latency"
        }
        func reconciliation(_ reconciled: Bool?) -> String {
            switch reconciled {
            case true?: "reconciled with its sink"
            case false?: "NOT reconciled with its sink"
            case nil: "its endpoint's counts unseen"
            }
        }
        var lines = document.services.map { half in
            let share = ShareNotation.percent(Double(half.devices) / Double(max(1, document.campaign.devices)))
            return
                "  \(half.service.rawValue.padding(toLength: 5, withPad: " ", startingAt: 0))\(half.devices.grouped) devices (\(share)): "
                + "\(half.accepted.grouped) accepted, \(half.rejected.values.reduce(0, +).grouped) rejected, "
                + "\(half.failed.grouped) failed in \(String(format: "%.2f", half.seconds)) s, \(latency(half.latencyMilliseconds)); "
                + reconciliation(half.reconciled)
                // A token set with none of a service's lines: said, not left to a zero.
                + (half.devices == 0 ? "; the token set held none of its lines" : "")
        }
        let whole = document.campaign
        lines.insert(
            "campaign: \(whole.devices.grouped) devices, the last of either service answered after "
                + "\(String(format: "%.2f", whole.seconds)) s, \(latency(whole.latencyMilliseconds))"
                + (whole.reconciled == false ? "; NOT every half reconciled" : ""),
            at: 0
        )
        // A rehearsal says so first, as a run's report does.
        if let sample = document.sample { lines.insert("SCALED REHEARSAL: " + sample.headline, at: 0) }
        return lines
    }

    /// The engines of a campaign's halves, stopped together by the first stop signal, or
    /// cancelled when a half fails: an engine added after either is stopped as it is added.
    /// The return wave's wait for what is still due (`ReturnWaveJob.finish`) ends with them.
    final class Engines: Sendable {
        private let state = NIOLockedValueBox(
            (engines: [LoadEngine](), waves: [ReturnWave](), signal: StopSignal?.none, cancelled: false)
        )

        func add(_ wave: ReturnWave) {
            let stopped = state.withLockedValue { state in
                state.waves.append(wave)
                return state.signal != nil || state.cancelled
            }
            if stopped { wave.interrupt() }
        }

        func add(_ engine: LoadEngine) {
            let (signal, cancelled) = state.withLockedValue { state in
                state.engines.append(engine)
                return (state.signal, state.cancelled)
            }
            if cancelled {
                engine.cancel()
            } else if let signal {
                engine.interrupt(by: signal)
            }
        }

        /// A half failed: every engine stops, what is in flight failing as cancelled.
        func cancel() {
            let (engines, waves) = state.withLockedValue { state in
                state.cancelled = true
                return (state.engines, state.waves)
            }
            for engine in engines { engine.cancel() }
            for wave in waves { wave.interrupt() }
        }

        func stop(by signal: StopSignal) {
            let (engines, waves) = state.withLockedValue { state in
                state.signal = state.signal ?? signal
                return (state.engines, state.waves)
            }
            for engine in engines { engine.interrupt(by: signal) }
            for wave in waves { wave.interrupt() }
        }
    }
}
