import FanoutAPNs
import Testing

@Suite struct ProviderRuleTests {
    /// The card's counts are an array in `allCases`' order subscripted by `index`: the switch
    /// must agree with the declaration order, or a violation is counted under another rule.
    @Test func indexIsThePositionInAllCases() {
        for (position, rule) in ProviderRule.allCases.enumerated() {
            #expect(rule.index == position, "\(rule)")
        }
    }
}
