import Atomics
import FanoutFCM
import FanoutNotation
import FanoutPush

/// An FCM sink's checks (docs/fcm.md, "What FCM asks of senders"). A sink mocks one service, so
/// an FCM sink's card keeps its memories in the tables an APNs sink's uses, with FCM's meanings:
///
/// ```
///   table        APNs sink                              FCM sink
///   permanent    token → APNsReason.index + 1           token (404, 403) or message (400) → FCMErrorCode.index + 1
///   retryable    token → ms clock of its 429 or 5xx      token → ms clock its Retry-After ends
///   ids          apns-id → its notification's digest     message answered 200 → 1
/// ```
///
/// A message is its whole body, which names its token (`NotificationDigest.hash` of the body
/// alone): what a retry of the same send repeats. Tokens are known by `FCMTokenFate.hash`.
extension ProviderCard {
    /// A send for `token` (`tokenHash`) carrying the message `messageHash` arrived at `now` on
    /// `connection`: was its token, or this very message, refused for good before, or is it
    /// back before the Retry-After its token was told?
    @inlinable
    package func fcmArrived(
        token: UnsafeRawBufferPointer,
        tokenHash: UInt64,
        messageHash: UInt64,
        connection: Int,
        now: UInt64
    ) {
        if permanent.count > 0,
            let value = permanent.value(of: tokenHash) ?? permanent.value(of: messageHash)
        {
            let code = FCMErrorCode.allCases[Int(value) - 1]
            violated(.permanentRetried, token: token, connection: connection, at: now) {
                "sent again after \(code.status?.httpStatus ?? 0) \(code.rawValue)"
            }
        }
        if retryable.count > 0, let ends = retryable.value(of: tokenHash) {
            // Both clocks are 24 bits of milliseconds (they wrap every 4.66 hours, and an entry
            // is never removed): a wait still to come is never longer than the longest the
            // card was told, so a difference past it is a wait long over.
            let early = (ends &- Self.clock(now)) & 0xFF_FFFF
            if early > 0 && early <= longestFCMWait.load(ordering: .relaxed) {
                violated(.fastRetry, token: token, connection: connection, at: now) {
                    "sent again \(early) ms before its Retry-After ended"
                }
            }
        }
    }

    /// The send of `tokenHash`'s message `messageHash` was refused with `code` at `now`, told
    /// to wait `retryAfter` seconds (0 when the answer said nothing).
    @inlinable
    package func fcmRefused(tokenHash: UInt64, messageHash: UInt64, _ code: FCMErrorCode, retryAfter: Int, now: UInt64)
    {
        switch ProviderRule.advice(after: code) {
        case .never:
            // A malformed message may be mended and sent to its token again; the same message may not.
            let key = code == .invalidArgument ? messageHash : tokenHash
            if permanent.insert(key, value: UInt32(code.index + 1)) == .full {
                forgottenRejections.wrappingIncrement(ordering: .relaxed)
            }
        case .afterPause:
            let wait = max(
                UInt64(max(retryAfter, 0)) * 1_000_000_000,
                UInt64(ProviderRule.FastRetry.pause.wholeNanoseconds)
            )
            let milliseconds = UInt32(min(wait / 1_000_000, 0x7F_FFFF))
            var longest = longestFCMWait.load(ordering: .relaxed)
            while milliseconds > longest {
                (_, longest) = longestFCMWait.compareExchange(
                    expected: longest,
                    desired: milliseconds,
                    ordering: .relaxed
                )
            }
            retryable.replace(tokenHash, value: Self.clock(now + wait))
        case .any:
            break
        }
    }

    /// The send of `token`'s message `messageHash` was answered 200 at `now`: a second 200 for
    /// the same message is a duplicate. The table keeps the messages it can and overwrites the
    /// oldest in a full neighbourhood, as the APNs card keeps the recent apns-ids: a duplicate
    /// is found while its first delivery is still held (the most recent million or so).
    @inlinable
    package func fcmDelivered(token: UnsafeRawBufferPointer, messageHash: UInt64, connection: Int, now: UInt64) {
        if ids.value(of: messageHash) != nil {
            violated(.duplicate, token: token, connection: connection, at: now) {
                "a message answered 200 before, sent and answered again"
            }
            return
        }
        ids.replace(messageHash, value: 1)
    }

    /// The project's quota refused a send at `now`, `intoBackOff` after its window's first
    /// refusal: past `ProviderRule.Quota.grace`, or past `roundTrip` (a wire in front: what
    /// was on it when the first 429 left) when that is longer, the provider had been told to stop.
    package func fcmQuotaRefused(
        intoBackOff: UInt64,
        roundTrip: UInt64,
        token: UnsafeRawBufferPointer?,
        connection: Int,
        now: UInt64
    ) {
        guard intoBackOff > max(UInt64(ProviderRule.Quota.grace.wholeNanoseconds), roundTrip) else { return }
        violated(.quotaIgnored, token: token, connection: connection, at: now) {
            "\(intoBackOff / 1_000_000) ms after the window's first 429"
        }
    }

    /// A send was answered 401 on `connection` at `now`; `detail` says why.
    package func fcmBearerRefused(connection: Int, now: UInt64, _ detail: () -> String) {
        violated(.bearer, token: nil, connection: connection, at: now, detail)
    }

    /// A client error (4xx but 429) answered at `now`: remembered as an example while fewer
    /// than `examplesPerRule` are (the count is the statistics', judged against the share of
    /// sends when the card is read).
    package func fcmClientError(token: UnsafeRawBufferPointer?, connection: Int, now: UInt64, _ detail: () -> String) {
        example(.clientErrors, token: token, connection: connection, at: now, detail)
    }
}
