import FanoutAPNs
import FanoutPush
import Testing

@testable import FanoutClient

/// Every transition of the per-notification retry rule.
@Suite struct RetryPolicyTests {
    static func policy(
        attempts: Int = 3,
        backoff: Duration = .milliseconds(100),
        maxBackoff: Duration = .seconds(5)
    )
        -> RetryPolicy
    {
        RetryPolicy(maxAttempts: attempts, backoff: backoff, maxBackoff: maxBackoff, seed: 1)
    }

    @Test func twoHundredIsAccepted() {
        var policy = Self.policy()
        #expect(policy.next(after: .answered(status: 200, reason: nil), attempts: 0) == .accept)
        #expect(policy.next(after: .answered(status: 200, reason: nil), attempts: 2) == .accept)
    }

    @Test(arguments: [APNsReason.badDeviceToken, .unregistered, .payloadTooLarge, .invalidProviderToken, .badPath])
    func aPermanentReasonIsFinal(reason: APNsReason) {
        var policy = Self.policy()
        #expect(
            policy.next(after: .answered(status: reason.status, reason: .apns(reason)), attempts: 0)
                == .reject(.apns(reason))
        )
    }

    @Test(arguments: [APNsReason.tooManyRequests, .internalServerError, .serviceUnavailable, .shutdown])
    func aRetryableReasonIsRetriedWhileTriesRemainThenRejected(reason: APNsReason) {
        var policy = Self.policy(attempts: 3)
        let result = RetryPolicy.Result.answered(status: reason.status, reason: .apns(reason))
        guard case .retry = policy.next(after: result, attempts: 0) else {
            Issue.record("first try")
            return
        }
        guard case .retry = policy.next(after: result, attempts: 1) else {
            Issue.record("second try")
            return
        }
        // The server answered every time: the last answer is the outcome.
        #expect(policy.next(after: result, attempts: 2) == .reject(.apns(reason)))
    }

    @Test func aReasonThatDoesNotMatchItsStatusCountsAsUnknown() {
        var policy = Self.policy(attempts: 1)
        // BadDeviceToken is a 400: a 503 carrying it is a gateway's answer, not APNs'.
        #expect(
            policy.next(after: .answered(status: 503, reason: .apns(.badDeviceToken)), attempts: 0)
                == .fail(.unexpectedResponse)
        )
        #expect(
            policy.next(after: .answered(status: 400, reason: .apns(.badDeviceToken)), attempts: 0)
                == .reject(.apns(.badDeviceToken))
        )
    }

    @Test func anUnknown5xxOr429IsRetriedThenFailed() {
        var policy = Self.policy(attempts: 2)
        for status in [429, 500, 502, 504] {
            guard case .retry = policy.next(after: .answered(status: status, reason: nil), attempts: 0) else {
                Issue.record("\(status) not retried")
                continue
            }
            #expect(
                policy.next(after: .answered(status: status, reason: nil), attempts: 1) == .fail(.unexpectedResponse)
            )
        }
    }

    @Test func anUnknown4xxFailsAtOnce() {
        var policy = Self.policy(attempts: 5)
        #expect(policy.next(after: .answered(status: 404, reason: nil), attempts: 0) == .fail(.unexpectedResponse))
        #expect(policy.next(after: .answered(status: 302, reason: nil), attempts: 0) == .fail(.unexpectedResponse))
    }

    @Test func aRefusedStreamIsResentWithoutUsingATry() {
        var policy = Self.policy(attempts: 1)
        #expect(policy.next(after: .refused, attempts: 0) == .resend)
        #expect(policy.next(after: .refused, attempts: 7) == .resend)
    }

    @Test func resetsAndTimeoutsAreRetriedWithBackoffThenFailWithTheirCause() {
        var policy = Self.policy(attempts: 2)
        for (result, cause) in [(RetryPolicy.Result.reset, FailureCause.streamReset), (.timedOut, .timeout)] {
            guard case .retry(let delay) = policy.next(after: result, attempts: 0) else {
                Issue.record("\(result) not retried")
                continue
            }
            #expect(delay < 100_000_000)
            #expect(policy.next(after: result, attempts: 1) == .fail(cause))
        }
    }

    @Test func aLostConnectionIsRetriedAtOnceThenFails() {
        var policy = Self.policy(attempts: 3)
        #expect(policy.next(after: .connectionLost, attempts: 0) == .retry(delay: 0))
        #expect(policy.next(after: .connectionLost, attempts: 1) == .retry(delay: 0))
        #expect(policy.next(after: .connectionLost, attempts: 2) == .fail(.connectionLost))
    }

    @Test func oneAttemptMeansNoRetry() {
        var policy = Self.policy(attempts: 1)
        #expect(policy.next(after: .timedOut, attempts: 0) == .fail(.timeout))
        #expect(policy.next(after: .connectionLost, attempts: 0) == .fail(.connectionLost))
        #expect(
            policy.next(after: .answered(status: 429, reason: .apns(.tooManyRequests)), attempts: 0)
                == .reject(.apns(.tooManyRequests))
        )
    }

    /// Full jitter below a ceiling that doubles per retry and stops at the cap; it never
    /// overflows, however many tries.
    @Test func backoffDoublesUpToItsCapWithFullJitter() {
        let base: UInt64 = 100_000_000
        let cap: UInt64 = 5_000_000_000
        #expect(RetryPolicy.ceiling(forAttempt: 1, backoff: base, maxBackoff: cap) == base)
        #expect(RetryPolicy.ceiling(forAttempt: 2, backoff: base, maxBackoff: cap) == 2 * base)
        #expect(RetryPolicy.ceiling(forAttempt: 6, backoff: base, maxBackoff: cap) == 32 * base)
        #expect(RetryPolicy.ceiling(forAttempt: 7, backoff: base, maxBackoff: cap) == cap)
        #expect(RetryPolicy.ceiling(forAttempt: 60_000, backoff: .max / 2, maxBackoff: .max) == .max)
        var policy = Self.policy(attempts: 100)
        var delays: [UInt64] = []
        for _ in 0..<200 {
            guard case .retry(let delay) = policy.next(after: .timedOut, attempts: 2) else { continue }
            delays.append(delay)
        }
        #expect(delays.count == 200)
        #expect(delays.allSatisfy { $0 < 4 * base })
        // Spread over the whole range, not one value.
        #expect(delays.min()! < base && delays.max()! > 3 * base)
    }

    @Test func noBackoffMeansAtOnce() {
        var policy = Self.policy(backoff: .zero)
        #expect(policy.next(after: .reset, attempts: 0) == .retry(delay: 0))
    }

    /// FCM's quota answer says when to come back: the try waits that out, then its jitter;
    /// the last try's answer is the rejection, by FCM's code.
    @Test func aRetryAfterIsWaitedOutBeforeTheJitter() {
        var policy = Self.policy(attempts: 3)
        let quota = RetryPolicy.Result.answered(status: 429, reason: .fcm(.quotaExceeded), retryAfter: 4_000_000_000)
        for attempts in 0..<2 {
            guard case .retry(let delay) = policy.next(after: quota, attempts: attempts) else {
                Issue.record("try \(attempts + 1) was not retried")
                continue
            }
            let jitterCeiling = RetryPolicy.ceiling(
                forAttempt: attempts + 1,
                backoff: 100_000_000,
                maxBackoff: 5_000_000_000
            )
            #expect(delay >= 4_000_000_000 && delay < 4_000_000_000 + jitterCeiling)
        }
        #expect(policy.next(after: quota, attempts: 2) == .reject(.fcm(.quotaExceeded)))
        // A gateway's 503 without FCM's body keeps the wait too, and fails in the end.
        let gateway = RetryPolicy.Result.answered(status: 503, reason: nil, retryAfter: 2_000_000_000)
        guard case .retry(let delay) = policy.next(after: gateway, attempts: 0) else {
            Issue.record("a 503 with Retry-After was not retried")
            return
        }
        #expect(delay >= 2_000_000_000)
        #expect(policy.next(after: gateway, attempts: 2) == .fail(.unexpectedResponse))
        // FCM's final codes are final whatever the tries left.
        #expect(
            policy.next(after: .answered(status: 404, reason: .fcm(.unregistered)), attempts: 0)
                == .reject(.fcm(.unregistered))
        )
        #expect(
            policy.next(after: .answered(status: 403, reason: .fcm(.senderIDMismatch)), attempts: 0)
                == .reject(.fcm(.senderIDMismatch))
        )
    }

    /// Without a Retry-After, FCM's own least waits: a minute after QUOTA_EXCEEDED, a second
    /// after UNAVAILABLE; APNs' reasons wait the backoff alone.
    @Test func withoutRetryAfterFCMsLeastWaitIsKept() {
        var policy = Self.policy(attempts: 3)
        let cases: [(PushReason, UInt64)] = [
            (.fcm(.quotaExceeded), 60_000_000_000), (.fcm(.unavailable), 1_000_000_000),
            (.fcm(.internal), 1_000_000_000), (.apns(.tooManyRequests), 0),
        ]
        for (reason, least) in cases {
            guard
                case .retry(let delay) = policy.next(
                    after: .answered(status: reason.status!, reason: reason),
                    attempts: 0
                )
            else {
                Issue.record("\(reason) was not retried")
                continue
            }
            #expect(delay >= least && delay < least + 100_000_000, "\(reason)")
        }
    }

    /// A refused bearer is tried again once the token had time to be renewed; with no tries
    /// left it is an answer without a reason.
    @Test func aRefusedBearerWaitsForItsRenewal() {
        var policy = Self.policy(attempts: 2)
        guard case .retry(let delay) = policy.next(after: .unauthenticated, attempts: 0) else {
            Issue.record("a 401 was not retried")
            return
        }
        #expect(delay >= RetryPolicy.renewalWait && delay < RetryPolicy.renewalWait + 100_000_000)
        #expect(policy.next(after: .unauthenticated, attempts: 1) == .fail(.unexpectedResponse))
    }

    /// `Retry-After` as the connection reads it: delay-seconds, capped at an hour; a date, a
    /// sign, a space or more than ten digits are none.
    @Test(
        arguments: [
            ("25", 25_000_000_000), ("0", 0), ("3600", 3_600_000_000_000), ("86400", 3_600_000_000_000),
            ("9999999999", 3_600_000_000_000), ("99999999999", 0), ("", 0), ("-5", 0), (" 5", 0), ("5s", 0),
            ("Wed, 21 Oct 2026 07:28:00 GMT", 0),
        ] as [(String, UInt64)]
    )
    func retryAfterIsDelaySeconds(text: String, nanoseconds: UInt64) {
        let bytes = Array(text.utf8)
        #expect(bytes.withUnsafeBytes { LoadConnection.retryAfter(value: $0) } == nanoseconds)
        #expect(LoadConnection.retryAfter(value: nil) == 0)
    }
}
