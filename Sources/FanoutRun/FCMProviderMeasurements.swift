import FanoutAssembly
import FanoutFCM
import FanoutFCMSink
import FanoutInstrument
import FanoutMeasure
import FanoutPush
import FanoutResults
import Foundation
import NIOCore

/// What an FCM sink measured of the provider (`fanout sink --service fcm --output DIR`), read
/// once it has drained: the same figures an APNs sink's folder has, from the FCM sink's counts,
/// its connections' rows and its card.
///
/// ```
///   sent      sends (every request but the token endpoint's)
///   accepted  answered 200 (delivered, validated, held)
///   rejected  by FCM's errorCode, as the sender counts them (a 401, another project's 403 and
///             a method's 404 carry none: they are in sent, not in rejected)
/// ```
enum FCMProviderMeasurements {
    static func read(
        _ sink: FCMSink,
        listen: String,
        started: Date,
        job: FCMSinkJob,
        settings: SinkJob.Instrument,
        endedBy: String,
        trigger: TriggerProcess? = nil
    ) -> SinkRunReport.Measurements? {
        let service = sink.service
        guard let instrument = service.instrument, let checks = service.cardChecks else { return nil }
        let statistics = service.statistics
        let totals = instrument.totals.snapshot
        let nowUptime = NIODeadline.now().uptimeNanoseconds
        let now = Date()
        let markUptime = instrument.startedAt
        let mark = markUptime.map { now.addingTimeInterval(-Double(nowUptime - min(nowUptime, $0)) / 1e9) }
        func sinceMark(_ uptime: UInt64) -> Double {
            guard let markUptime else { return 0 }
            return (Double(uptime) - Double(markUptime)) / 1e9
        }
        let (rows, dropped) = service.connectionRows.snapshot
        let card = instrument.card
        var measurements = SinkRunReport.Measurements(
            listen: listen,
            tls: job.tls != .none,
            tokenAuth: job.configuration.authentication == .serviceAccount,
            started: started,
            mark: mark,
            markKind: instrument.startMark == .firstRequest ? "first-request" : "trigger",
            requests: service.clientErrors.sends,
            accepted: statistics[.delivered] + statistics[.validated] + statistics[.held],
            rejected: statistics.rejected,
            retries: card.count(.permanentRetried) + card.count(.fastRetry),
            digest: statistics.digest.description,
            deliveries: totals.deliveries,
            arrivals: totals.arrivals,
            firstAccepted: totals.firstAccepted,
            lastAccepted: totals.lastAccepted,
            streamLimit: Int(job.configuration.maxConcurrentStreams),
            initialStreams: Int(job.configuration.maxConcurrentStreams),
            connections: connections(rows, sinceMark: sinceMark),
            connectionsNotListed: dropped,
            card: .init(
                checks: checks.map { check in
                    SummaryDocument.Provider.Card.Check(
                        rule: check.rule,
                        service: .fcm,
                        count: check.count,
                        examples: check.examples.map {
                            .init(
                                token: $0.token,
                                connection: $0.connection,
                                atSeconds: sinceMark($0.at),
                                detail: $0.detail
                            )
                        }
                    )
                },
                forgotten: card.forgotten
            ),
            sinkOwn: SinkOwnDelays().figures,
            sinkCPUSeconds: nil,
            expected: .init(
                notifications: job.ending.expect,
                tokens: instrument.expected?.count,
                tokensSeen: instrument.expected?.seen,
                reached: (job.ending.expect.map { statistics.acceptedCount >= $0 } ?? true)
                    && (instrument.expected.map(\.isComplete) ?? true)
            ),
            endedBy: endedBy,
            trigger: trigger.map {
                .init(command: $0.command, exitStatus: $0.exitStatus, output: TriggerProcess.logName)
            },
            planRTT: settings.planRTT,
            scenario: describe(job.configuration)
        )
        measurements.minMeasured = settings.minMeasured
        measurements.scenarioFile = job.scenarioFile
        measurements.service = .fcm
        measurements.delivery = service.fleet.map { DeliverySummary($0.snapshot()) }
        return measurements
    }

    static func connections(
        _ rows: [FCMConnectionRow],
        sinceMark: (UInt64) -> Double
    ) -> [SummaryDocument.Provider.Connection] {
        let requests = max(1, rows.map(\.requests).reduce(0, +))
        return rows.map { row in
            SummaryDocument.Provider.Connection(
                id: row.id,
                peer: row.peer,
                openedSeconds: sinceMark(row.openedUptime),
                closedSeconds: sinceMark(row.closedUptime),
                closedBy: row.closedByProvider ? "provider" : "sink",
                requests: row.requests,
                accepted: row.accepted,
                share: Double(row.requests) / Double(requests),
                peakStreams: row.peakStreams,
                meanStreams: row.meanStreams,
                busySeconds: Double(row.busyNanoseconds) / 1e9,
                refusedStreams: row.refusedStreams,
                busyFromSeconds: row.busyFrom == 0 ? nil : sinceMark(row.busyFrom),
                maybeUnread: nil
            )
        }
    }

    /// The sink's judgement in a line, e.g. `fcm project P; quota 600000/60s; unregistered 3%;
    /// internal 1%; unavailable 2%`.
    static func describe(_ configuration: FCMSinkConfiguration) -> String {
        var parts = ["fcm project \(configuration.project)"]
        if let quota = configuration.quota {
            parts.append("quota \(quota.messages)/\(quota.window / 1_000_000_000)s")
        }
        if configuration.unregisteredShare > 0 {
            parts.append("unregistered \(String(format: "%g", configuration.unregisteredShare * 100))%")
        }
        if configuration.otherSenderShare > 0 {
            parts.append("sender mismatch \(String(format: "%g", configuration.otherSenderShare * 100))%")
        }
        if configuration.internalShare > 0 {
            parts.append("internal \(String(format: "%g", configuration.internalShare * 100))%")
        }
        if configuration.unavailableShare > 0 {
            parts.append("unavailable \(String(format: "%g", configuration.unavailableShare * 100))%")
        }
        return parts.joined(separator: "; ")
    }
}
