import FanoutAPNs
import FanoutReport
import Testing

@testable import FanoutRun

/// The sink's seconds: each second's accepted and rejected are the differences of the running
/// totals, by reason; only the latest `secondsKept` stay.
@Suite struct SinkLiveSecondsTests {
    @Test func eachSecondHoldsWhatChangedInIt() {
        var seconds = SinkLiveSeconds<APNsReason>()
        let first = seconds.close(elapsed: 1.02, accepted: 900, rejected: [.unregistered: 10], connections: 2)
        #expect(first.second == 1 && first.command == "sink" && first.finished == 910)
        #expect(first.seconds == [.init(second: 0, completed: 910, rejected: ["Unregistered": 10], connections: 2)])
        let second = seconds.close(
            elapsed: 2.01,
            accepted: 1_900,
            rejected: [.unregistered: 15, .badDeviceToken: 1],
            connections: 3
        )
        #expect(second.accepted == 1_900 && second.ratePerSecond == 1_006)
        #expect(
            second.seconds.last
                == .init(
                    second: 1,
                    completed: 1_006,
                    rejected: ["Unregistered": 5, "BadDeviceToken": 1],
                    connections: 3
                )
        )
        #expect(second.seconds.allSatisfy { $0.p99Ms == nil && $0.loopLagMaxMs == nil })
    }

    @Test func onlyTheLatestSecondsStay() {
        var seconds = SinkLiveSeconds<APNsReason>()
        var document: LiveDocument?
        for second in 0..<(LiveDocument.secondsKept + 5) {
            document = seconds.close(
                elapsed: Double(second + 1),
                accepted: second * 10,
                rejected: [:],
                connections: 1
            )
        }
        #expect(document?.seconds.count == LiveDocument.secondsKept)
        #expect(document?.seconds.first?.second == 5)
        #expect(document?.seconds.last?.completed == 10)
    }
}
