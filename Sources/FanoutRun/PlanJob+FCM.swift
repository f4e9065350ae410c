import FanoutAssembly
import FanoutClient
import FanoutEndpoint
import FanoutFCMSink
import FanoutNotation
import FanoutReport
import FanoutSink
import FanoutTokens
import FanoutWire
import Foundation
import NIOPosix
import NIOSSL

extension PlanJob {
    /// fixtures/fcm-poll.json: the seed's poll as an FCM send (its token set by the sender),
    /// what an FCM plan's rehearsal sends when no template was given.
    public static let fcmPoll = #"""
        {"message":{"notification":{"title":"Poll","body":"Do you like the new design?"},"data":{"category":"poll","ok":"https://example.com/ok","nok":"https://example.com/nok"},"android":{"priority":"high","notification":{"click_action":"poll","sound":"default"}}}}
        """#

    /// The project the rehearsal's FCM sink serves.
    static let rehearsalProject = "fanout-plan"

    /// Rehearses one machine's share of an FCM plan against the FCM sink in this process:
    ///
    /// ```
    ///   fanout send --service fcm ──► [ wire: round trip + processing ] ──► FCM sink
    ///     the planned connections × streams,          the machine's share of the quota,
    ///     paced at the quota's share where it binds   the planned streams, TLS unless --cleartext
    /// ```
    ///
    /// The FCM sink answers at once, so FCM's processing is carried by the wire with the round
    /// trip (a request waits both, as Little's law has it). Where the quota binds the send is
    /// paced at the machine's share of its rate, as the plan says to: the share should take
    /// devices ÷ that rate, with no request answered 429 but the odd one at a window's edge.
    func rehearseFCM(_ plan: CapacityPlan) throws -> Verification {
        let question = plan.question
        let machines = UInt64(max(1, plan.machines ?? 1))
        let devices = question.devices == 0 ? 0 : (question.devices - 1) / machines + 1
        let connections = (max(1, plan.connections) - 1) / Int(machines) + 1
        let pace = plan.pace.map { $0 / Double(machines) }
        let folder = NSTemporaryDirectory() + "fanout-plan-fcm-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let local = try Self.fcmRehearsalSink(plan, machines: machines, folder: folder)
        defer { local.stop() }
        let (sink, certificate) = (local.sink, local.certificate)
        var job = SendJob(
            endpoint: SendJob.Endpoint(tls: certificate != nil, host: "127.0.0.1", port: sink.localAddress.port ?? 0),
            template: question.flow.templatePath ?? "fixtures/fcm-poll.json",
            headers: try NotificationHeaders(topic: "fcm"),
            tokens: TokenSet(.generated(TokenGenerator(count: devices, seed: 1)), reader: .init(format: .fcm))
        )
        if question.flow.templatePath == nil { job.inlineTemplate = Self.fcmPoll }
        job.fcm = SendJob.FCM(project: Self.rehearsalProject, credentials: .bearer("ya29.fanout-rehearsal"))
        job.tls.trustedCertificates = certificate
        job.shape.connections = connections
        job.shape.streamsPerConnection = question.streams
        if let pace {
            do {
                job.shape.model.schedule = try ArrivalSchedule(rate: pace, duration: nil)
            } catch {
                throw JobError.outcome(.part("the rehearsal's pace of \(pace)/s"), "\(error)")
            }
            // The queue for streams stays short at the quota's pace; a rehearsal that cannot keep
            // it is measured, not cut.
            job.shape.model.maxBacklog = .seconds(3600)
        }
        let rate = min(
            Double(connections) * min(plan.connectionCeiling, plan.coreCeiling ?? .infinity),
            pace ?? .infinity
        )
        let predictedSeconds = Double(devices) / rate + Self.meanRoundTrip(question)
        job.shape.deadline = .nanoseconds(Int(saturating: predictedSeconds * 3e9 + 1e10))
        let configuration = try job.loadConfiguration()
        let summary = try job.run(configuration, started: following)
        if let output { _ = try summary.finish(into: output + "/" + Self.rehearsalFolder, reporter: reporter) }
        let snapshot = summary.report.snapshot
        let statistics = sink.service.statistics
        let elapsed = summary.report.elapsed.seconds
        var verification = Verification(
            devices: devices,
            connections: connections,
            predictedPerConnection: Double(devices) / predictedSeconds / Double(connections),
            measuredPerConnection: Double(snapshot.sent) / elapsed / Double(connections),
            predictedDuration: .nanoseconds(Int64(predictedSeconds * 1e9)),
            measuredDuration: summary.report.elapsed,
            predictedCores: question.cpuMicroseconds.map { Double(devices) / predictedSeconds * $0 / 1e6 },
            measuredCores: summary.report.senderCPU.seconds / elapsed,
            complete: snapshot.accepted == Int(devices)
                && Reconciliation(client: snapshot, fcmSink: statistics).agrees
        )
        verification.service = .fcm
        verification.quota = question.quota.map { quota in
            Verification.QuotaFigures(
                messages: Self.quotaShare(quota, machines: machines),
                window: quota.window,
                pace: pace,
                answered429: statistics[.quotaExceeded]
            )
        }
        return verification
    }

    /// One machine's share of the project's quota, rounded up as its share of the devices is
    /// (a share rounded down would refuse the last of the share's sends).
    static func quotaShare(_ quota: CapacityPlan.Quota, machines: UInt64) -> Int {
        (quota.messages - 1) / Int(machines) + 1
    }

    /// The FCM sink a rehearsal sends to: the project, the machine's share of the quota, the
    /// planned streams, any bearer taken, a wire of the round trip and processing (and the
    /// path's bandwidth), TLS (`LocalFCMSink`) unless the plan is cleartext.
    static func fcmRehearsalSink(
        _ plan: CapacityPlan,
        machines: UInt64,
        folder: String
    ) throws -> LocalFCMSink {
        let question = plan.question
        var configuration = FCMSinkConfiguration()
        configuration.project = rehearsalProject
        configuration.authentication = .anyBearer
        configuration.deviceLimits = nil
        configuration.maxConcurrentStreams = UInt32(clamping: question.streams)
        configuration.quota = question.quota.map {
            .init(messages: quotaShare($0, machines: machines), window: UInt64($0.window.wholeNanoseconds))
        }
        let wire = SinkWire(
            roundTrip: .fixed(question.roundTrip + question.processing),
            bandwidth: question.flow.bandwidth
        )
        do {
            try wire.validate()
        } catch {
            throw JobError.resource(.part("the rehearsal's wire"), "it cannot be run: \(error)")
        }
        return try LocalFCMSink(
            "the rehearsal's FCM sink",
            configuration: configuration,
            account: nil,
            tls: question.flow.tls,
            wire: wire,
            threads: 1,
            folder: folder
        )
    }
}
