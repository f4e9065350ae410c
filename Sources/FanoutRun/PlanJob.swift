import FanoutClient
import FanoutReport
import Foundation

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
    /// Where `plan.json` goes, if anywhere.
    public var output: String?

    public init(question: CapacityPlan.Question) {
        self.question = question
    }

    /// Notifications a calibration sends: enough for a steady figure, a few seconds here.
    public static let calibrationNotifications: UInt64 = 300_000

    public func run(log: (String) -> Void = { _ in }) throws -> CapacityPlan {
        var question = question
        switch cost {
        case .unknown:
            break
        case .runFolder(let folder):
            question.cpuMicroseconds = try Self.senderCost(in: folder)
            question.cpuSource = "measured by the run in \(folder)"
        case .calibrate(let notifications):
            log("calibrating: \(notifications) notifications to the embedded sink over TLS with token auth…")
            var job = RunJob()
            job.count = notifications
            job.apnsSecurity = true
            let summary = try job.run()
            guard summary.reconciliation?.agrees == true, summary.report.snapshot.failed.isEmpty,
                let cost = RunSummary.microsecondsPerNotification(
                    summary.report.senderCPU,
                    sent: summary.report.snapshot.sent
                )
            else { throw JobError("the calibration run did not complete cleanly: \(summary.invalidReasons)") }
            question.cpuMicroseconds = cost
            question.cpuSource = "calibrated here over TLS with token auth, \(notifications) notifications"
        }
        let plan = CapacityPlan(question)
        if let output {
            do {
                try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
                let data = try JSONSerialization.data(
                    withJSONObject: plan.json,
                    options: [.prettyPrinted, .sortedKeys]
                )
                try data.write(to: URL(fileURLWithPath: output + "/plan.json"))
            } catch {
                throw JobError("cannot write \(output)/plan.json: \(error.reason)")
            }
        }
        return plan
    }

    /// The sender's CPU µs per notification in a run folder (the median over repeats).
    static func senderCost(in folder: String) throws -> Double {
        let manager = FileManager.default
        var files = [folder + "/summary.json"]
        if !manager.fileExists(atPath: files[0]) {
            let repeats = (try? manager.contentsOfDirectory(atPath: folder)) ?? []
            files = repeats.filter { $0.hasPrefix("repeat-") }.sorted().map { "\(folder)/\($0)/summary.json" }
        }
        guard !files.isEmpty else {
            throw JobError("--cost: \(folder) holds no summary.json (nor repeat-*/summary.json)")
        }
        let costs = try files.map { file -> Double in
            let object: [String: Any]
            do {
                object =
                    try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file)))
                    as? [String: Any] ?? [:]
            } catch {
                throw JobError("--cost: cannot read \(file): \(error.reason)")
            }
            guard let cost = (object["cpu"] as? [String: Any])?["sender_us_per_notification"] as? Double, cost > 0
            else {
                throw JobError("--cost: \(file) has no sender CPU per notification (cpu, summary version 3 and later)")
            }
            return cost
        }
        return costs.sorted()[costs.count / 2]
    }
}
