import FanoutFCM
import FanoutScenarioTerms
import Foundation
import NIOCore
import Testing

@testable import FanoutFCMSink

/// The FCM sink's latency (`--latency`): each send's answer held for a draw, token requests
/// never, the draws the seed's; held answers go out in due order with their own status,
/// Retry-After and body, in bodies that are reused.
@Suite struct FCMLatencyTests {
    static func exchange(latency: LatencyDistribution?, seed: UInt64 = 0xABCD) -> FCMExchange {
        var configuration = FCMSinkConfiguration()
        configuration.project = "fanout-test"
        configuration.authentication = .anyBearer
        configuration.latency = latency
        return FCMExchange(
            service: FCMService(configuration: configuration, account: nil),
            transport: .http2,
            peer: "test",
            seed: seed
        )
    }

    @Test func aSendIsHeldForItsDrawAndATokenRequestNever() {
        var fixed = Self.exchange(latency: .fixed(.milliseconds(50)))
        let (send, _) = FCMExchangeTests.ask(&fixed)
        #expect(send.status == 200 && send.hold == 50_000_000)
        // A refusal is held as long as a success: the latency is the service's, not the verdict's.
        let (refused, _) = FCMExchangeTests.ask(&fixed, body: #"{"message":{"token":"a","topic":"b"}}"#)
        #expect(refused.status == 400 && refused.hold == 50_000_000)
        let (token, _) = FCMExchangeTests.ask(&fixed, method: "POST", path: "/token", bearer: nil, body: "")
        #expect(token.hold == 0)
        var none = Self.exchange(latency: nil)
        #expect(FCMExchangeTests.ask(&none).0.hold == 0)
    }

    /// The same seed draws the same holds; another seed others; a spread's draws lie in it.
    @Test func drawsAreTheSeedsAndInTheirRange() {
        let uniform = LatencyDistribution.uniform(.milliseconds(10), .milliseconds(20))
        func holds(_ seed: UInt64) -> [UInt64] {
            var exchange = Self.exchange(latency: uniform, seed: seed)
            return (0..<200).map { _ in FCMExchangeTests.ask(&exchange).0.hold }
        }
        let first = holds(1)
        #expect(first == holds(1))
        #expect(first != holds(2))
        #expect(first.allSatisfy { (10_000_000...20_000_000).contains($0) })
        #expect(Set(first).count > 150, "drawn, not one value")
    }

    /// Held answers leave in due order, not arrival order, each with what it was held with.
    @Test func heldAnswersLeaveInDueOrderWithTheirOwnParts() {
        var held = FCMHeldAnswers()
        func body(_ text: String) -> ByteBuffer { ByteBuffer(string: text) }
        held.hold(FCMAnswer(status: 200), body: body("a"), stream: 1, due: 30)
        held.hold(FCMAnswer(status: 429, retryAfter: 7), body: body("quota"), stream: 3, due: 10)
        held.hold(FCMAnswer(status: 404), body: body("gone"), stream: 5, due: 20)
        #expect(held.count == 3 && held.earliest == 10)
        #expect(held.popDue(now: 9) == nil)
        var out: [String] = []
        while let (entry, body) = held.popDue(now: 30) {
            out.append("\(entry.stream) \(entry.status) \(entry.retryAfter) \(String(buffer: body))")
            held.release(entry)
        }
        #expect(out == ["3 429 7 quota", "5 404 -1 gone", "1 200 -1 a"])
        #expect(held.count == 0 && held.earliest == nil)
    }

    /// Streams reset while their answers are held (rapid reset): once resets are 64 and could
    /// be half of what is held, the answers of closed streams go, their bodies free for the next; the
    /// answers of open streams stay.
    @Test func answersOfResetStreamsAreDroppedAndTheirBodiesReused() {
        var held = FCMHeldAnswers()
        for stream in 1...100 {
            held.hold(FCMAnswer(status: 200), body: ByteBuffer(string: "a"), stream: UInt32(stream), due: 1_000)
        }
        // Streams 1…80 reset; 81…100 still open.
        let open: (UInt32) -> Bool = { $0 > 80 }
        for _ in 1...63 { held.streamReset(isOpen: open) }
        #expect(held.count == 100, "fewer than 64 resets: nothing swept yet")
        held.streamReset(isOpen: open)
        #expect(held.count == 20)
        var streams: [UInt32] = []
        while let (entry, _) = held.popDue(now: 1_000) {
            streams.append(entry.stream)
            held.release(entry)
        }
        #expect(streams.sorted() == Array(81...100))
        // 100 bodies were made; the next 100 answers take them, no new one.
        for stream in 1...100 {
            held.hold(FCMAnswer(status: 200), body: ByteBuffer(string: "b"), stream: UInt32(stream), due: 2_000)
        }
        var indices = Set<Int32>()
        while let (entry, _) = held.popDue(now: 2_000) {
            indices.insert(entry.body)
            held.release(entry)
        }
        #expect(indices == Set(0..<100))
    }

    /// A body buffer once released is the next answer's: a connection holding at most k
    /// answers at once keeps k buffers, whatever it answers over its life.
    @Test func bodyBuffersAreReused() {
        var held = FCMHeldAnswers()
        var indices = Set<Int32>()
        for round in 0..<50 {
            for stream in 0..<4 {
                held.hold(
                    FCMAnswer(status: 200),
                    body: ByteBuffer(string: "answer \(round) \(stream)"),
                    stream: UInt32(stream),
                    due: UInt64(round)
                )
            }
            while let (entry, body) = held.popDue(now: UInt64(round)) {
                #expect(String(buffer: body) == "answer \(round) \(entry.stream)")
                indices.insert(entry.body)
                held.release(entry)
            }
        }
        #expect(indices == [0, 1, 2, 3])
    }
}
