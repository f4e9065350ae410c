import Testing

@testable import FanoutFCMSink

/// Which access tokens were replaced early: judged by use, so that two clients of one account
/// (an SDK's synchronous and asynchronous paths) are not taken for one client refreshing.
@Suite struct FCMAccessTokensTests {
    static let minute: UInt64 = 60_000_000_000
    static let hour = 60 * minute

    @Test func aTokenStillUsedAfterTheNextIsIssuedWasNotReplaced() {
        let tokens = FCMAccessTokens()
        let first = tokens.issue(lifetime: Self.hour, now: Self.minute)
        let second = tokens.issue(lifetime: Self.hour, now: 2 * Self.minute)
        tokens.used(Array(first.utf8), at: 3 * Self.minute)
        tokens.used(Array(second.utf8), at: 3 * Self.minute)
        #expect(tokens.earlyReplacements(early: 10 * Self.minute).isEmpty)
    }

    @Test func aTokenLeftForANewOneLongBeforeItsExpiryWasReplaced() {
        let tokens = FCMAccessTokens()
        let first = tokens.issue(lifetime: Self.hour, now: Self.minute)
        tokens.used(Array(first.utf8), at: 2 * Self.minute)
        // Never used, and replaced in turn.
        _ = tokens.issue(lifetime: Self.hour, now: 5 * Self.minute)
        let third = tokens.issue(lifetime: Self.hour, now: 6 * Self.minute)
        tokens.used(Array(third.utf8), at: 7 * Self.minute)
        let replaced = tokens.earlyReplacements(early: 10 * Self.minute)
        #expect(replaced.map(\.left) == [56 * Self.minute, 59 * Self.minute])
        #expect(replaced.map(\.replaced.lastUse) == [2 * Self.minute, 0])
    }

    /// A refresh with 10 minutes or less left is the one an SDK should make (google-auth's comes
    /// at 3 min 45 s); an unknown bearer's use is not recorded.
    @Test func aRefreshNearExpiryIsOnTime() {
        let tokens = FCMAccessTokens()
        let first = tokens.issue(lifetime: Self.hour, now: 0)
        tokens.used(Array(first.utf8), at: 50 * Self.minute)
        _ = tokens.issue(lifetime: Self.hour, now: 50 * Self.minute + 1)
        tokens.used(Array("ya29.unknown".utf8), at: 51 * Self.minute)
        #expect(tokens.earlyReplacements(early: 10 * Self.minute).isEmpty)
        #expect(tokens.records.count == 2)
    }
}
