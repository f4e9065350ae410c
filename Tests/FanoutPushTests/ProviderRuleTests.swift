import FanoutFCM
import FanoutPush
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

@Suite struct ProviderRuleServiceTests {
    /// An FCM sink's card: the five rows both services check and FCM's own five, and with
    /// devices the fleet's two that apply to Android (no background budget); an APNs sink's
    /// keeps every row it had before FCM (its fleet's and broadcasts' when they apply).
    @Test func eachServicesCardShowsItsRows() {
        let fcm = ProviderRule.allCases.filter { $0.isShown(service: .fcm, devices: false, broadcasts: true) }
        #expect(
            fcm == [
                .permanentRetried, .fastRetry, .streamLimit, .afterGoAway, .churn, .quotaIgnored, .clientErrors,
                .duplicate, .accessToken, .bearer,
            ]
        )
        let fcmWithDevices = ProviderRule.allCases.filter { $0.isShown(service: .fcm, devices: true, broadcasts: true) }
        #expect(Set(fcmWithDevices).subtracting(fcm) == [.expirationZeroOffline, .staleDelivery])
        let apns = ProviderRule.allCases.filter { $0.isShown(service: .apns, devices: true, broadcasts: true) }
        #expect(apns.count == 16)
        #expect(Set(apns).isDisjoint(with: [.quotaIgnored, .clientErrors, .duplicate, .accessToken, .bearer]))
        #expect(ProviderRule.allCases.allSatisfy { !$0.services.isEmpty })
    }

    /// The rows both check are worded with each service's statuses.
    @Test func sharedRowsSayEachServicesStatuses() {
        #expect(
            ProviderRule.permanentRetried.title(for: .apns) == "never retry a permanent rejection (400, 403, 410, 413)"
        )
        #expect(
            ProviderRule.permanentRetried.title(for: .fcm)
                == "never retry a permanent rejection (400, 403 SENDER_ID_MISMATCH, 404)"
        )
        #expect(ProviderRule.churn.title(for: .fcm) == ProviderRule.churn.title(for: .apns))
    }

    /// FCM's codes: the message's or token's fate never to be sent again, the service's state
    /// after a wait, the credentials' any time.
    @Test func fcmCodesAdviseAsGoogleDoes() {
        #expect(ProviderRule.advice(after: FCMErrorCode.unregistered) == .never)
        #expect(ProviderRule.advice(after: FCMErrorCode.invalidArgument) == .never)
        #expect(ProviderRule.advice(after: FCMErrorCode.senderIDMismatch) == .never)
        #expect(ProviderRule.advice(after: FCMErrorCode.quotaExceeded) == .afterPause)
        #expect(ProviderRule.advice(after: FCMErrorCode.unavailable) == .afterPause)
        #expect(ProviderRule.advice(after: FCMErrorCode.internal) == .afterPause)
        #expect(ProviderRule.advice(after: FCMErrorCode.thirdPartyAuthError) == .any)
    }
}
