import FanoutListening
import NIOConcurrencyHelpers
import Testing

@testable import FanoutSink

/// `LimitLog`: one line a second for each kind, the next saying how many were left out.
@Suite struct LimitLogTests {
    @Test func aFloodOfRefusalsWritesALineASecondWithTheCountLeftOut() {
        let lines = NIOLockedValueBox<[String]>([])
        let log = LimitLog { line in lines.withLockedValue { $0.append(line) } }
        let second: UInt64 = 1_000_000_000
        for index in 0..<1000 {
            log.note(.refused, peer: "10.0.0.1:\(index)", "past the limit", now: second + UInt64(index) * 1_000_000)
        }
        log.note(.requestTimeout, peer: "10.0.0.2:9", "reset 3 streams", now: second + 500_000_000)
        log.note(.refused, peer: "10.0.0.1:7", "past the limit", now: 2 * second + 500_000_000)
        #expect(
            lines.withLockedValue { $0 } == [
                "refused 10.0.0.1:0: past the limit",
                "request timeout 10.0.0.2:9: reset 3 streams",
                "refused 10.0.0.1:7: past the limit (and 999 more since the last line)",
            ]
        )
        #expect(log.noted == 1002)
        for index in 0..<5 { log.note(.refused, peer: "10.0.0.1:\(index)", "x", now: 2 * second + 600_000_000) }
        log.flush()
        #expect(lines.withLockedValue { $0.last } == "refused: 5 more since the last line")
        log.flush()
        #expect(lines.withLockedValue { $0.count } == 4)
    }

    /// The admin endpoint's lines begin `admin` and are thinned apart from the HTTP/2 port's:
    /// a flood on one leaves the other's first line whole.
    @Test func theAdminEndpointsLinesAreThinnedApart() {
        let lines = NIOLockedValueBox<[String]>([])
        let log = LimitLog { line in lines.withLockedValue { $0.append(line) } }
        let second: UInt64 = 1_000_000_000
        log.note(.requestTimeout, peer: "10.0.0.1:1", "reset 1 stream", now: second)
        log.note(
            .requestTimeout,
            on: .admin,
            peer: "10.0.0.1:2",
            "no whole request within 5 s: closed",
            now: second + 1
        )
        log.note(
            .requestTimeout,
            on: .admin,
            peer: "10.0.0.1:3",
            "no whole request within 5 s: closed",
            now: second + 2
        )
        log.note(.requestTimeout, peer: "10.0.0.1:4", "reset 1 stream", now: second + 3)
        log.flush()
        #expect(
            lines.withLockedValue { $0 } == [
                "request timeout 10.0.0.1:1: reset 1 stream",
                "admin request timeout 10.0.0.1:2: no whole request within 5 s: closed",
                "admin request timeout: 1 more since the last line",
                "request timeout: 1 more since the last line",
            ]
        )
    }
}
