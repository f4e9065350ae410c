import FanoutDevices
import FanoutResults
import FanoutScenarioTerms
import FanoutTestSupport
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import Testing

@testable import FanoutReturn

/// The return engine on its own: its requests as templates make them, its pool's bound, and
/// what it does when the backend is away, slow or refuses.
@Suite struct ReturnEngineTests {
    /// A fleet whose every device opens `after` its delivery (the default action, `requests`
    /// requests an open) and sends it to `url`.
    static func fleet(_ url: String, after: Duration = .zero, requests: Int = 1) throws -> DeviceFleetShards {
        var settings = DeviceFleetSettings()
        settings.engagement.open = 1
        settings.engagement.openAfter = .fixed(after)
        settings.engagement.requestsPerOpen = requests
        settings.engagement.returnTo = try ReturnURL(parsing: url)
        return DeviceFleetShards(settings: settings)
    }

    static func deliver(_ count: Int, to fleet: DeviceFleetShards, body: String = #"{"aps":{"alert":"hi"}}"#) {
        let now = NIODeadline.now().uptimeNanoseconds
        for index in 0..<count {
            let token = Array(String(format: "%064x", index + 1).utf8)
            let id = Array(String(format: "00000000-0000-4000-8000-%012x", index).utf8)
            token.withUnsafeBytes { token in
                id.withUnsafeBytes { id in
                    Array(body.utf8).withUnsafeBytes { body in
                        var notification = DeviceNotification(token: TokenList.hash(token), id: id)
                        notification.tokenText = token
                        notification.body = body
                        _ = fleet.accept(notification, now: now)
                    }
                }
            }
        }
    }

    /// A backend that refuses connections is named within a second, and every request it
    /// would have had is counted without an answer; the wave ends at once.
    @Test func anUnreachableBackendIsNamedFastAndCounted() throws {
        try withRefusingPort { port in
            let fleet = try Self.fleet("http://127.0.0.1:\(port)")
            let said = NIOLockedValueBox<[(String, UInt64)]>([])
            let wave = try ReturnWave(fleet: fleet, settings: ReturnWaveSettings()) { line in
                said.withLockedValue { $0.append((line, NIODeadline.now().uptimeNanoseconds)) }
            }
            let started = NIODeadline.now().uptimeNanoseconds
            wave.start()
            Self.deliver(500, to: fleet)
            #expect(try wave.settle(within: .seconds(10)))
            let figures = try wave.finish()
            let lines = said.withLockedValue { $0 }
            #expect(lines.count == 1, "\(lines.map(\.0))")
            let line = try #require(lines.first)
            #expect(line.0.hasPrefix("the return wave cannot reach http://127.0.0.1:\(port): "), "\(line.0)")
            #expect(line.1 - started < 1_000_000_000)
            #expect(figures.offered == 500 && figures.answered == 0 && figures.errors == 500)
            #expect(figures.failures.values.reduce(0, +) == 500 && (figures.failures["connect"] ?? 0) >= 1)
            #expect(Set(figures.failures.keys).isSubset(of: ["connect", "unreachable"]))
        }
    }

    /// `--return-request` and `--return-body` as users write them: the fields filled, the
    /// path under `--return-to`'s; the launch fetches numbered.
    @Test func templatesMakeTheRequests() throws {
        let backend = try CountingBackend()
        defer { backend.close() }
        let fleet = try Self.fleet(backend.url + "/api", requests: 3)
        var settings = ReturnWaveSettings()
        settings.campaign = "spring"
        settings.templates[.open] = try ReturnRequestTemplate(
            parsing: "PUT /opens/{campaign}/{token}",
            body: #"{"id":"{apns-id}","n":{n}}"#
        )
        let wave = try ReturnWave(fleet: fleet, settings: settings) { _ in }
        wave.start()
        Self.deliver(2, to: fleet)
        #expect(try wave.settle(within: .seconds(10)))
        _ = try wave.finish()
        let arrivals = backend.all.sorted { ($0.token, $0.path) < ($1.token, $1.path) }
        let token = String(format: "%064x", 1)
        let mine = arrivals.filter { $0.token == token }
        #expect(
            mine.map(\.path) == ["/api/launch/1", "/api/launch/2", "/api/opens/spring/\(token)"],
            "\(mine.map(\.path))"
        )
        #expect(mine.map(\.method) == ["GET", "GET", "PUT"])
        #expect(mine.last?.bodyBytes == #"{"id":"00000000-0000-4000-8000-000000000000","n":0}"#.utf8.count, "\(mine)")
        #expect(arrivals.count == 6)
        // What cannot be a request.
        #expect(throws: ReturnSettingsError("a return request is METHOD PATH, like POST /v1/opens; got post /x")) {
            try ReturnRequestTemplate(parsing: "post /x")
        }
        #expect(throws: ReturnSettingsError("a return request is METHOD PATH, like POST /v1/opens; got GET x")) {
            try ReturnRequestTemplate(parsing: "GET x")
        }
        #expect(
            throws: ReturnSettingsError(
                "/x/{token: a { opens no field (they are {token}, {apns-id}, {action}, {campaign}, {event}, {n})"
            )
        ) {
            try ReturnRequestTemplate(parsing: "GET /x/{token")
        }
    }

    /// At most `--return-pool` connections however many requests wait; each kept alive.
    @Test func thePoolBoundsTheConnections() throws {
        let backend = try CountingBackend(serviceTime: .milliseconds(20))
        defer { backend.close() }
        let fleet = try Self.fleet(backend.url)
        var settings = ReturnWaveSettings()
        settings.poolSize = 4
        let wave = try ReturnWave(fleet: fleet, settings: settings) { _ in }
        wave.start()
        Self.deliver(200, to: fleet)
        #expect(try wave.settle(within: .seconds(20)))
        let figures = try wave.finish()
        #expect(backend.count == 200 && figures.answered == 200)
        #expect(backend.peakConnections <= 4 && backend.totalConnections <= 4, "\(backend.totalConnections)")
        // 200 requests of 20 ms over 4 connections take about a second: the last waited that
        // long, and its latency (from its due time) says so; the service time alone does not.
        #expect(
            figures.latency.maxMicros >= 900_000 && figures.service.p50Micros < 200_000,
            "\(figures.latency) \(figures.service)"
        )
    }

    /// A request unanswered within `--return-timeout` fails `timeout` and its connection closes.
    @Test func aSlowBackendTimesOut() throws {
        let backend = try CountingBackend(serviceTime: .seconds(3))
        defer { backend.close() }
        let fleet = try Self.fleet(backend.url)
        var settings = ReturnWaveSettings()
        settings.requestTimeout = .milliseconds(300)
        let wave = try ReturnWave(fleet: fleet, settings: settings) { _ in }
        wave.start()
        Self.deliver(3, to: fleet)
        #expect(try wave.settle(within: .seconds(10)))
        let figures = try wave.finish()
        #expect(figures.failures == ["timeout": 3] && figures.answered == 0 && figures.errors == 3)
    }

    /// Events due after the wave stops are counted not sent.
    @Test func whatIsDueAfterTheEndIsNotSent() throws {
        let backend = try CountingBackend()
        defer { backend.close() }
        let fleet = try Self.fleet(backend.url, after: .seconds(3600))
        let wave = try ReturnWave(fleet: fleet, settings: ReturnWaveSettings()) { _ in }
        wave.start()
        Self.deliver(5, to: fleet)
        #expect(try !wave.settle(within: .milliseconds(100)))
        let figures = try wave.finish()
        #expect(figures.notSent == 5 && figures.offered == 0 && backend.count == 0)
    }

    /// An `https://` backend that speaks no TLS (this cleartext one): the handshake fails, which
    /// is said once as a backend that cannot be reached, and each request counted `connect` or
    /// `unreachable` — not a connection a request, each failing it as `closed`.
    @Test func aFailedHandshakeIsAnUnreachableBackend() throws {
        let backend = try CountingBackend()
        defer { backend.close() }
        let fleet = try Self.fleet("https://127.0.0.1:\(backend.port)")
        let said = NIOLockedValueBox<[String]>([])
        let wave = try ReturnWave(fleet: fleet, settings: ReturnWaveSettings()) { line in
            said.withLockedValue { $0.append(line) }
        }
        wave.start()
        Self.deliver(300, to: fleet)
        #expect(try wave.settle(within: .seconds(10)))
        let figures = try wave.finish()
        let lines = said.withLockedValue { $0 }
        #expect(
            lines.count == 1 && lines[0].hasPrefix("the return wave cannot reach https://127.0.0.1:\(backend.port): "),
            "\(lines)"
        )
        #expect(
            figures.answered == 0 && figures.errors == 300 && figures.failures["closed"] == nil,
            "\(figures.failures)"
        )
        #expect(backend.count == 0 && backend.totalConnections < 300, "\(backend.totalConnections) connections")
    }

    /// HTTP/2 (`--return-http 2`) where the backend is not there, does not speak it, or does
    /// not answer: a refused port said once within a second; an HTTP/1.1 server (this counting
    /// backend, which answers h2c's preface 400) said as a backend that answers in HTTP/1, every request failed `connect` or `unreachable`, not a connection a
    /// request; a listener that never answers fails each stream at the timeout.
    @Test func http2WhereTheBackendCannotAnswer() throws {
        var settings = ReturnWaveSettings()
        settings.httpVersion = .http2
        func wave(
            _ url: String,
            _ settings: ReturnWaveSettings,
            deliveries: Int
        ) throws -> (ReturnWaveSummary, [String]) {
            let fleet = try Self.fleet(url)
            let said = NIOLockedValueBox<[String]>([])
            let wave = try ReturnWave(fleet: fleet, settings: settings) { line in
                said.withLockedValue { $0.append(line) }
            }
            wave.start()
            Self.deliver(deliveries, to: fleet)
            #expect(try wave.settle(within: .seconds(10)))
            return (try wave.finish(), said.withLockedValue { $0 })
        }
        try withRefusingPort { port in
            let (figures, lines) = try wave("http://127.0.0.1:\(port)", settings, deliveries: 300)
            #expect(lines.count == 1 && lines[0].hasPrefix("the return wave cannot reach http://127.0.0.1:\(port): "))
            #expect(figures.errors == 300 && Set(figures.failures.keys).isSubset(of: ["connect", "unreachable"]))
        }
        let backend = try CountingBackend()
        defer { backend.close() }
        let (figures, lines) = try wave(backend.url, settings, deliveries: 300)
        #expect(
            lines == [
                "the return wave cannot reach \(backend.url): the server answered in HTTP/1: HTTP/1.1 400 Bad Request"
            ],
            "\(lines)"
        )
        #expect(figures.errors == 300 && Set(figures.failures.keys).isSubset(of: ["connect", "unreachable"]))
        #expect(backend.count == 0 && backend.totalConnections <= 3, "\(backend.totalConnections) connections")
        try withSilentListener { port in
            var slow = settings
            slow.requestTimeout = .milliseconds(300)
            let (figures, _) = try wave("http://127.0.0.1:\(port)", slow, deliveries: 3)
            #expect(figures.failures == ["timeout": 3] && figures.answered == 0, "\(figures.failures)")
        }
    }

    /// A payload without `category-actions` offers its `aps.category`'s actions from the category
    /// file: poll_ok in the foreground (its own request, then the launch fetches), poll_nok in
    /// the background (its one request, no open); a notification of another category carries
    /// neither, and its devices take the default action, counted not carried.
    @Test func theCategoryFileGivesActionsTheirModeAndRequest() throws {
        let backend = try CountingBackend()
        defer { backend.close() }
        var settings = DeviceFleetSettings()
        settings.engagement.open = 1
        settings.engagement.openAfter = .fixed(.zero)
        settings.engagement.requestsPerOpen = 3
        settings.engagement.actions = [.init(name: "poll_ok", share: 0.6), .init(name: "poll_nok", share: 0.3)]
        settings.engagement.categories = try ActionCategories(
            parsing: """
                poll poll_ok  foreground POST /polls/{campaign}/ok
                poll poll_nok background POST /polls/{campaign}/nok
                """,
            file: "app.categories"
        )
        settings.engagement.returnTo = try ReturnURL(parsing: backend.url)
        try settings.validate()
        let fleet = DeviceFleetShards(settings: settings)
        let wave = try ReturnWave(fleet: fleet, settings: ReturnWaveSettings()) { _ in }
        wave.start()
        Self.deliver(2_000, to: fleet, body: #"{"aps":{"alert":"Vote?","category":"poll"}}"#)
        #expect(try wave.settle(within: .seconds(20)))
        var figures = try wave.finish()
        let arrivals = backend.all
        let ok = arrivals.count { $0.path == "/polls/fanout/ok" && $0.method == "POST" && $0.action == "poll_ok" }
        let nok = arrivals.count { $0.path == "/polls/fanout/nok" && $0.method == "POST" && $0.action == "poll_nok" }
        let defaults = arrivals.count { $0.path == "/opens" }
        #expect(ok + nok + defaults == 2_000)
        // Foreground opens make two launch fetches each; background actions none.
        #expect(arrivals.count { $0.event == "launch" } == 2 * (ok + defaults))
        #expect(abs(Double(ok) / 2_000 - 0.6) <= 0.04 && abs(Double(nok) / 2_000 - 0.3) <= 0.04, "\(ok) \(nok)")
        #expect(figures.devices.backgroundActions == nok && figures.devices.opens == ok + defaults)
        #expect(
            figures.devices.actions == ["poll_ok": ok, "poll_nok": nok]
                && figures.devices.notCarried.values.allSatisfy { $0 == 0 }
        )

        // A payload with category-actions of its own offers those, not the file's: poll_ok
        // and poll_nok, which it does not carry, are taken as the default action.
        let carrying = DeviceFleetShards(settings: settings)
        let third = try ReturnWave(fleet: carrying, settings: ReturnWaveSettings()) { _ in }
        third.start()
        Self.deliver(
            200,
            to: carrying,
            body:
                #"{"aps":{"alert":"Vote?","category":"poll"},"category-actions":[{"name":"other","value":"https://x/o"}]}"#
        )
        #expect(try third.settle(within: .seconds(20)))
        let own = try third.finish()
        #expect(own.devices.defaultOpens == 200 && own.devices.backgroundActions == 0, "\(own.devices)")

        // Another category: neither action carried.
        let other = DeviceFleetShards(settings: settings)
        let second = try ReturnWave(fleet: other, settings: ReturnWaveSettings()) { _ in }
        second.start()
        Self.deliver(200, to: other, body: #"{"aps":{"alert":"Hi","category":"news"}}"#)
        #expect(try second.settle(within: .seconds(20)))
        figures = try second.finish()
        let drawn = figures.devices.notCarried.values.reduce(0, +)
        #expect(figures.devices.defaultOpens == 200 && drawn > 100 && figures.devices.backgroundActions == 0)
    }
}
