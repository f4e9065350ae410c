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

    @Argument(help: "The token file (text or Fanout's binary format).")
    var tokens: String

    @Argument(help: "The tokens it holds.")
    var count: Int

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
            "FCM HTTP v1 sends to the FCM sink (any bearer, no quota, no device limits) instead of APNs notifications."
    )
    var fcm = false

    func validate() throws {
        if fcm && (instrument || devices) { throw ValidationError("--instrument and --devices are the APNs sink's.") }
        guard count > 0 else { throw ValidationError("COUNT is at least 1, not \(count)") }
        guard streams > 0 else { throw ValidationError("--streams is at least 1, not \(streams)") }
    }

    func run() throws {
        var workload = CostWorkload(tokens: .file(tokens), count: count)
        workload.streams = streams
        workload.instrument = instrument
        workload.devices = devices
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
