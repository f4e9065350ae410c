import FanoutAPNs
import FanoutRandom
import FanoutTestSupport
import Foundation
import NIOCore
import Testing

@testable import FanoutDevices
@testable import FanoutScenarioTerms
@testable import FanoutSink

/// Scenario files say what the options say; rate limits per token and per connection.
@Suite struct ScenarioFileTests {
    static func folder() throws -> String {
        let folder = NSTemporaryDirectory() + "fanout-scenario-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test func aFileSetsEverySetting() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let gone = String(repeating: "cd", count: 32)
        try "# dead devices\n\(gone)\n".write(toFile: folder + "/gone.txt", atomically: true, encoding: .utf8)
        try "1ms\n2ms\n".write(toFile: folder + "/latency.txt", atomically: true, encoding: .utf8)
        try "\(String(repeating: "ef", count: 32))\n".write(
            toFile: folder + "/bad.txt",
            atomically: true,
            encoding: .utf8
        )
        let text = """
            # a capacity plan's bad day
            latency = empirical:latency.txt
            stall = 30s/1s
            error = InternalServerError:0.1%
              error   =   Unregistered:3%
            unregistered-tokens = gone.txt
            bad-tokens = \(folder)/bad.txt
            seed = 42
            token-rate = 10/1m
            connection-rate = 5000/s
            goaway-after-requests = 1000:ServiceUnavailable
            goaway-after-time = 5m
            close-after-requests = 7000
            unanswered = 0.5%
            max-connections = 20
            bandwidth = 100Mbit
            rtt = 80ms
            sink-bandwidth = 1Gbit
            connection-window = 65535
            stream-window = 64KiB
            window-refill = each-frame

            """
        try text.write(toFile: folder + "/plan.scenario", atomically: true, encoding: .utf8)
        let scenario = try SinkScenario(contentsOfFile: folder + "/plan.scenario")
        #expect(scenario.latency == .empirical([.milliseconds(1), .milliseconds(2)]))
        #expect(scenario.stall?.every == .seconds(30) && scenario.stall?.length == .seconds(1))
        #expect(scenario.errors.map(\.reason) == [.internalServerError, .unregistered])
        #expect(scenario.errors.map(\.probability) == [0.001, 0.03])
        #expect(scenario.unregisteredTokens.count == 1 && scenario.badTokens.count == 1)
        #expect(scenario.seed == 42)
        #expect(scenario.tokenRate == Rate(limit: 10, window: .seconds(60)))
        #expect(scenario.connectionRate?.perSecond == 5000)
        #expect(scenario.faults.goAwayAfterRequests == 1000 && scenario.faults.goAwayReason == .serviceUnavailable)
        #expect(scenario.faults.goAwayAfter == .seconds(300))
        #expect(scenario.faults.closeAfterRequests == 7000)
        #expect(scenario.faults.unansweredShare == 0.005)
        #expect(scenario.faults.maxConnections == 20)
        // A bandwidth before the round trip it belongs to is kept.
        #expect(scenario.wire?.roundTrip == .fixed(.milliseconds(80)))
        #expect(scenario.wire?.bandwidth == 12_500_000 && scenario.wire?.sinkBandwidth == 125_000_000)
        #expect(scenario.windows.connection == 65_535 && scenario.windows.stream == 65_536)
        #expect(scenario.windows.refill == .eachFrame)
        // Every setting a file can hold is one the command line has.
        #expect(Set(SinkScenario.settingNames).count == 19 + DeviceFleetSettings.settingNames.count)
    }

    @Test func problemsNameTheFileAndLine() throws {
        let cases: [(String, String)] = [
            ("seed = 1\nlatncy = fixed:1ms", "plan:2: latncy is not a scenario setting; the settings are latency,"),
            ("seed 1", "plan:1: expected NAME = VALUE, got seed 1"),
            ("seed = 1\n\n# fine\nseed = 2", "plan:4: seed is set twice"),
            ("latency =", "plan:1: latency has no value"),
            ("stall = 1s/10s", "plan:1: a stall of 10s must be shorter than its period 1s"),
            ("token-rate = 0/1s", "plan:1: a rate is LIMIT/WINDOW with a whole LIMIT ≥ 1"),
            ("token-rate = 100000/1s", "plan:1: token-rate allows at most 65535 per window"),
            ("connection-rate = 10/0s", "plan:1: a rate is LIMIT/WINDOW with a whole LIMIT ≥ 1 and a WINDOW above 0"),
            ("connection-rate = 2.5/s", "plan:1: a rate is LIMIT/WINDOW with a whole LIMIT ≥ 1"),
            ("unregistered-tokens = missing.txt", "plan:1: cannot read the token list missing.txt"),
            ("max-connections = 0", "plan:1: max-connections takes a whole number of at least 1, not 0"),
            ("error = Unregistered:60%\nerror = BadDeviceToken:50%", "plan: the error probabilities add up to 1.1"),
        ]
        for (text, message) in cases {
            var scenario = SinkScenario()
            #expect {
                try scenario.apply(file: text, source: "plan")
            } throws: { error in
                (error as? SinkScenarioError)?.description.hasPrefix(message) == true
            }
        }
        #expect(throws: SinkScenarioError.self) { try SinkScenario(contentsOfFile: "/nonexistent/plan") }
    }

    /// A token list takes the lines `fanout send` reads (a token, then fields after a tab, CRLF
    /// line ends), and a line that is not a token is named by file, line and column.
    @Test func tokenListsTakeTheSendersLines() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let gone = String(repeating: "cd", count: 32)
        let lost = String(repeating: "EF", count: 32)
        try "\(gone)\t3\tAlice\r\n\(lost)\r\n".write(toFile: folder + "/gone.txt", atomically: true, encoding: .utf8)
        var scenario = SinkScenario()
        try scenario.apply(file: "unregistered-tokens = \(folder)/gone.txt", source: "plan")
        #expect(scenario.unregisteredTokens.count == 2)
        #expect(Array(lost.lowercased().utf8).withUnsafeBytes { scenario.unregisteredTokens.contains($0) })

        try "\(gone)\nnot a token\n".write(toFile: folder + "/bad.txt", atomically: true, encoding: .utf8)
        #expect {
            try scenario.apply(file: "bad-tokens = \(folder)/bad.txt", source: "plan")
        } throws: { error in
            (error as? SinkScenarioError)?.description.hasPrefix("plan:1: \(folder)/bad.txt:2:1: ") == true
        }
    }

    // MARK: Rate limits

    static func harness(_ scenario: SinkScenario) -> SinkHarness {
        var configuration = SinkConfiguration()
        configuration.scenario = scenario
        return SinkHarness(configuration)
    }

    @Test func aTokenOverItsRateGets429AndOthersDoNot() {
        var scenario = SinkScenario()
        scenario.tokenRate = Rate(limit: 3, window: .seconds(3600))
        var harness = Self.harness(scenario)
        let busy = String(repeating: "ab", count: 32)
        let other = String(repeating: "cd", count: 32)
        let statuses = (0..<5).map { _ in harness.send(SinkHarness.fields(token: busy))?.status }
        #expect(statuses == [200, 200, 200, 429, 429])
        let response = harness.send(SinkHarness.fields(token: busy))
        #expect(response?.reason == "TooManyRequests")
        #expect(harness.send(SinkHarness.fields(token: other))?.status == 200)
        // Validation comes first: a bad request is not counted against the token.
        #expect(harness.send(SinkHarness.fields(token: other, [("apns-push-type", "nope")]))?.status == 400)
        #expect(harness.send(SinkHarness.fields(token: other))?.status == 200)
        #expect(harness.send(SinkHarness.fields(token: other))?.status == 200)
        #expect(harness.send(SinkHarness.fields(token: other))?.status == 429)
    }

    @Test func theLimitIsPerWindowAndSharedByConnections() {
        let second: UInt64 = 1_000_000_000
        let limiter = TokenRateLimiter(limit: 2, window: second, startedAt: 10 * second)
        let hash: UInt64 = 0xDEAD_BEEF_0000_0001
        #expect([0, 1, 2].map { limiter.admit(hash: hash, now: 10 * second + $0) } == [true, true, false])
        // The next window starts afresh.
        #expect(limiter.admit(hash: hash, now: 11 * second))
        #expect(limiter.admit(hash: hash, now: 11 * second + 5))
        #expect(!limiter.admit(hash: hash, now: 12 * second - 1))

        // Two sink connections share one limiter through the sink's state.
        var scenario = SinkScenario()
        scenario.tokenRate = Rate(limit: 2, window: .seconds(3600))
        var configuration = SinkConfiguration()
        configuration.scenario = scenario
        let state = SinkState(scenario: scenario)
        var one = SinkHarness(configuration, state: state)
        var another = SinkHarness(configuration, state: state)
        #expect(one.send(SinkHarness.fields())?.status == 200)
        #expect(another.send(SinkHarness.fields())?.status == 200)
        #expect(one.send(SinkHarness.fields())?.status == 429)
        #expect(another.send(SinkHarness.fields())?.status == 429)
    }

    @Test func distinctTokensNeverGet429WhateverTheirNumber() {
        // 1,000 tokens a slot on average in the same window: collisions only forget counts.
        let limiter = TokenRateLimiter(limit: 1, window: 1_000_000_000_000, startedAt: 0)
        var random = SeededRandom(seed: 9)
        var refused = 0
        for _ in 0..<(TokenRateLimiter.slotCount * 2) where !limiter.admit(hash: random.next(), now: 1) {
            refused += 1
        }
        #expect(refused == 0)
    }

    /// Exactly 100 ms apart, with coalescing on or off: the pacing is a floor, never moved.
    @Test(arguments: [true, false])
    func aConnectionsAnswersArePacedToItsCeiling(coalescing: Bool) throws {
        var configuration = SinkConfiguration()
        configuration.scenario.connectionRate = Rate(limit: 10, window: .seconds(1))
        if !coalescing { configuration.coalescing = .off }
        var harness = SinkHarness(configuration)
        let start = NIODeadline.now()
        for _ in 0..<5 { _ = harness.send(SinkHarness.fields()) }
        // The first goes out at once; the others wait 100 ms apart.
        #expect(harness.responses.count == 1)
        var answered: [NIODeadline] = []
        while let due = harness.sink.nextTimedEvent, answered.count < 4 {
            answered.append(due)
            harness.wakeSink(now: due)
            harness.pump()
        }
        #expect(harness.responses.count == 5)
        #expect(harness.responses.values.allSatisfy { $0.status == 200 })
        let gaps = zip(answered.dropFirst(), answered).map { ($0 - $1).nanoseconds }
        #expect(gaps.allSatisfy { $0 == 100_000_000 }, "\(gaps)")
        #expect(answered[0] - start <= .milliseconds(150))
    }

    @Test func countsReachTheStatisticsWithinASecondWithoutMoreRequests() throws {
        var configuration = SinkConfiguration()
        configuration.idleTimeout = nil  // so that the counts are all that is due
        configuration.requestTimeout = nil
        var harness = SinkHarness(configuration)
        #expect(harness.send(SinkHarness.fields())?.status == 200)
        #expect(harness.send(SinkHarness.fields(token: "abc"))?.status == 400)
        #expect(harness.statistics.summary.requests == 0)
        #expect(harness.statistics.openConnections.map(\.requests) == [0])
        let due = try #require(harness.sink.nextWakeUp)
        #expect(due <= .now() + .seconds(1))
        harness.wakeSink(now: due)
        #expect(harness.statistics.summary.requests == 2)
        let connection = try #require(harness.statistics.openConnections.first)
        #expect(connection.accepted == 1)
        #expect(connection.rejected == [.badDeviceToken: 1])
        #expect(connection.bodyBytes == 2 * 280)
        #expect(harness.sink.nextWakeUp == nil)
        let json = try SinkStatsDocument(json: harness.statistics.json())
        let open = try #require(json.openConnections.first)
        #expect(open.byReason == ["BadDeviceToken": 1])
        #expect(open.byStatus == ["200": 1, "400": 1])
        #expect(open.peer == "in-memory")
    }

    /// The fleet's settings in a scenario file: problems name the file and its line, and the
    /// settings (`DeviceFleetTests.badSettingsNameTheirOption` checks them as options).
    @Test func badDeviceSettingsNameTheFileAndLine() {
        var scenario = SinkScenario()
        do {
            try scenario.apply(file: "device-offline = 80%\ndevice-low-power = 30%\n", source: "fleet.conf")
            Issue.record("shares over 100% were taken")
        } catch {
            #expect(error.description.hasPrefix("fleet.conf: --device-offline (80%) and --device-low-power (30%)"))
        }
        do {
            try scenario.apply(file: "device-delay = lognormal:300ms\n", source: "fleet.conf")
            Issue.record("an unreadable spread was taken")
        } catch {
            #expect(error.description.hasPrefix("fleet.conf:1: "))
        }
    }

    /// Each setting of a scenario file (and so of `--device-…`) reaches its property.
    @Test func everyDeviceSettingReachesItsProperty() throws {
        let categories = NSTemporaryDirectory() + "fanout-categories-\(UUID().uuidString)"
        try "poll OK foreground\npoll NOK background\n".write(toFile: categories, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: categories) }
        var scenario = SinkScenario()
        try scenario.apply(
            file: """
                device-offline = 30%
                device-low-power = 10%
                device-disabled = 2%
                device-uninstalled = 1%
                device-return = uniform:0s-120s
                device-delay = lognormal:300ms,0.5
                device-store-cap = 5000
                device-default-expiry = 2h
                device-burst-interval = 5m
                device-background-budget = 3/1h
                device-stale-after = 30m
                device-open = 3%
                device-open-after = uniform:0s-10s
                device-actions = OK=60%,NOK=30%
                device-requests-per-open = 4
                device-media-budget = 20s
                device-categories = \(categories)
                return-to = http://127.0.0.1:8080/api
                """,
            source: "fleet.conf"
        )
        let devices = scenario.devices
        #expect(devices.offline == 0.3 && devices.lowPower == 0.1)
        #expect(devices.disabled == 0.02 && devices.uninstalled == 0.01)
        #expect(devices.returnAfter == .uniform(.zero, .seconds(120)))
        #expect(devices.delay == .logNormal(median: .milliseconds(300), sigma: 0.5))
        #expect(devices.storeCapacity == 5000)
        #expect(devices.defaultExpiry == .seconds(7200) && devices.burstInterval == .seconds(300))
        #expect(devices.isEnabled)
        #expect(devices.backgroundBudget == Rate(limit: 3, window: .seconds(3600)))
        #expect(devices.staleAfter == .seconds(1800))
        let engagement = devices.engagement
        #expect(engagement.open == 0.03 && engagement.openAfter == .uniform(.zero, .seconds(10)))
        #expect(engagement.actions == [.init(name: "OK", share: 0.6), .init(name: "NOK", share: 0.3)])
        #expect(engagement.requestsPerOpen == 4 && engagement.mediaBudget == .seconds(20))
        #expect(engagement.returnTo?.description == "http://127.0.0.1:8080/api")
        #expect(engagement.categories?.actions.map(\.id) == ["OK", "NOK"])
        #expect(DeviceFleetSettings.settingNames.count == 18)
        var never = DeviceFleetSettings()
        never.returnAfter = .fixed(.seconds(1))
        try never.set("device-return", "never")
        #expect(never.returnAfter == nil)
    }
}
