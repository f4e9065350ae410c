import ArgumentParser
import FanoutRun
import FanoutTokens

/// Runs the cost gate's workload once and prints what it did; scripts/cost.sh runs it under
/// callgrind. No logic of its own: `CostWorkload` is the workload.
@main
struct CostCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fanout-cost",
        abstract: "Fans COUNT notifications out to the sink in memory, single-threaded (the cost gate's workload).",
        discussion: """
            The sender's and the sink's connections are joined in memory: no socket, no event loop,
            the same instructions on every run of a build. scripts/cost.sh counts them with callgrind.
            Exits 1 unless every token was sent, accepted by the sink and recorded.
            """
    )

    @Argument(help: "The token file (text or Fanout's binary format); none with --generated.")
    var tokens: String?

    @Argument(help: "The tokens it holds.")
    var count: Int?

    @Option(help: "This many generated tokens (fanout run's default set) instead of a file's.")
    var generated: Int?

    @Option(help: "Streams the one connection keeps open.")
    var streams = 100

    @Flag(help: "The sink measures the provider, as fanout sink --output does.")
    var instrument = false

    @Flag(
        help:
            "A device fleet behind the sink: 20% offline back over 0–120 s, 10% low power, 2% disabled, 1% uninstalled, a log-normal delivery delay."
    )
    var devices = false

    @Flag(
        help:
            "The fleet's devices engage (issue #63): each delivered poll's media download and 3% opening an hour later, held as return events."
    )
    var engagement = false

    @Flag(
        help:
            "FCM HTTP v1 sends to the FCM sink as fanout sink --service fcm serves by default (its bearer, the quota, device rates) instead of APNs notifications."
    )
    var fcm = false

    /// The tokens, and how many.
    private var set: (source: TokenSource, count: Int)? {
        switch (tokens, count, generated) {
        case (let file?, let count?, nil): (.file(file), count)
        case (nil, nil, let count?): (.generated(TokenGenerator(count: UInt64(max(0, count)))), count)
        default: nil
        }
    }

    func validate() throws {
        guard let set else { throw ValidationError("give a token file and its COUNT, or --generated COUNT") }
        if fcm && (instrument || devices || engagement) {
            throw ValidationError("--instrument, --devices and --engagement are the APNs sink's.")
        }
        guard set.count > 0 else { throw ValidationError("COUNT is at least 1, not \(set.count)") }
        guard streams > 0 else { throw ValidationError("--streams is at least 1, not \(streams)") }
    }

    func run() throws {
        guard let (source, count) = set else { throw ExitCode.validationFailure }
        var workload = CostWorkload(tokens: source, count: count)
        workload.streams = streams
        workload.instrument = instrument
        workload.devices = devices
        workload.engagement = engagement
        workload.fcm = fcm
        let result = try workload.run()
        let digests = result.digestsAgree.map { $0 ? "agree" : "DIFFER" } ?? "none (FCM)"
        print(
            "tokens \(result.tokens) sent \(result.sent) accepted \(result.accepted)",
            "sink \(result.sinkRequests)/\(result.sinkAccepted) digests \(digests)",
            "latencies \(result.latencies) round-trips \(result.roundTrips)"
        )
        let expected = UInt64(count)
        guard result.tokens == expected, result.sent == count, result.accepted == count, result.sinkAccepted == count,
            result.digestsAgree != false, result.latencies == expected
        else { throw ExitCode.failure }
    }
}
