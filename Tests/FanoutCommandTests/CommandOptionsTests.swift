import FanoutAPNs
import FanoutClient
import FanoutDevices
import FanoutEndpoint
import FanoutFiles
import FanoutNotation
import FanoutReport
import FanoutRun
import FanoutScenarioTerms
import FanoutSink
import FanoutTokens
import Foundation
import Testing

@testable import fanout

/// Every option of `fanout run`, `fanout send` and `fanout sink` lands in its field of the job it
/// makes, and an option left out keeps the library's default (declared once, there).
@Suite struct CommandOptionsTests {
    @Test func runOptionsReachTheirFields() throws {
        let job = try RunCommand.parse([
            "--count", "12345", "--seed", "9", "--shard", "2/3", "--connections", "7", "--streams", "1500",
            "--threads", "2", "--sink-threads", "3", "--timeout", "2s", "--attempts", "5", "--rate", "100",
            "--duration", "3s", "--warm-up", "1s", "--max-lag", "50ms",
        ]).job()
        #expect(job.count == 12345)
        #expect(job.seed == 9)
        #expect(job.shard == (try TokenShard(parsing: "2/3")))
        #expect(job.shape.connections == 7)
        #expect(job.shape.streamsPerConnection == 1500)
        #expect(job.senderThreads == 2)
        #expect(job.sinkThreads == 3)
        #expect(job.shape.streamTimeout == .seconds(2))
        #expect(job.shape.maxAttempts == 5)
        #expect(job.shape.model.schedule?.total == 300)
        #expect(job.shape.model.warmUp == .seconds(1))
        #expect(job.shape.model.maxLag == .milliseconds(50))
        #expect(job.tokenCount == 12345)
    }

    /// The embedded sink takes a scenario file and a latency over it; a bad one names its option.
    @Test func runTakesTheSinksScenarioAndLatency() throws {
        let scenario = CommandRunner.repositoryRoot + "/fixtures/scenarios/apns-80ms.scenario"
        let shipped = try RunCommand.parse(["--sink-scenario", scenario]).job().sink.scenario
        #expect(shipped.latency == .logNormal(median: .milliseconds(80), sigma: 0.25))
        #expect(shipped.errors.map(\.reason) == [.unregistered, .serviceUnavailable])
        let over = try RunCommand.parse(["--sink-scenario", scenario, "--sink-latency", "fixed:50ms"]).job()
        #expect(over.sink.scenario.latency == .fixed(.milliseconds(50)))
        #expect(over.sink.scenario.errors.count == 2)
        #expect(try RunCommand.parse([]).job().sink.scenario.latency == nil)
        for (arguments, message) in [
            (
                ["--sink-latency", "fixed:soon"],
                "The value 'fixed:soon' is invalid for '--sink-latency <distribution>': "
            ),
            (
                ["--sink-scenario", "/nonexistent.scenario"],
                "--sink-scenario: cannot read the scenario file /nonexistent.scenario"
            ),
        ] {
            do {
                _ = try RunCommand.parse(arguments).job()
                Issue.record("\(arguments) was accepted")
            } catch {
                #expect(RunCommand.message(for: error).hasPrefix(message), "\(RunCommand.message(for: error))")
            }
        }
    }

    @Test func runDefaultsAreTheLibrarys() throws {
        let job = try RunCommand.parse([]).job()
        let defaults = RunJob()
        let shape = LoadShape()
        #expect(job.count == nil && job.tokenCount == RunJob.defaultCount)
        #expect(job.seed == defaults.seed && job.shard == defaults.shard)
        #expect(job.senderThreads == defaults.senderThreads && job.sinkThreads == defaults.sinkThreads)
        #expect(job.shape.connections == shape.connections)
        #expect(job.shape.streamsPerConnection == shape.streamsPerConnection)
        #expect(job.shape.streamsPerConnection == APNsRequest.concurrentStreams)
        #expect(job.shape.streamTimeout == shape.streamTimeout)
        #expect(job.shape.maxAttempts == shape.maxAttempts)
        #expect(job.shape.model.schedule == nil && job.shape.model.maxLag == shape.model.maxLag)
        // The closed model with --duration.
        #expect(try RunCommand.parse(["--duration", "4s"]).job().shape.model.duration == .seconds(4))
    }

    @Test func sendOptionsReachTheirFields() throws {
        let job = try SendCommand.parse([
            "--endpoint", "https://push.example:8443", "--tokens", "tokens.txt", "--shard", "1/2", "--skip-invalid",
            "--rejects", "rejects.txt", "--template", "fixtures/poll.json", "--push-type", "background",
            "--size-limit", "3000", "--topic", "com.example.app", "--priority", "5", "--expiration", "17",
            "--collapse-id", "poll-1", "--apns-id", "random", "--connections", "6", "--streams", "1500",
            "--threads", "2", "--timeout", "3s", "--attempts", "4", "--ca-file", "ca.pem", "--cert", "client.pem",
            "--cert-key", "client-key.pem", "--key-file", "key.p8", "--key-id", "ABC123DEFG", "--team-id", "TEAM",
            "--token-refresh", "30m", "--gone-tokens", "gone.txt", "--stage", "2s:100", "--warm-up", "500ms",
        ]).job()
        #expect(job.endpoint == SendJob.Endpoint(tls: true, host: "push.example", port: 8443))
        #expect(job.tokens.source == .file("tokens.txt"))
        #expect(job.tokens.reader.shard == (try TokenShard(parsing: "1/2")))
        #expect(job.tokens.reader.invalidTokens == .skip)
        #expect(job.tokens.reader.rejectsPath == "rejects.txt")
        #expect(job.template == "fixtures/poll.json")
        #expect(job.templateOptions.sizeLimit == 3000)
        #expect(job.headers.topic == "com.example.app")
        #expect(job.headers.pushType == .background)
        #expect(job.headers.priority == .powerConsidered)
        #expect(job.headers.expiration == 17)
        #expect(job.headers.collapseID?.text == "poll-1")
        #expect(job.headers.generatesAPNsID)
        #expect(job.shape.connections == 6)
        #expect(job.shape.streamsPerConnection == 1500)
        #expect(job.threads == 2)
        #expect(job.shape.streamTimeout == .seconds(3))
        #expect(job.shape.maxAttempts == 4)
        #expect(job.shape.model.schedule?.total == 100)
        #expect(job.shape.model.warmUp == .milliseconds(500))
        #expect(job.tls.trustedCertificates == "ca.pem")
        #expect(!job.tls.insecure)
        #expect(job.tls.certificate == "client.pem")
        #expect(job.tls.certificateKey == "client-key.pem")
        #expect(job.tokenAuth?.keyFile == "key.p8")
        #expect(job.tokenAuth?.keyID == "ABC123DEFG")
        #expect(job.tokenAuth?.teamID == "TEAM")
        #expect(job.tokenAuth?.refresh == .seconds(30 * 60))
        #expect(job.goneTokens == "gone.txt")
    }

    @Test func sendDefaultsAreTheLibrarys() throws {
        let job = try SendCommand.parse([
            "--endpoint", "http://127.0.0.1:2197", "--generate", "10", "--template", "fixtures/poll.json",
            "--topic", "com.example.app", "--key-file", "key.p8", "--key-id", "ABC123DEFG", "--team-id", "TEAM",
        ]).job()
        #expect(job.endpoint == SendJob.Endpoint(tls: false, host: "127.0.0.1", port: 2197))
        #expect(job.tokens.source == .generated(TokenGenerator(count: 10, seed: 1)))
        #expect(job.headers == (try NotificationHeaders(topic: "com.example.app")))
        #expect(job.shape.connections == LoadShape().connections)
        #expect(job.shape.streamsPerConnection == LoadShape().streamsPerConnection)
        #expect(job.shape.maxAttempts == LoadShape().maxAttempts)
        #expect(job.tokenAuth?.refresh == SendJob.TokenAuth.defaultRefresh)
        #expect(job.tls == SendJob.TLSFiles())
        #expect(job.goneTokens == nil)
    }

    @Test func sinkOptionsReachTheirFields() throws {
        let job = try SinkCommand.parse([
            "--listen", "0.0.0.0:9000", "--threads", "2", "--tls-self-signed", "/tmp/certs", "--client-ca", "ca.pem",
            "--admin", "127.0.0.1:9001", "--capture", "capture.jsonl", "--capture-first", "5", "--key-file", "key.p8",
            "--key-id", "ABC123DEFG", "--team-id", "TEAM", "--topic", "com.example.a", "--topic", "com.example.b",
            "--token-lengths", "64-64", "--initial-streams", "3", "--max-streams", "1500", "--throttle-after-rejection",
            "--latency", "fixed:5ms", "--seed", "4", "--max-connections", "10", "--idle-timeout", "off",
            "--frame-timeout", "5s", "--request-timeout", "2s", "--max-connections-per-peer", "3",
            "--max-idle-connections-per-peer", "2", "--idle-grace", "250ms",
        ]).job()
        #expect(job.host == "0.0.0.0" && job.port == 9000)
        #expect(job.threads == 2)
        #expect(job.tls == .selfSigned(directory: "/tmp/certs"))
        #expect(job.clientCertificateAuthorities == "ca.pem")
        #expect(job.admin?.host == "127.0.0.1" && job.admin?.port == 9001)
        #expect(job.capture?.path == "capture.jsonl" && job.capture?.selection == .first(5))
        #expect(job.tokenKey == SinkJob.TokenKey(file: "key.p8", keyID: "ABC123DEFG", teamID: "TEAM"))
        #expect(job.configuration.allowedBundles == ["com.example.a", "com.example.b"])
        #expect(job.configuration.tokenFormat.hexLengths == 64...64)
        #expect(job.configuration.initialMaxConcurrentStreams == 3)
        #expect(job.configuration.maxConcurrentStreams == 1500)
        #expect(job.configuration.throttleAfterRejection)
        #expect(job.configuration.scenario.latency == .fixed(.milliseconds(5)))
        #expect(job.configuration.scenario.seed == 4)
        #expect(job.configuration.scenario.faults.maxConnections == 10)
        #expect(job.configuration.idleTimeout == nil)
        #expect(job.configuration.incompleteFrameTimeout == .seconds(5))
        #expect(job.configuration.requestTimeout == .seconds(2))
        #expect(job.configuration.maxConnectionsPerPeer == 3)
        #expect(job.configuration.maxIdleConnectionsPerPeer == 2)
        #expect(job.configuration.idleGrace == .milliseconds(250))
        #expect(try SinkCommand.parse(["--idle-grace", "off"]).job().configuration.idleGrace == nil)
        #expect(try SinkCommand.parse([]).job().configuration.idleGrace == .seconds(1))
    }

    /// Each `--device-…` option of `fanout sink`, and each `--sink-device-…` of `fanout run`,
    /// reaches its setting; the stale bound defaults to an hour.
    @Test func deviceOptionsReachTheirSettings() throws {
        let categories = NSTemporaryDirectory() + "fanout-categories-\(UUID().uuidString)"
        try "poll OK foreground POST /ok\n".write(toFile: categories, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: categories) }
        let values = [
            ("offline", "30%"), ("low-power", "10%"), ("disabled", "2%"), ("uninstalled", "1%"),
            ("return", "uniform:0s-120s"), ("delay", "lognormal:300ms,0.5"), ("store-cap", "5000"),
            ("default-expiry", "2h"), ("burst-interval", "5m"), ("background-budget", "3/1h"),
            ("stale-after", "30m"), ("open", "3%"), ("open-after", "uniform:0s-10s"), ("actions", "OK=60%"),
            ("requests-per-open", "4"), ("media-budget", "20s"), ("categories", categories),
        ]
        // `return-to` is the one not named `device-…`: its option is `--return-to`.
        let returnTo = "http://127.0.0.1:8080"
        #expect(values.count + 1 == DeviceFleetSettings.settingNames.count)
        // The scenario file's `device-…` keys read these texts into their fields (DeviceFleetTests
        // checks each field); here each option must land where its key does. Every value moves
        // its field off the default, so an option that reached nothing leaves a difference.
        var expected = DeviceFleetSettings()
        for (name, value) in values {
            var alone = DeviceFleetSettings()
            try alone.set("device-" + name, value)
            #expect(alone != DeviceFleetSettings(), "--device-\(name) \(value) is the default")
            try expected.set("device-" + name, value)
        }
        try expected.set("return-to", returnTo)
        let sink = try SinkCommand.parse(values.flatMap { ["--device-" + $0.0, $0.1] } + ["--return-to", returnTo])
            .job()
        let run = try RunCommand.parse(
            values.flatMap { ["--sink-device-" + $0.0, $0.1] } + ["--sink-return-to", returnTo]
        )
        .job()
        #expect(sink.configuration.scenario.devices == expected)
        #expect(run.sink.scenario.devices == expected)
        #expect(try SinkCommand.parse([]).job().configuration.scenario.devices.staleAfter == .seconds(3600))
    }

    @Test func sinkDefaultsAreTheLibrarys() throws {
        let job = try SinkCommand.parse([]).job()
        let defaults = SinkJob()
        let configuration = SinkConfiguration()
        #expect(job.host == defaults.host && job.port == defaults.port && job.threads == defaults.threads)
        #expect(job.tls == .none && job.tokenKey == nil && job.admin == nil && job.capture == nil)
        #expect(job.configuration.initialMaxConcurrentStreams == configuration.initialMaxConcurrentStreams)
        #expect(job.configuration.maxConcurrentStreams == configuration.maxConcurrentStreams)
        #expect(Int(job.configuration.maxConcurrentStreams) == APNsRequest.concurrentStreams)
        #expect(job.configuration.tokenFormat == configuration.tokenFormat)
        #expect(job.configuration.idleTimeout == SinkConfiguration.defaultIdleTimeout)
        #expect(job.configuration.incompleteFrameTimeout == .seconds(30))
        #expect(job.configuration.requestTimeout == SinkConfiguration.defaultRequestTimeout)
        // Nor per-peer limits: a quarter of the default total, a quarter of that idle.
        #expect(job.configuration.maxConnectionsPerPeer == nil && job.configuration.maxIdleConnectionsPerPeer == nil)
        // No total given: the sink takes what the open-file limit allows (`Sink.maxConnections`).
        #expect(job.configuration.scenario.faults.maxConnections == nil)
    }

    /// A negative number is read as the option's value and refused for what it is, not taken
    /// for an unknown flag ("Missing value").
    @Test(arguments: [
        (["--threads", "-1"], "--threads must be 1…"),
        (["--sink-threads", "-2"], "--sink-threads must be 1…"),
        (["--connections", "-4"], "--connections must be at least 1"),
        (["--streams", "-1"], "--streams must be at least 1"),
        (["--attempts", "-1"], "--attempts must be 1…1,000; got -1"),
        (["--repeat", "-1"], "--repeat must be 1…1,000; got -1"),
    ])
    func negativeNumbersAreRefusedForWhatTheyAre(arguments: [String], message: String) {
        let refusal = Self.refusal(of: arguments)
        #expect(refusal?.contains(message) == true, "\(refusal ?? "\(arguments) was accepted")")
    }

    /// Durations, rates and shares are read by one grammar each, whichever command or file
    /// writes them: every spelling of one value makes the same job.
    @Test func eachValueHasOneGrammarEverywhere() throws {
        func schedule(_ rate: String) throws -> ArrivalSchedule? {
            try RunCommand.parse(["--rate", rate, "--duration", "2s"]).job().shape.model.schedule
        }
        #expect(try schedule("5000") == schedule("5000/s"))
        #expect(try schedule("300/1m")?.total == 10)
        #expect(try RunCommand.parse(["--timeout", "1500ms"]).job().shape.streamTimeout == .milliseconds(1500))
        for share in ["20%", "0.2"] {
            #expect(try RunCommand.parse(["--max-harness-share", share]).job().shape.model.maxHarnessShare == 0.2)
        }
        // The sink's rates and shares, from its options and from a scenario file alike.
        let spellings = [
            (["--connection-rate", "5000", "--unanswered", "0.001", "--error", "Unregistered:0.03"]),
            (["--connection-rate", "5000/s", "--unanswered", "0.1%", "--error", "Unregistered:3%"]),
        ]
        var file = SinkScenario()
        try file.apply(file: "connection-rate = 5000\nunanswered = 0.001\nerror = Unregistered:3%", source: "plan")
        let scenarios = try spellings.map { try SinkCommand.parse($0).job().configuration.scenario } + [file]
        for scenario in scenarios {
            #expect(scenario.connectionRate == Rate(limit: 5000, window: .seconds(1)))
            #expect(scenario.faults.unansweredShare == 0.001)
            #expect(scenario.errors.map(\.reason) == [.unregistered] && scenario.errors.map(\.probability) == [0.03])
        }
        // --apns-id and a header file's apns-id line: one vocabulary.
        let endpoint = ["--endpoint", "http://127.0.0.1:1", "--generate", "1", "--template", "fixtures/poll.json"]
        let timed = try SendCommand.parse(endpoint + ["--topic", "t", "--apns-id", "timed"]).job()
        #expect(timed.headers.timedAPNsIDs == 1 && !timed.headers.generatesAPNsID)
        let random = try SendCommand.parse(endpoint + ["--topic", "t", "--apns-id", "random"]).job()
        #expect(random.headers.generatesAPNsID && random.headers.timedAPNsIDs == 0)
    }

    /// Every option that counts devices, tokens or notifications reads one notation (`run --count
    /// 1M` was refused where `plan --devices 2.5M` was taken), and a value it refuses says what
    /// a count is.
    @Test func everyCountReadsOneNotation() throws {
        let send = ["--endpoint", "http://127.0.0.1:1", "--template", "fixtures/poll.json", "--topic", "t"]
        let plan = ["--deadline", "5m", "--rtt", "80ms"]
        let broadcast = ["--broadcast", "--update-every", "10s", "--rtt", "80ms"]
        let counts: [(option: String, read: (String) throws -> UInt64?)] = [
            ("--count", { try RunCommand.parse(["--count", $0]).job().count }),
            ("--generate", { try SendCommand.parse(send + ["--generate", $0]).tokenOptions.generate?.value }),
            ("--devices", { try PlanCommand.parse(plan + ["--devices", $0]).devices?.value }),
            (
                "--channels",
                { try PlanCommand.parse(broadcast + ["--subscribers", "1", "--channels", $0]).channels?.value }
            ),
            (
                "--subscribers",
                { try PlanCommand.parse(broadcast + ["--channels", "1", "--subscribers", $0]).subscribers?.value }
            ),
            ("--expect", { try SinkCommand.parse(["--expect", $0]).expect?.value }),
            ("--count", { try TokensCommand.Generate.parse(["--output", "t.txt", "--count", $0]).count.value }),
        ]
        for (option, read) in counts {
            for (text, value) in [("600000", 600_000), ("50K", 50_000), ("2.5M", 2_500_000), ("1M", 1_000_000)]
                as [(String, UInt64)]
            {
                #expect(try read(text) == value, "\(option) \(text)")
            }
            for text in ["1m", "0", "lots", "-3"] {
                do {
                    _ = try read(text)
                    Issue.record("\(option) \(text) was taken")
                } catch {
                    #expect(
                        RunCommand.message(for: error)
                            == "The value '\(text)' is invalid for '\(option) <n>': a count is a whole number of at least 1, or a number with K, M or B after it: 600000, 50K, 2.5M, 1B",
                        "\(option) \(text)"
                    )
                }
            }
        }
    }

    /// What is not a value of its kind is refused as the option is read, naming the option and
    /// how its value is written.
    @Test(arguments: [
        (["--timeout", "soon"], "The value 'soon' is invalid for '--timeout <duration>'"),
        (["--rate", "fast"], "The value 'fast' is invalid for '--rate <rate>'"),
        (["--rate", "5000/0s"], "The value '5000/0s' is invalid for '--rate <rate>'"),
        (["--max-harness-share", "most"], "The value 'most' is invalid for '--max-harness-share <share>'"),
        (["--start-at", "tomorrow"], "The value 'tomorrow' is invalid for '--start-at <time>'"),
        (["--timeout", "0s"], "--timeout: 0s is not a duration above 0"),
        (["--coalesce", "200ms"], "--coalesce: 200ms is longer than 100ms, the longest it takes"),
        (["--sink-coalesce", "150%"], "--sink-coalesce: 150% is not a share from 0 to 100%"),
        (["--coalesce", "soon"], "The value 'soon' is invalid for '--coalesce <auto|duration>'"),
    ])
    func aValueOfTheWrongKindNamesItsOption(arguments: [String], message: String) {
        let refusal = Self.refusal(of: arguments)
        #expect(refusal?.contains(message) == true, "\(refusal ?? "\(arguments) was accepted")")
    }

    /// The sink's latency, stall, rates, GOAWAY and share options are read by the scenario
    /// file's grammar as ArgumentParser reads them: a bad value is refused naming the option
    /// and saying how it is written, before the sink starts.
    @Test(arguments: [
        (["--latency", "fixed:soon"], "'fixed:soon' is invalid for '--latency <kind:values>': soon is not a duration"),
        (["--stall", "1s"], "'1s' is invalid for '--stall <every/length>': a stall is EVERY/LENGTH"),
        (["--stall", "1s/10s"], "a stall of 10s must be shorter than its period 1s"),
        (
            ["--connection-rate", "fast"],
            "'fast' is invalid for '--connection-rate <limit/window>': a rate is LIMIT/WINDOW"
        ),
        (["--token-rate", "100000/s"], "'--token-rate <limit/window>': token-rate allows at most 65535 per window"),
        (["--goaway-after-requests", "0"], "'0' is invalid for '--goaway-after-requests <n[:reason]>'"),
        (["--goaway-after-requests", "10:Sleepy"], "Sleepy is not an APNs reason"),
        (["--goaway-after-time", "soon"], "The value 'soon' is invalid for '--goaway-after-time <duration>'"),
        (["--unanswered", "200%"], "'200%' is invalid for '--unanswered <percent>': a share is from 0% to 100%"),
    ])
    func theSinksValuesAreRefusedNamingTheirOption(arguments: [String], message: String) {
        var refusal: String?
        do {
            _ = try SinkCommand.parse(arguments).job()
        } catch {
            refusal = SinkCommand.message(for: error)
        }
        #expect(refusal?.contains(message) == true, "\(refusal ?? "\(arguments) was accepted")")
    }

    /// What the typed options say reaches the scenario as the scenario file's lines would.
    @Test func theSinksTypedValuesReachTheScenario() throws {
        let scenario = try SinkCommand.parse([
            "--latency", "lognormal:80ms,0.5", "--stall", "10s/1s", "--token-rate", "10/1s",
            "--goaway-after-requests", "1000:InternalServerError", "--goaway-after-time", "2m",
        ]).job().configuration.scenario
        var file = SinkScenario()
        try file.apply(
            file: """
                latency = lognormal:80ms,0.5
                stall = 10s/1s
                token-rate = 10/1s
                goaway-after-requests = 1000:InternalServerError
                goaway-after-time = 2m
                """,
            source: "test"
        )
        #expect(
            scenario.latency == file.latency && scenario.latency == .logNormal(median: .milliseconds(80), sigma: 0.5)
        )
        #expect(scenario.stall?.every == .seconds(10) && scenario.stall?.length == .seconds(1))
        #expect(scenario.tokenRate == file.tokenRate && scenario.tokenRate == Rate(limit: 10, window: .seconds(1)))
        #expect(scenario.faults == file.faults)
        #expect(scenario.faults.goAwayAfterRequests == 1000 && scenario.faults.goAwayReason == .internalServerError)
        #expect(scenario.faults.goAwayAfter == .seconds(120))
    }

    /// The coalescing windows: the sender's and the embedded sink's, each the library's default
    /// unless given, `0s` and `0` for exact times.
    @Test func coalescingReachesTheSenderAndTheSink() throws {
        let defaults = try RunCommand.parse([]).job()
        #expect(defaults.shape.coalescing == .auto)
        #expect(defaults.shape.http2.wakeUpWindow == .microseconds(200), "auto: timed work on 200 µs")
        #expect(defaults.sink.coalescing.share == SinkConfiguration.defaultCoalescingShare)
        let given = try RunCommand.parse(["--coalesce", "1ms", "--sink-coalesce", "5%"]).job()
        #expect(given.shape.coalescing == .fixed(.milliseconds(1)))
        #expect(given.shape.http2.wakeUpWindow == .milliseconds(1))
        #expect(given.sink.coalescing.share == 0.05)
        let exact = try RunCommand.parse(["--coalesce", "0s", "--sink-coalesce", "0"]).job()
        #expect(exact.shape.http2.wakeUpWindow == .zero)
        #expect(exact.sink.coalescing.shift(forHold: 80_000_000) == 0)
    }

    /// What `fanout run` says of `arguments` as it reads them and builds its job; `nil` when
    /// it takes them.
    /// Token auth's three options go together in both commands that take them, refused in one
    /// sentence (`TokenKeyOptions`); the sink refuses all three beside --no-auth.
    @Test func theKeyTrioGoesTogether() throws {
        let key = ["--key-file", "key.p8"]
        let id = ["--key-id", "ABC123DEFG"]
        let team = ["--team-id", "TEAM"]
        let together = "Token auth needs --key-file, --key-id and --team-id together."
        func send(_ arguments: [String]) -> String? {
            do {
                let base = [
                    "--endpoint", "https://push.example:8443", "--tokens", "t.txt", "--template", "fixtures/poll.json",
                ]
                _ = try SendCommand.parse(base + arguments)
                return nil
            } catch {
                return SendCommand.message(for: error)
            }
        }
        func sink(_ arguments: [String]) -> String? {
            do {
                _ = try SinkCommand.parse(arguments)
                return nil
            } catch {
                return SinkCommand.message(for: error)
            }
        }
        for partial in [key, id + team, key + team, id] {
            #expect(send(partial)?.contains(together) == true, "send \(partial)")
            #expect(sink(partial)?.contains(together) == true, "sink \(partial)")
        }
        #expect(send(key + id + team) == nil)
        #expect(sink(key + id + team) == nil)
        #expect(
            sink(key + id + team + ["--no-auth"]) == "--no-auth and --key-file contradict each other."
        )
    }

    static func refusal(of arguments: [String]) -> String? {
        do {
            _ = try RunCommand.parse(arguments).job()
            return nil
        } catch {
            return RunCommand.message(for: error)
        }
    }

    /// `fanout search`'s defaults are the library's, written once there.
    @Test func searchDefaultsAreTheLibrarys() throws {
        let job = try SearchCommand.parse(["--slo", "p99 < 1s"]).job(output: "")
        #expect(job.bounds == RateSearch.Bounds())
        #expect(job.stepDuration == SearchJob.defaultStepDuration && job.warmUp == SearchJob.defaultWarmUp)
    }
}

/// The wire's and the windows' options reach their fields for `fanout sink`, `fanout run` and
/// `fanout plan`, and a value out of range is refused naming its option (exit 64).
@Suite struct WireOptionsTests {
    /// An option and a scenario file's line of the same name are one setting, read once
    /// (`SinkScenario.Setting`): the options give the scenario the file gives.
    @Test func anOptionAndAFileLineOfOneNameGiveOneScenario() throws {
        let settings: [(String, String)] = [
            ("rtt", "normal:80ms,5ms"), ("bandwidth", "100Mbit"), ("sink-bandwidth", "1Gbit"),
            ("connection-window", "65535"), ("stream-window", "16384"), ("window-refill", "each-frame"),
            ("error", "Unregistered:3%"), ("seed", "42"), ("close-after-requests", "7"), ("max-connections", "9"),
            ("device-offline", "30%"), ("device-return", "uniform:0s-120s"), ("device-store-cap", "1000"),
            ("device-background-budget", "5/1h"),
        ]
        let fromOptions = try SinkCommand.parse(settings.flatMap { ["--\($0.0)", $0.1] }).job().configuration.scenario
        var fromFile = SinkScenario()
        try fromFile.apply(file: settings.map { "\($0.0) = \($0.1)" }.joined(separator: "\n"), source: "test")
        #expect(fromOptions.wire?.roundTrip == fromFile.wire?.roundTrip)
        #expect(fromOptions.wire?.roundTrip == .normal(mean: .milliseconds(80), deviation: .milliseconds(5)))
        #expect(fromOptions.wire?.bandwidth == fromFile.wire?.bandwidth)
        #expect(fromOptions.wire?.sinkBandwidth == fromFile.wire?.sinkBandwidth)
        #expect(fromOptions.windows == fromFile.windows)
        #expect(fromOptions.errors.map(\.reason) == fromFile.errors.map(\.reason))
        #expect(fromOptions.errors.map(\.probability) == [0.03] && fromFile.errors.map(\.probability) == [0.03])
        #expect(fromOptions.seed == 42 && fromFile.seed == 42)
        #expect(fromOptions.faults.closeAfterRequests == 7 && fromFile.faults.closeAfterRequests == 7)
        #expect(fromOptions.faults.maxConnections == 9 && fromFile.faults.maxConnections == 9)
        #expect(fromOptions.devices == fromFile.devices)
        #expect(fromOptions.devices.offline == 0.3 && fromOptions.devices.storeCapacity == 1000)
    }

    @Test func sinkWireOptionsReachTheirFields() throws {
        let job = try SinkCommand.parse([
            "--rtt", "80ms", "--bandwidth", "100Mbit", "--sink-bandwidth", "1Gbit", "--connection-window", "65535",
            "--stream-window", "16384", "--window-refill", "each-frame",
        ]).job()
        let scenario = job.configuration.scenario
        #expect(scenario.wire?.roundTrip == .fixed(.milliseconds(80)))
        #expect(scenario.wire?.bandwidth == 12_500_000 && scenario.wire?.sinkBandwidth == 125_000_000)
        #expect(scenario.windows.connection == 65_535 && scenario.windows.stream == 16_384)
        #expect(scenario.windows.refill == .eachFrame)
        let defaults = try SinkCommand.parse([]).job().configuration.scenario
        #expect(defaults.wire == nil && defaults.windows == SinkWindows())
    }

    @Test func runTakesTheSinksRoundTrip() throws {
        let job = try RunCommand.parse(["--sink-rtt", "normal:80ms,5ms", "--sink-latency", "fixed:5ms"]).job()
        #expect(job.sink.scenario.wire?.roundTrip == .normal(mean: .milliseconds(80), deviation: .milliseconds(5)))
        #expect(job.sink.scenario.latency == .fixed(.milliseconds(5)))
        #expect(
            CommandOptionsTests.refusal(of: ["--sink-rtt", "0s"])
                == "The value '0s' is invalid for '--sink-rtt <duration>': rtt must be longer than 0; got 0s"
        )
    }

    @Test func planFlowOptionsReachTheirFields() throws {
        let job = try PlanCommand.parse([
            "--devices", "1M", "--deadline", "5m", "--rtt", "80ms", "--connection-window", "65535",
            "--stream-window", "1000", "--window-refill", "each-frame", "--body-bytes", "500", "--bandwidth", "10Mbit",
            "--nic", "10Gbit", "--cleartext",
        ]).job()
        let flow = job.question.flow
        #expect(flow.connectionWindow == 65_535 && flow.streamWindow == 1000 && flow.refill == .eachFrame)
        #expect(flow.bodyBytes == 500 && flow.bandwidth == 1_250_000 && flow.networkInterface == 1.25e9)
        #expect(!flow.tls)
        #expect(flow.sources.connectionWindow == "given" && flow.sources.bodyBytes == "given")
        let template = try PlanCommand.parse([
            "--devices", "1M", "--deadline", "5m", "--rtt", "80ms", "--template",
            CommandRunner.repositoryRoot + "/fixtures/poll.json",
        ]).job()
        #expect(template.question.flow.bodyBytes == 280)
        let defaults = try PlanCommand.parse(["--devices", "1M", "--deadline", "5m", "--rtt", "80ms"]).job()
        #expect(defaults.question.flow.connectionWindow == nil && defaults.question.flow.tls)
        #expect(defaults.question.flow.networkInterface == CapacityPlan.Flow.defaultNetworkInterface)
    }

    @Test(arguments: [
        (["sink", "--rtt", "0ms"], "'0ms' is invalid for '--rtt <duration>': rtt must be longer than 0"),
        (["sink", "--rtt", "-80ms"], "'-80ms' is invalid for '--rtt <duration>': rtt is a duration"),
        (["sink", "--bandwidth", "0Mbit"], "'0Mbit' is invalid for '--bandwidth <rate>': bandwidth must be above 0"),
        (
            ["sink", "--sink-bandwidth", "-1Gbit"],
            "'-1Gbit' is invalid for '--sink-bandwidth <rate>': sink-bandwidth must be above 0"
        ),
        (
            ["sink", "--connection-window", "2147483648"],
            "'2147483648' is invalid for '--connection-window <bytes>': connection-window must be from 65535"
        ),
        (
            ["sink", "--stream-window", "3000000000"],
            "'3000000000' is invalid for '--stream-window <bytes>': stream-window must be from 1 to 2^31−1"
        ),
        (
            ["plan", "--devices", "1M", "--deadline", "5m", "--rtt", "80ms", "--stream-window", "0"],
            "--stream-window must be 1…2,147,483,647 bytes (HTTP/2's largest window); got 0"
        ),
        (
            ["plan", "--devices", "1M", "--deadline", "5m", "--rtt", "80ms", "--window-refill", "threshold"],
            "--window-refill is half or each-frame"
        ),
        (["sink", "--rtt", "2s", "--bandwidth", "10Gbit"], "over the cap of 64 MiB a connection"),
        (
            ["plan", "--devices", "1M", "--deadline", "5m", "--rtt", "80ms", "--connection-window", "2147483648"],
            "--connection-window must be 65,535…2,147,483,647 bytes (HTTP/2's largest window); got 2,147,483,648"
        ),
        (
            ["plan", "--devices", "1M", "--deadline", "5m", "--rtt", "80ms", "--bandwidth", "0bit"],
            "--bandwidth must be above 0"
        ),
        (["plan", "--devices", "1M", "--deadline", "5m", "--rtt", "80ms", "--nic", "fast"], "--nic must be above 0"),
        (["plan", "--devices", "1M", "--deadline", "5m", "--rtt", "80ms", "--nic", "-1Gbit"], "--nic must be above 0"),
        (
            ["plan", "--devices", "1M", "--deadline", "5m", "--rtt", "80ms", "--body-bytes", "-5"],
            "--body-bytes must be 20…5,120 bytes (APNs takes at most 5,120); got -5"
        ),
    ])
    func badWireInputIsAUsageError(arguments: [String], message: String) throws {
        let result = try CommandRunner.run(arguments, timeout: .seconds(20))
        #expect(result.status == 64, "\(arguments): exit \(result.status)")
        #expect(result.standardError.contains(message), "\(arguments): \(result.standardError)")
    }
}
