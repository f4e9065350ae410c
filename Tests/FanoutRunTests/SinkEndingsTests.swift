import FanoutFCMSink
import FanoutInstrument
import Foundation
import Testing

@testable import FanoutRun

/// What a sink's ends make of each look (`SinkEndings`), fed times by hand: the decisions the
/// watch acts on, without a clock. Seconds from an uptime of 1,000 s.
@Suite struct SinkEndingsTests {
    static let start: UInt64 = 1_000_000_000_000
    static func at(_ seconds: Double) -> UInt64 { start + UInt64(seconds * 1e9) }

    static func idle(_ idle: Duration, firstWithin: Duration = .seconds(60)) -> SinkEndings {
        var ending = SinkJob.Ending()
        ending.idleExit = idle
        ending.firstRequestWithin = firstWithin
        return SinkEndings(ending, startedAt: start)
    }

    /// The FCM sink keeps each request's time: idleness counts from it, however late the look.
    @Test func idlenessCountsFromTheSinksOwnTimeOfTheLastRequest() {
        var endings = Self.idle(.seconds(5))
        // A request at 2 s, seen by a look at 3 s: due at 7 s, not 8.
        var look = endings.look(
            now: Self.at(3),
            requests: 1,
            accepted: 1,
            lastRequest: Self.at(2),
            tokensComplete: false
        )
        #expect(look.next == .wait(Self.at(7)))
        // Another at 6 s, seen at 7 s: the end moves to 11 s.
        look = endings.look(now: Self.at(7), requests: 2, accepted: 2, lastRequest: Self.at(6), tokensComplete: false)
        #expect(look.next == .wait(Self.at(11)))
        look = endings.look(now: Self.at(11), requests: 2, accepted: 2, lastRequest: Self.at(6), tokensComplete: false)
        #expect(look.next == .end(.idleExit))
    }

    /// An answer held past the last request (`--latency`) keeps the sink busy to its time: the
    /// sink's time moves on without a new count, and the end waits for it.
    @Test func anAnswerHeldLaterKeepsTheSinkBusy() {
        var endings = Self.idle(.seconds(1))
        var look = endings.look(
            now: Self.at(1),
            requests: 1,
            accepted: 1,
            lastRequest: Self.at(1),
            tokensComplete: false
        )
        #expect(look.next == .wait(Self.at(2)))
        // At 2 s the same count, but its answer is held to 4 s: not idle before 5 s.
        look = endings.look(now: Self.at(2), requests: 1, accepted: 1, lastRequest: Self.at(4), tokensComplete: false)
        #expect(look.next == .wait(Self.at(5)))
        look = endings.look(now: Self.at(4.5), requests: 1, accepted: 1, lastRequest: Self.at(4), tokensComplete: false)
        #expect(look.next == .wait(Self.at(5)))
        look = endings.look(now: Self.at(5), requests: 1, accepted: 1, lastRequest: Self.at(4), tokensComplete: false)
        #expect(look.next == .end(.idleExit))
    }

    /// The APNs sink keeps no time: the look that saw the count move is its time.
    @Test func withoutTheSinksTimeTheLookThatSawTheCountMoveIsIt() {
        var endings = Self.idle(.seconds(5))
        var look = endings.look(now: Self.at(3), requests: 10, accepted: 10, lastRequest: nil, tokensComplete: false)
        #expect(look.next == .wait(Self.at(8)))
        look = endings.look(now: Self.at(8), requests: 10, accepted: 10, lastRequest: nil, tokensComplete: false)
        #expect(look.next == .end(.idleExit))
    }

    /// Before any request: `--first-request-within`, never sooner than the idle time.
    @Test func withNoRequestTheFirstRequestsDeadlineEndsIt() {
        var endings = Self.idle(.seconds(5), firstWithin: .seconds(2))
        var look = endings.look(now: Self.at(1), requests: 0, accepted: 0, lastRequest: nil, tokensComplete: false)
        #expect(look.next == .wait(Self.at(5)))
        look = endings.look(now: Self.at(5), requests: 0, accepted: 0, lastRequest: nil, tokensComplete: false)
        #expect(look.next == .end(.noRequest))
    }

    /// The counts' ends come first, and the duration bounds every wait.
    @Test func expectedCountsEndItAndTheDurationBoundsTheWait() {
        var ending = SinkJob.Ending()
        ending.expect = 3
        ending.duration = .seconds(30)
        var endings = SinkEndings(ending, startedAt: Self.start)
        var look = endings.look(now: Self.at(1), requests: 4, accepted: 2, lastRequest: nil, tokensComplete: false)
        #expect(look.next == .wait(Self.at(30)), "no idle end asked: the duration's")
        look = endings.look(now: Self.at(2), requests: 5, accepted: 3, lastRequest: nil, tokensComplete: false)
        #expect(look.next == .end(.expect))
        var tokens = SinkEndings(SinkJob.Ending(), startedAt: Self.start)
        look = tokens.look(now: Self.at(1), requests: 1, accepted: 1, lastRequest: nil, tokensComplete: false)
        #expect(look.next == .wait(nil), "no end asked: a signal alone")
        look = tokens.look(now: Self.at(1), requests: 2, accepted: 2, lastRequest: nil, tokensComplete: true)
        #expect(look.next == .end(.expectTokens))
        var late = SinkEndings(ending, startedAt: Self.start)
        look = late.look(now: Self.at(30), requests: 0, accepted: 0, lastRequest: nil, tokensComplete: false)
        #expect(look.next == .end(.duration))
    }

    /// With the live page: a tick a second, and the wait never past the next one.
    @Test func ticksFallEachSecond() {
        var endings = SinkEndings(SinkJob.Ending(), startedAt: Self.start, ticks: true)
        var look = endings.look(now: Self.at(0.5), requests: 0, accepted: 0, lastRequest: nil, tokensComplete: false)
        #expect(look == .init(next: .wait(Self.at(1)), tick: nil))
        look = endings.look(now: Self.at(1), requests: 0, accepted: 0, lastRequest: nil, tokensComplete: false)
        #expect(look == .init(next: .wait(Self.at(2)), tick: 1))
    }

    /// An FCM sink's `--expect-tokens` list: registration tokens as written, case and all.
    @Test func anFCMListKeepsTheTokensCase() throws {
        let path = NSTemporaryDirectory() + "fanout-expect-fcm-\(UUID().uuidString).txt"
        defer { try? FileManager.default.removeItem(atPath: path) }
        try "TokA1\ntokB2\n".write(toFile: path, atomically: true, encoding: .utf8)
        let expected = try SinkJob.TokenList(expectingFCM: path).expected
        #expect(expected.count == 2)
        let completed = ["toka1", "tokB2", "TokA1"].map { expected.accepted(hash: FCMTokenFate.hash($0)) }
        #expect(completed == [false, false, true])
    }
}
