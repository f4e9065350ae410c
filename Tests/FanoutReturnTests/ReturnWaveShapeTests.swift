import FanoutDevices
import FanoutResults
import FanoutScenarioTerms
import FanoutTestSupport
import Foundation
import NIOCore
import Testing

@testable import FanoutReturn

/// The return wave against what its model says must happen (issue #63: its shape at a backend): a fleet
/// told of 100,000 deliveries at one instant, a counting backend beside it, and the requests it
/// got counted by second against the model's own arithmetic.
@Suite struct ReturnWaveShapeTests {
    /// The seed's poll: mutable-content, two URL actions.
    static let poll =
        #"{"aps":{"alert":{"title":"Poll","body":"Do you like the new design?"},"badge":1,"sound":"default","category":"poll","mutable-content":1},"category-actions":[{"name":"OK","type":"url","value":"https://example.com/ok"},{"name":"NOK","type":"url","value":"https://example.com/nok"}]}"#
    /// The same poll without mutable-content: no media to download.
    static let plainPoll = poll.replacingOccurrences(of: #","mutable-content":1"#, with: "")

    static func token(_ index: Int) -> String {
        var bits = UInt64(index) &* 0x9E37_79B9_7F4A_7C15
        var text = ""
        for _ in 0..<4 {
            bits = bits &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            text += String(format: "%016llx", bits)
        }
        return text
    }

    /// Tells `fleet` that `count` notifications reached their devices at `now`; every
    /// `mediaEvery`-th one carries mutable-content. Returns how many did.
    static func deliver(_ count: Int, to fleet: DeviceFleetShards, at now: UInt64, mediaEvery: Int) -> Int {
        var media = 0
        for index in 0..<count {
            let token = Array(token(index).utf8)
            let id = Array(String(format: "00000000-0000-4000-8000-%012x", index).utf8)
            let body = Array((index % mediaEvery == 0 ? poll : plainPoll).utf8)
            if index % mediaEvery == 0 { media += 1 }
            token.withUnsafeBytes { tokenBytes in
                id.withUnsafeBytes { idBytes in
                    body.withUnsafeBytes { bodyBytes in
                        var notification = DeviceNotification(token: TokenList.hash(tokenBytes), id: idBytes)
                        notification.tokenText = tokenBytes
                        notification.body = bodyBytes
                        _ = fleet.accept(notification, now: now)
                    }
                }
            }
        }
        return media
    }

    /// 20,000 devices get the poll at one instant (3 s ahead, so that telling the fleet is done
    /// before it); 20% open it uniformly over the next 5 s, each open two requests; OK takes 60%
    /// of the opens, NOK 30%, the default action the rest; one notification in 20 is
    /// mutable-content. The backend must get two requests for each open the fleet drew (4,000 of
    /// them within 4σ), none before its due time, the wave offering a fifth of them a second ± 15%
    /// in seconds 1–4, the actions by their shares ± 2 points, and one media download per
    /// mutable-content delivery at the instant. (A debug build's engine and backend share this
    /// process; the 100,000-device case runs against the release build: GroundTruthTests.)
    @Test func aWaveKeepsItsShapeAtTheBackend() throws {
        let backend = try CountingBackend(threads: 1)
        defer { backend.close() }
        var settings = DeviceFleetSettings()
        settings.engagement.open = 0.2
        settings.engagement.openAfter = .uniform(.zero, .seconds(5))
        settings.engagement.actions = [.init(name: "OK", share: 0.6), .init(name: "NOK", share: 0.3)]
        settings.engagement.requestsPerOpen = 2
        settings.engagement.returnTo = try ReturnURL(parsing: backend.url)
        let fleet = DeviceFleetShards(settings: settings)
        var waveSettings = ReturnWaveSettings()
        waveSettings.campaign = "spring"
        let wave = try ReturnWave(fleet: fleet, settings: waveSettings, say: { _ in })
        wave.start()
        let start = NIODeadline.now().uptimeNanoseconds + 3_000_000_000
        let media = Self.deliver(20_000, to: fleet, at: start, mediaEvery: 20)
        try #require(NIODeadline.now().uptimeNanoseconds < start, "telling the fleet took over 3 s")
        #expect(try wave.settle(within: .seconds(60)))
        let figures = try wave.finish()
        let arrivals = backend.all
        let opens = arrivals.filter { $0.event != "media" }
        let engaged = fleet.snapshot().engaged

        // 4,000 opens (a binomial draw of 20,000 at 20%: σ 57; within 4σ), and the backend got
        // two requests for each open the fleet counted, no more, no less.
        #expect(abs(engaged.opens - 4_000) <= 226, "\(engaged.opens) opens")
        #expect(opens.count == 2 * engaged.opens, "\(opens.count) open requests for \(engaged.opens) opens")
        // The wave offered seconds 1–4 a fifth of the open requests each ± 15%, by their due
        // times (the engine's own count, which the host's load cannot move: the backend's count
        // by arrival second is the release build's ground truth, ReturnWaveGroundTruthTests).
        let opensOffered = figures.seconds.map { $0.offered }
        let each = Double(opens.count) / 5
        for second in 1...4 where second < opensOffered.count {
            // The media downloads are due at the instant, in second 0.
            #expect(
                abs(Double(opensOffered[second]) - each) <= 0.15 * each,
                "second \(second): \(opensOffered) offered"
            )
        }
        #expect(opensOffered.count >= 5 && opensOffered.reduce(0, +) == arrivals.count)
        // Nothing before the instant: no event goes out early.
        #expect(arrivals.allSatisfy { $0.time >= start })
        // The actions by their shares ± 2 points (of the opens), each open's first request
        // naming its action; the URL actions fetch their URL's path with GET.
        let firsts = opens.filter { $0.event != "launch" }
        #expect(firsts.count == engaged.opens)
        let share = { (action: String) in Double(firsts.count { $0.action == action }) / Double(firsts.count) }
        #expect(
            abs(share("OK") - 0.6) <= 0.02 && abs(share("NOK") - 0.3) <= 0.02 && abs(share("default") - 0.1) <= 0.02
        )
        #expect(firsts.filter { $0.action == "OK" }.allSatisfy { $0.path == "/ok" && $0.method == "GET" })
        #expect(firsts.filter { $0.action == "NOK" }.allSatisfy { $0.path == "/nok" && $0.method == "GET" })
        #expect(
            firsts.filter { $0.action == "default" }.allSatisfy {
                $0.path == "/opens" && $0.method == "POST" && $0.bodyBytes > 0
            }
        )
        #expect(opens.filter { $0.event == "launch" }.allSatisfy { $0.path == "/launch/1" })
        // One media download per mutable-content delivery, at the default path (the poll names none).
        let downloads = arrivals.filter { $0.event == "media" }
        #expect(downloads.count == media && engaged.mediaFetches == media)
        #expect(downloads.allSatisfy { $0.path == "/media/spring" })
        // The wave's own figures agree with the backend's.
        #expect(figures.offered == arrivals.count && figures.answered == arrivals.count && figures.errors == 0)
        #expect(figures.notSent == 0)
        #expect(figures.byKind["media"]?.offered == media && figures.byKind["launch"]?.offered == engaged.opens)
    }
}
