import FanoutReport
import FanoutResults

extension PlanJob {
    /// What `fanout plan --broadcast` asks about.
    public struct Broadcast: Sendable, Hashable {
        public var channels: UInt64
        public var subscribers: UInt64
        public var updateEvery: Duration

        public init(channels: UInt64, subscribers: UInt64, updateEvery: Duration) {
            self.channels = channels
            self.subscribers = subscribers
            self.updateEvery = updateEvery
        }
    }

    /// `--broadcast`'s plan (`broadcast` must be set), written as `plan.json` with `--output`.
    public func runBroadcast() throws -> BroadcastPlan {
        guard let broadcast else { throw JobError.option(.command, "a broadcast plan needs --broadcast") }
        let plan = BroadcastPlan(
            .init(
                channels: broadcast.channels,
                subscribers: broadcast.subscribers,
                updateEvery: broadcast.updateEvery,
                base: try costed()
            )
        )
        if let output {
            try Self.write(document(plan, verification: verify ? .init(status: .running) : nil), to: output)
        }
        return plan
    }

    /// plan.json's document for a broadcast `plan`, with `verification`.
    public func document(_ plan: BroadcastPlan, verification: PlanDocument.Verification?) -> PlanDocument {
        var document = plan.document
        document.verification = verification
        return document
    }
}
