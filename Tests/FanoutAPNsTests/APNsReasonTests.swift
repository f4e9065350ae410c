import FanoutAPNs
import Testing

@Suite struct APNsReasonTests {
    /// Counts are arrays in `all`'s order and subscripted by `index`: the switch must agree with
    /// the declaration order, for every reason, or a rejection is counted under another reason.
    @Test func indexIsThePositionInAll() {
        #expect(APNsReason.all == APNsReason.allCases)
        for (position, reason) in APNsReason.allCases.enumerated() {
            #expect(reason.index == position, "\(reason)")
            #expect(APNsReason.all[reason.index] == reason)
        }
    }
}
