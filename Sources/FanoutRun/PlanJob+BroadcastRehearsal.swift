import FanoutAPNs
import FanoutAssembly
import FanoutChannels
import FanoutClient
import FanoutEndpoint
import FanoutMachine
import FanoutNotation
import FanoutReport
import FanoutSink
import FanoutTokens
import Foundation
import NIOPosix

/// How long a broadcast plan's rehearsal lasts: `updates` rounds of an update to every channel,
/// one round every `every`. At least `fewestUpdates` rounds and `fewestRequests` requests, so
/// that the rate between the first and the last is measured over many gaps (a late or early
/// request moves it by a fraction of one gap in hundreds); at most `longest` in all, the plan's
/// interval scaled down when its rounds would take longer (100 channels every 10 s: 3 rounds,
/// 30 s, the plan's own interval; every 60 s: 3 rounds every 10 s, 6 times the plan's rate).
struct BroadcastRehearsal: Sendable, Hashable {
    static let fewestUpdates = 3
    static let fewestRequests = 300
    static let longest = Duration.seconds(30)

    /// Updates sent to each channel, and how often.
    var updates: Int
    var every: Duration

    init(channels: Int, updateEvery: Duration) {
        updates = max(Self.fewestUpdates, (Self.fewestRequests + max(1, channels) - 1) / max(1, channels))
        every = min(updateEvery, Self.longest / updates)
    }
}

extension PlanJob {
    /// The Live Activity update a rehearsal broadcasts when the plan names no `--template`
    /// (fixtures/liveactivity-update.json): its `timestamp` is each update's (`ChannelRounds`).
    static let liveActivityUpdate = #"""
        {"aps":{"timestamp":"{{field.1:int}}","event":"update","content-state":{"homeTeamScore":2,"awayTeamScore":1,"period":"2nd half","lastEvent":"Goal: #9 (62')","minute":62},"stale-date":1893456000,"alert":{"title":"Goal!","body":"Home 2 – 1 Away, 62'"}}}
        """#

    /// The app whose channels a rehearsal creates.
    static let rehearsalApp = "com.example.app"

    /// Why a broadcast plan of `channels` cannot be rehearsed, if it cannot: the rehearsal
    /// creates them, and APNs (and the sink) keep at most 10,000 an app.
    public static func broadcastRehearsalRefusal(channels: UInt64) -> String? {
        guard channels > UInt64(SendJob.Broadcast.channelLimit) else { return nil }
        return "--verify: a rehearsal creates the plan's \(channels.grouped) channels, and APNs keeps at most "
            + "\(SendJob.Broadcast.channelLimit.grouped) an app (docs/apns.md)"
    }

    /// Rehearses `plan` (see `BroadcastVerification`); its run folder goes to `output/verify`
    /// when there is an output.
    public func rehearseBroadcast(_ plan: BroadcastPlan) throws -> BroadcastVerification {
        try rehearseBroadcast(plan, pace: 1)
    }

    /// The rehearsal with its updates sent at `pace` times the plan's rate: 1, but for the test
    /// that shows a rehearsal whose prediction is wrong fails.
    func rehearseBroadcast(_ plan: BroadcastPlan, pace: Double) throws -> BroadcastVerification {
        let question = plan.question
        if let refusal = Self.broadcastRehearsalRefusal(channels: question.channels) {
            throw JobError.option(.option("--verify"), refusal)
        }
        let channels = Int(question.channels)
        let rehearsal = BroadcastRehearsal(channels: channels, updateEvery: question.updateEvery)
        let connections = plan.requests.connections
        do {
            try MachineLimits.current().connections("the rehearsal's connections", filesEach: 2, eventLoops: 2)
                .check(connections)
        } catch {
            throw JobError.resource(.part("the broadcast plan"), "it cannot be rehearsed here: \(error)")
        }
        // The sink as the plan has APNs (`putOnTheWire`), its channels' subscribers the plan's.
        var wire = RunJob()
        try Self.putOnTheWire(&wire, plan: plan.requests)
        var sinkConfiguration = wire.sink.embedded
        sinkConfiguration.scenario.channelSubscribers = .fixed(Int(clamping: question.subscribers))
        let security = try RunSecurity()
        defer { security.remove() }
        sinkConfiguration.tokenAuthentication = security.sinkAuthentication
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let sink = try Sink(
            host: "127.0.0.1",
            port: 0,
            group: group,
            transport: security.serverTransport,
            configuration: sinkConfiguration
        )
        defer { sink.drain(grace: .seconds(1)) }
        let rate = Double(channels) / rehearsal.every.seconds
        let (job, broadcast) = try broadcastSender(to: sink, plan: plan, rehearsal: rehearsal, rate: rate * pace)
        var configuration = try job.loadConfiguration()
        configuration.endpoint.transport = security.clientTransport
        configuration.endpoint.providerTokens = security.providerTokens
        var summary = try job.broadcastRun(broadcast, configuration, started: following)
        // The devices the broadcasts reached are the sink's to count (a sender is not told).
        summary.broadcast?.devices = sink.broadcastRecords?.counts.reach
        if let output { _ = try summary.finish(into: output + "/" + Self.rehearsalFolder, reporter: reporter) }
        let scale = question.updateEvery.seconds / rehearsal.every.seconds
        let measured = BroadcastMeasurement(sink: sink, summary: summary, expected: (channels, rehearsal.updates))
        return BroadcastVerification(
            channels: question.channels,
            subscribers: question.subscribers,
            updateEvery: question.updateEvery,
            rehearsedEvery: rehearsal.every,
            updates: rehearsal.updates,
            predictedRequestRate: plan.requestRate,
            measuredRequestRate: measured.requestRate / scale,
            predictedDeliveryRate: plan.deliveriesPerSecond,
            measuredDeliveryRate: measured.deliveryRate / scale,
            predictedConnections: connections,
            measuredConnections: summary.report.snapshot.connectionsOpened,
            problems: measured.problems(subscribers: question.subscribers)
        )
    }

    /// `fanout send --broadcast` as the rehearsal runs it against `sink`: the plan's channels
    /// created there, `rehearsal.updates` updates to each at `rate` a second over the plan's
    /// connections and streams, with the plan's template (or `liveActivityUpdate`).
    private func broadcastSender(
        to sink: Sink,
        plan: BroadcastPlan,
        rehearsal: BroadcastRehearsal,
        rate: Double
    ) throws -> (SendJob, SendJob.Broadcast) {
        let endpoint = SendJob.Endpoint(tls: true, host: "127.0.0.1", port: sink.localAddress.port ?? 0)
        let question = plan.question.base
        let headers: NotificationHeaders
        do {
            headers = try NotificationHeaders(
                topic: Self.rehearsalApp + "\(APNsPushType.liveactivity.topicSuffix)",
                pushType: .liveactivity,
                expiration: 0
            )
        } catch {
            throw JobError.outcome(.part("the rehearsal's broadcast headers"), "\(error)")
        }
        let template = question.flow.templatePath
        var job = SendJob(
            endpoint: endpoint,
            template: template ?? "<the rehearsal's Live Activity update>",
            headers: headers,
            tokens: TokenSet(.channels(ChannelRounds(channels: [], rounds: 0, firstTimestamp: 0)))
        )
        if template == nil { job.inlineTemplate = Self.liveActivityUpdate }
        job.shape.connections = plan.requests.connections
        job.shape.streamsPerConnection = question.streams
        do {
            job.shape.model.schedule = try ArrivalSchedule(rate: rate, duration: nil)
        } catch {
            throw JobError.option(.part("the rehearsal's pace of \(rate)/s"), "\(error)")
        }
        // A bound on the rehearsal: three times its length, and ten seconds.
        let length = rehearsal.every * rehearsal.updates
        job.shape.deadline = length * 3 + .seconds(10)
        let broadcast = SendJob.Broadcast(
            app: Self.rehearsalApp,
            channels: .create(count: Int(plan.question.channels), storagePolicy: 1),
            updates: rehearsal.updates,
            management: endpoint
        )
        job.broadcast = broadcast
        // Channels it cannot delete are said, as `fanout send` says them.
        job.reporter = reporter
        return (job, broadcast)
    }
}

/// What the sink and the sender counted of a broadcast rehearsal: the sink's acceptance times
/// give the rates, its counts and the sender's what was accounted for.
struct BroadcastMeasurement {
    /// Broadcasts a second and device deliveries a second between the first broadcast the sink
    /// accepted and the last (0 with fewer than two).
    var requestRate = 0.0
    var deliveryRate = 0.0
    var counts: BroadcastCounts
    var timed: Int
    var summary: RunSummary
    /// The channels created and the updates sent to each.
    var expected: (channels: Int, updates: Int)

    init(sink: Sink, summary: RunSummary, expected: (channels: Int, updates: Int)) {
        self.summary = summary
        self.expected = expected
        counts = sink.broadcastCounts ?? BroadcastCounts()
        let records = sink.broadcastRecords?.broadcasts ?? []
        timed = records.count
        guard let first = records.map(\.acceptedAt).min(), let last = records.map(\.acceptedAt).max(), last > first
        else { return }
        let seconds = Double(last - first) / 1e9
        requestRate = Double(records.count - 1) / seconds
        // The first broadcast opens the span: the deliveries of the others fall in it.
        let delivered = records.reduce(0) { $0 + $1.reach.delivered } - (records.first?.reach.delivered ?? 0)
        deliveryRate = Double(delivered) / seconds
    }

    /// What was refused, failed or not accounted for, each said with its counts.
    func problems(subscribers: UInt64) -> [String] {
        let requests = expected.channels * expected.updates
        let snapshot = summary.report.snapshot
        var problems = summary.report.engineReasons.map { "the sender's run is invalid: \($0)" }
        if snapshot.accepted != requests {
            let rejected = snapshot.rejected.map { "\($0.key.rawValue) \($0.value)" }.sorted()
            let failed = snapshot.failed.map { "\($0.key) \($0.value)" }.sorted()
            problems.append(
                "the sender had \(snapshot.accepted.grouped) of \(requests.grouped) broadcasts accepted "
                    + "(rejected: \(rejected.isEmpty ? "none" : rejected.joined(separator: ", ")); "
                    + "failed: \(failed.isEmpty ? "none" : failed.joined(separator: ", ")))"
            )
        }
        if counts.broadcasts != requests {
            problems.append("the sink accepted \(counts.broadcasts.grouped) broadcasts, not \(requests.grouped)")
        }
        if counts.created != expected.channels || counts.deleted != expected.channels || counts.refusedCreations > 0 {
            problems.append(
                "the sink created \(counts.created.grouped) channels and deleted \(counts.deleted.grouped) of "
                    + "\(expected.channels.grouped) (\(counts.refusedCreations.grouped) creations refused)"
            )
        }
        let reached = UInt64(counts.broadcasts).multipliedReportingOverflow(by: subscribers)
        if reached.overflow || counts.subscribers != Int(clamping: reached.partialValue)
            || counts.delivered != counts.subscribers
        {
            problems.append(
                "the sink's \(counts.broadcasts.grouped) broadcasts reached \(counts.subscribers.grouped) subscribers "
                    + "and delivered to \(counts.delivered.grouped), not \(subscribers.grouped) each"
            )
        }
        if timed < 2 { problems.append("the sink timed \(timed) broadcasts: a rate needs two") }
        return problems
    }
}
