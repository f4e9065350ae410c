import ArgumentParser
import FanoutAPNs
import FanoutChannels
import FanoutScenarioTerms
import FanoutSink
import FanoutWire

/// `fanout sink`'s scenario: a file of settings and the options that override its lines, each
/// named as the file's setting. Each option is read as ArgumentParser reads it, into its typed
/// value or `SinkScenario.Setting` (the grammar a file's line has), so a bad one is refused
/// naming it before the sink starts, and nothing goes back into text on its way to the sink.
struct SinkScenarioOptions: ParsableArguments {
    @Option(
        name: .customLong("scenario"),
        help: ArgumentHelp(
            "Scenario settings, one NAME = VALUE a line (names as the options below); options given here win.",
            valueName: "file"
        )
    )
    var scenarioFile: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Latency per response: fixed:5ms, uniform:1ms-10ms, normal:5ms,1ms, lognormal:5ms,0.5 or empirical:FILE.",
            valueName: "kind:values"
        ),
        transform: { try LatencyDistribution(parsing: $0) }
    )
    var latency: LatencyDistribution?

    @Option(
        name: .long,
        parsing: .unconditional,
        help: ArgumentHelp(
            "A path of this round trip in front of the sink: every byte each way waits half of it (80ms, or a spread like normal:80ms,5ms).",
            valueName: "duration"
        ),
        transform: { try SinkScenario.Setting("rtt", $0) }
    )
    var rtt: SinkScenario.Setting?

    @Option(
        name: .long,
        parsing: .unconditional,
        help: ArgumentHelp("The path's bandwidth each way on each connection, e.g. 100Mbit.", valueName: "rate"),
        transform: { try SinkScenario.Setting("bandwidth", $0) }
    )
    var bandwidth: SinkScenario.Setting?

    @Option(
        name: .long,
        parsing: .unconditional,
        help: ArgumentHelp(
            "The path's bandwidth each way for all connections together, e.g. 1Gbit.",
            valueName: "rate"
        ),
        transform: { try SinkScenario.Setting("sink-bandwidth", $0) }
    )
    var sinkBandwidth: SinkScenario.Setting?

    @Option(
        name: .long,
        parsing: .unconditional,
        help: ArgumentHelp(
            "The connection window granted a provider (default: 16MiB; 65535 is nghttp2's).",
            valueName: "bytes"
        ),
        transform: { try SinkScenario.Setting("connection-window", $0) }
    )
    var connectionWindow: SinkScenario.Setting?

    @Option(
        name: .long,
        parsing: .unconditional,
        help: ArgumentHelp("SETTINGS_INITIAL_WINDOW_SIZE: each stream's window (default: 1MiB).", valueName: "bytes"),
        transform: { try SinkScenario.Setting("stream-window", $0) }
    )
    var streamWindow: SinkScenario.Setting?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "When windows are given back: half (once half is consumed, nghttp2's; the default) or each-frame.",
            valueName: "policy"
        ),
        transform: { try SinkScenario.Setting("window-refill", $0) }
    )
    var windowRefill: SinkScenario.Setting?

    @Option(
        name: .long,
        help: ArgumentHelp("Freeze every answer for LENGTH every EVERY, e.g. 10s/1s.", valueName: "every/length"),
        transform: { try SinkScenario.stall($0) }
    )
    var stall: (every: Duration, length: Duration)?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Answer this share of valid requests with an error, e.g. Unregistered:3%; repeat.",
            valueName: "reason:percent"
        ),
        transform: { try SinkScenario.Setting("error", $0) }
    )
    var error: [SinkScenario.Setting] = []

    @Option(name: .long, help: ArgumentHelp("Tokens to answer 410 Unregistered, one per line.", valueName: "file"))
    var unregisteredTokens: String?

    @Option(name: .long, help: ArgumentHelp("Tokens to answer 400 BadDeviceToken, one per line.", valueName: "file"))
    var badTokens: String?

    @Option(name: .long, help: ArgumentHelp("The seed of latencies and errors (default: 1).", valueName: "n"))
    var seed: UInt64?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "At most LIMIT notifications per token per WINDOW, then 429, e.g. 10/1s.",
            valueName: "limit/window"
        ),
        transform: { try SinkScenario.tokenRate($0) }
    )
    var tokenRate: Rate?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Answer at most LIMIT requests per WINDOW on each connection, e.g. 5000/s.",
            valueName: "limit/window"
        ),
        transform: { try SinkScenario.rate($0) }
    )
    var connectionRate: Rate?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "GOAWAY after N requests on a connection, with an APNs reason (default: Shutdown); fcm: N alone (GOAWAY NO_ERROR, HTTP/1.1 connection: close).",
            valueName: "n[:reason]"
        ),
        transform: { try SinkScenario.goAway($0) }
    )
    var goawayAfterRequests: (requests: Int, reason: APNsReason?)?

    @Option(
        name: .long,
        help: ArgumentHelp("GOAWAY this long after each connection opens.", valueName: "duration")
    )
    var goawayAfterTime: Duration?

    @Option(name: .long, help: ArgumentHelp("Close each connection without GOAWAY after N requests.", valueName: "n"))
    var closeAfterRequests: Int?

    @Option(
        name: .long,
        help: ArgumentHelp("Never answer this share of requests, e.g. 0.1%.", valueName: "percent"),
        transform: { try SinkScenario.share($0) }
    )
    var unanswered: Double?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Refuse connections beyond this many at once, after evicting those that sent no authenticated request, oldest first (default: three quarters of what the open-file limit leaves, at most \(ConnectionFaults.mostConnectionsByDefault); each may hold --max-streams streams).",
            valueName: "n"
        )
    )
    var maxConnections: Int?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Devices subscribed to each broadcast channel: N, uniform:LOW-HIGH or lognormal:MEDIAN,SIGMA, drawn per channel by the seed (default: 0).",
            valueName: "count"
        ),
        transform: { try ChannelSubscribers(parsing: $0) }
    )
    var channelSubscribers: ChannelSubscribers?

    /// The scenario the file and the options (with the device fleet's) describe (options
    /// win); a bad one is a usage error naming the option or the file's line.
    func scenario(devices: DeviceOptions) throws -> SinkScenario {
        do {
            var scenario =
                try scenarioFile.map { path throws(SinkScenarioError) in try SinkScenario(contentsOfFile: path) }
                ?? SinkScenario()
            if !error.isEmpty { scenario.errors = [] }
            // Read as ArgumentParser took them (a value that does not parse was refused there).
            if let latency { scenario.latency = latency }
            if let stall { scenario.stall = stall }
            if let tokenRate { scenario.tokenRate = tokenRate }
            if let connectionRate { scenario.connectionRate = connectionRate }
            if let (requests, reason) = goawayAfterRequests {
                scenario.faults.goAwayAfterRequests = requests
                scenario.faults.goAwayReason = reason ?? .shutdown
            }
            if let goawayAfterTime { scenario.faults.goAwayAfter = goawayAfterTime }
            if let unanswered { scenario.faults.unansweredShare = unanswered }
            if let channelSubscribers { scenario.channelSubscribers = channelSubscribers }
            // Files are read now; the rest was read as ArgumentParser took it.
            for (name, path) in [("unregistered-tokens", unregisteredTokens), ("bad-tokens", badTokens)] {
                guard let path else { continue }
                do {
                    scenario.apply(try SinkScenario.Setting(name, path))
                } catch {
                    throw SinkScenarioError("--\(name): \(error.description)")
                }
            }
            if let seed { scenario.seed = seed }
            if let closeAfterRequests {
                scenario.faults.closeAfterRequests = try SinkScenario.count(
                    closeAfterRequests,
                    name: "--close-after-requests"
                )
            }
            if let maxConnections {
                scenario.faults.maxConnections = try SinkScenario.count(maxConnections, name: "--max-connections")
            }
            let settings = [rtt, bandwidth, sinkBandwidth, connectionWindow, streamWindow, windowRefill].compactMap {
                $0
            }
            for setting in settings + error + devices.given.map(SinkScenario.Setting.device) {
                scenario.apply(setting)
            }
            try scenario.validate()
            return scenario
        } catch {
            throw ValidationError("\(error).")
        }
    }
}

extension SinkScenarioOptions {
    /// The options of this group that set the wire (`--rtt`, `--bandwidth`, `--sink-bandwidth`):
    /// the one part of a scenario both sinks take.
    static let wireOptions: Set = ["--rtt", "--bandwidth", "--sink-bandwidth"]
    /// The options the FCM sink takes too: the wire's, the latency and its seed, the tokens held
    /// unregistered, the connections retired after N requests.
    static let fcmOptions = wireOptions.union([
        "--latency", "--seed", "--unregistered-tokens", "--goaway-after-requests", "--max-connections", "--scenario",
    ])

    /// The wire those options give (`nil`: none), checked as a scenario checks it.
    func wire() throws -> SinkWire? {
        var scenario = SinkScenario()
        for setting in [rtt, bandwidth, sinkBandwidth].compactMap({ $0 }) { scenario.apply(setting) }
        do { try scenario.validate() } catch { throw ValidationError("\(error).") }
        return scenario.wire
    }

    /// The options of this group given on the command line (those not at their default), by
    /// name: what `fanout sink --service fcm` refuses, as APNs's alone.
    var givenOptions: [String] {
        let given: [(String, Bool)] = [
            ("--scenario", scenarioFile != nil),
            ("--latency", latency != nil),
            ("--rtt", rtt != nil),
            ("--bandwidth", bandwidth != nil),
            ("--sink-bandwidth", sinkBandwidth != nil),
            ("--connection-window", connectionWindow != nil),
            ("--stream-window", streamWindow != nil),
            ("--window-refill", windowRefill != nil),
            ("--stall", stall != nil),
            ("--unregistered-tokens", unregisteredTokens != nil),
            ("--bad-tokens", badTokens != nil),
            ("--seed", seed != nil),
            ("--token-rate", tokenRate != nil),
            ("--connection-rate", connectionRate != nil),
            ("--goaway-after-requests", goawayAfterRequests != nil),
            ("--goaway-after-time", goawayAfterTime != nil),
            ("--close-after-requests", closeAfterRequests != nil),
            ("--unanswered", unanswered != nil),
            ("--max-connections", maxConnections != nil),
            ("--channel-subscribers", channelSubscribers != nil),
            ("--error", !error.isEmpty),
        ]
        return given.filter(\.1).map(\.0)
    }
}
