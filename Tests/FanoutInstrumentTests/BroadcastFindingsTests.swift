import FanoutAPNs
import FanoutPush
import Testing

@testable import FanoutInstrument

/// The card's broadcast rules (`BroadcastFindings`), driven with made-up requests and a made-up
/// clock: the budget's window, the channels near the limit, timestamps, retries, channels left.
@Suite struct BroadcastFindingsTests {
    static let second: UInt64 = 1_000_000_000
    static let app = Array("com.example.app".utf8)

    struct Judge {
        let instrument: ProviderInstrument
        var findings: BroadcastFindings { instrument.broadcasts }
        var next: UInt64 = 1

        init(budget: Int = 3) {
            instrument = ProviderInstrument(priorityBudget: budget, priorityWindow: .seconds(3600))
        }

        func count(_ rule: ProviderRule) -> Int { instrument.card.count(rule) }

        func decide(_ request: BroadcastFindings.Request, at now: UInt64) {
            BroadcastFindingsTests.app.withUnsafeBytes {
                findings.decided(request, bundle: $0, connection: 1, now: now)
            }
        }

        mutating func create(at now: UInt64 = 0) -> ChannelID {
            let id = ChannelID(high: next, low: next)
            next += 1
            decide(.init(operation: .create, status: 201, channel: id, idHash: 0, priority: 10), at: now)
            return id
        }

        func broadcast(
            _ id: ChannelID,
            priority: Int = 10,
            timestamp: Int64? = nil,
            rejection: APNsReason? = nil,
            at now: UInt64
        ) {
            let request = BroadcastFindings.Request(
                operation: .broadcast,
                status: rejection?.status ?? 200,
                rejection: rejection,
                channel: id,
                idHash: Self.hash(id),
                priority: priority,
                timestamp: timestamp
            )
            decide(request, at: now)
        }

        func delete(_ id: ChannelID, at now: UInt64) {
            decide(.init(operation: .delete, status: 204, channel: id, idHash: Self.hash(id), priority: 10), at: now)
        }

        static func hash(_ id: ChannelID) -> UInt64 {
            Array(id.text.utf8).withUnsafeBytes { BroadcastFindings.hash($0) }
        }
    }

    @Test func priorityTenPastTheBudgetCountsAndTheWindowStartsAgain() {
        var judge = Judge(budget: 3)
        let id = judge.create()
        for k in 0..<5 { judge.broadcast(id, at: UInt64(k) * Self.second) }
        #expect(judge.count(.liveActivityOverBudget) == 2)
        // Priority 5 is not counted against the budget.
        for k in 5..<10 { judge.broadcast(id, priority: 5, at: UInt64(k) * Self.second) }
        #expect(judge.count(.liveActivityOverBudget) == 2)
        // An hour after the window's first broadcast a new window starts: three more are within it.
        for k in 0..<3 { judge.broadcast(id, at: 3600 * Self.second + UInt64(k)) }
        #expect(judge.count(.liveActivityOverBudget) == 2)
        judge.broadcast(id, at: 3601 * Self.second)
        #expect(judge.count(.liveActivityOverBudget) == 3)
        // The budget is per channel.
        let other = judge.create()
        for k in 0..<3 { judge.broadcast(other, at: 3602 * Self.second + UInt64(k)) }
        #expect(judge.count(.liveActivityOverBudget) == 3)
    }

    @Test func aTimestampBelowTheHighestAcceptedIsBackwards() {
        var judge = Judge()
        let id = judge.create()
        judge.broadcast(id, priority: 5, timestamp: 100, at: 1)
        judge.broadcast(id, priority: 5, timestamp: 100, at: 2)
        #expect(judge.count(.timestampBackwards) == 0, "an equal timestamp is not backwards")
        judge.broadcast(id, priority: 5, timestamp: 90, at: 3)
        judge.broadcast(id, priority: 5, timestamp: 95, at: 4)
        #expect(judge.count(.timestampBackwards) == 2, "both are below the highest, 100")
        // A rejected broadcast does not move the channel's timestamp.
        judge.broadcast(id, priority: 5, timestamp: 500, rejection: .badPayload, at: 5)
        judge.broadcast(id, priority: 5, timestamp: 101, at: 6)
        #expect(judge.count(.timestampBackwards) == 2)
        // Another channel has its own.
        let other = judge.create()
        judge.broadcast(other, priority: 5, timestamp: 1, at: 7)
        #expect(judge.count(.timestampBackwards) == 2)
        #expect(
            judge.instrument.card.examples(.timestampBackwards).map(\.detail) == [
                "timestamp 90 on channel \(id.text) after 100", "timestamp 95 on channel \(id.text) after 100",
            ]
        )
    }

    @Test func aBroadcastAgainAfterChannelNotRegisteredIsARetry() {
        var judge = Judge()
        let id = judge.create()
        judge.delete(id, at: 1)
        judge.broadcast(id, rejection: .channelNotRegistered, at: 2)
        #expect(judge.count(.deletedChannelRetried) == 0, "the first answer tells the provider")
        judge.broadcast(id, rejection: .channelNotRegistered, at: 3)
        #expect(judge.count(.deletedChannelRetried) == 1)
        let unknown = ChannelID(high: 99, low: 99)
        judge.broadcast(unknown, rejection: .channelNotRegistered, at: 4)
        judge.broadcast(unknown, rejection: .channelNotRegistered, at: 5)
        #expect(judge.count(.deletedChannelRetried) == 2)
        let details = judge.instrument.card.examples(.deletedChannelRetried).map(\.detail)
        #expect(details.first?.hasSuffix("(deleted by the provider)") == true)
        #expect(details.last?.hasSuffix("(never created here)") == true)
        #expect(judge.findings.leftOpen().isEmpty)
    }

    @Test func nineThousandChannelsAreNearTheLimitOnceAndARefusalIsToo() {
        var judge = Judge()
        var ids: [ChannelID] = []
        for _ in 0..<(ProviderRule.Broadcast.nearLimit - 1) { ids.append(judge.create()) }
        #expect(judge.count(.channelsNearLimit) == 0)
        ids.append(judge.create())
        #expect(judge.count(.channelsNearLimit) == 1)
        ids.append(judge.create())
        #expect(judge.count(.channelsNearLimit) == 1, "counted when the app reaches 9,000, not per channel past it")
        judge.delete(ids.removeLast(), at: 1)
        judge.delete(ids.removeLast(), at: 2)
        ids.append(judge.create())
        #expect(judge.count(.channelsNearLimit) == 2, "reached again")
        judge.decide(
            .init(operation: .create, status: 400, rejection: .cannotCreateChannelConfig, idHash: 0, priority: 10),
            at: 3
        )
        #expect(judge.count(.channelsNearLimit) == 3)
        #expect(judge.findings.leftOpen().count == ProviderRule.Broadcast.nearLimit)
    }

    @Test func channelsNotDeletedAreLeftOpenOldestFirst() {
        var judge = Judge()
        #expect(!judge.findings.sawRequests)
        let first = judge.create(at: 5)
        let second = judge.create(at: 7)
        let third = judge.create(at: 9)
        judge.delete(second, at: 10)
        #expect(judge.findings.sawRequests)
        #expect(judge.findings.leftOpen().map(\.id) == [first.text, third.text])
        #expect(judge.findings.leftOpen().map(\.createdAt) == [5, 9])
    }
}
