import FanoutEndpoint
import Testing

@testable import FanoutClient

/// Every transition of the load engine's connection slots.
@Suite struct ConnectionPoolTests {
    static let milliseconds: UInt64 = 1_000_000

    @Test func startOpensEverySlotAtOnce() {
        var pool = ConnectionPool(slots: 4)
        #expect(pool.start() == (0..<4).map { .open(slot: $0, delay: 0) })
        #expect(pool.active == 4)
        #expect(pool.slots == Array(repeating: .connecting, count: 4))
    }

    @Test func aSlotThatMadeProgressComesBackWithin50ms() {
        var pool = ConnectionPool(slots: 2)
        _ = pool.start()
        for _ in 0..<100 {
            guard case .open(0, let delay) = pool.connectionEnded(slot: 0, madeProgress: true, workRemains: true) else {
                Issue.record("slot 0 not reopened")
                return
            }
            #expect(delay <= 50 * Self.milliseconds)
            #expect(pool.slots[0] == .waiting)
            pool.opening(slot: 0)
            #expect(pool.slots[0] == .connecting)
        }
    }

    /// The endpoint came back: a connection answered while the other slots wait out backoffs
    /// that grew during the outage. They try again within 50 ms instead (a 4 s outage had left
    /// one of four connections waiting up to 5 s more, past the run's end).
    @Test func anAnswerHurriesSlotsWaitingAfterFailures() {
        var pool = ConnectionPool(slots: 4)
        _ = pool.start()
        // Slots 1–3 fail six times (their ceilings reach 3.2 s); slot 0 connects and answers.
        for slot in 1...3 {
            pool.failAndReopen(slot: slot, times: 6)
            _ = pool.connectionEnded(slot: slot, madeProgress: false, workRemains: true)
        }
        // Slot 3 already started connecting: only the waiting ones are hurried.
        pool.opening(slot: 3)
        let actions = pool.connectionAnswered(slot: 0)
        #expect(actions.count == 2)
        for (action, slot) in zip(actions, [1, 2]) {
            guard case .hurry(slot, let delay) = action else {
                Issue.record("slot \(slot): \(action)")
                continue
            }
            #expect(delay <= 50 * Self.milliseconds)
        }
        // Their failures start again from zero: one more failure waits at most 100 ms.
        pool.opening(slot: 1)
        guard case .open(1, let delay) = pool.connectionEnded(slot: 1, madeProgress: false, workRemains: true) else {
            Issue.record("slot 1 not reopened")
            return
        }
        #expect(delay <= 100 * Self.milliseconds)
        // Nothing to hurry when no slot waits after failures (slot 2 was hurried already).
        pool.opening(slot: 1)
        #expect(pool.connectionAnswered(slot: 0).isEmpty)
    }

    /// A slot's jittered delays can add up to less than an outage: it gives up while the
    /// others still wait. When the endpoint answers again, it comes back.
    @Test func anAnswerBringsBackASlotThatGaveUp() {
        var pool = ConnectionPool(slots: 2, maxFailuresInARow: 3)
        _ = pool.start()
        pool.failAndReopen(slot: 1, times: 3)
        #expect(pool.slots[1] == .gaveUp)
        let actions = pool.connectionAnswered(slot: 0)
        guard actions.count == 1, case .open(1, let delay) = actions[0] else {
            Issue.record("\(actions)")
            return
        }
        #expect(delay <= 50 * Self.milliseconds)
        #expect(pool.slots[1] == .waiting)
        // Its count starts again: three more failures before it gives up once more.
        pool.opening(slot: 1)
        pool.failAndReopen(slot: 1, times: 2)
        #expect(pool.slots[1] == .connecting)
    }

    @Test func failuresBackOffExponentiallyUpToFiveSeconds() {
        var ceilings: [UInt64] = []
        for failures in 1...12 {
            var largest: UInt64 = 0
            // Fresh pools at the same count of failures show the range of the jitter.
            for seed in 0..<64 {
                var probe = ConnectionPool(slots: 1, maxFailuresInARow: 20, seed: UInt64(seed))
                _ = probe.start()
                var action = ConnectionPool.Action.none
                for _ in 0..<failures {
                    action = probe.connectionEnded(slot: 0, madeProgress: false, workRemains: true)
                    probe.opening(slot: 0)
                }
                if case .open(_, let delay) = action { largest = max(largest, delay) }
            }
            ceilings.append(min(5000, 50 << failures) * Self.milliseconds)
            #expect(largest <= ceilings.last!, "after \(failures) failures")
            #expect(largest > ceilings.last! / 4, "after \(failures) failures: jitter too narrow")
        }
    }

    @Test func progressResetsTheSlotsCount() {
        var pool = ConnectionPool(slots: 1, maxFailuresInARow: 3)
        _ = pool.start()
        pool.failAndReopen(slot: 0, times: 2)
        _ = pool.connectionEnded(slot: 0, madeProgress: true, workRemains: true)
        pool.opening(slot: 0)
        for _ in 0..<2 {
            guard case .open = pool.connectionEnded(slot: 0, madeProgress: false, workRemains: true) else {
                Issue.record("gave up although progress reset the count")
                return
            }
            pool.opening(slot: 0)
        }
    }

    /// Failures are counted per slot: two slots failing in turn do not add up to one limit.
    @Test func failuresAreCountedPerSlot() {
        var pool = ConnectionPool(slots: 2, maxFailuresInARow: 3)
        _ = pool.start()
        for _ in 0..<2 {
            for slot in 0..<2 {
                guard case .open(slot, _) = pool.connectionEnded(slot: slot, madeProgress: false, workRemains: true)
                else {
                    Issue.record("slot \(slot) not reopened")
                    return
                }
                pool.opening(slot: slot)
            }
        }
        #expect(pool.active == 2)
    }

    @Test func aSlotGivesUpAloneWhileAnotherWorksAndThePoolGivesUpWithTheLast() {
        var pool = ConnectionPool(slots: 2, maxFailuresInARow: 2)
        _ = pool.start()
        _ = pool.connectionEnded(slot: 0, madeProgress: false, workRemains: true)
        pool.opening(slot: 0)
        #expect(pool.connectionEnded(slot: 0, madeProgress: false, workRemains: true) == ConnectionPool.Action.none)
        #expect(pool.slots == [.gaveUp, .connecting])
        #expect(pool.active == 1)
        _ = pool.connectionEnded(slot: 1, madeProgress: false, workRemains: true)
        pool.opening(slot: 1)
        guard case .giveUp(let giveUp) = pool.connectionEnded(slot: 1, madeProgress: false, workRemains: true) else {
            Issue.record("the pool did not give up")
            return
        }
        #expect(giveUp == .noProgress(slots: 2, times: 2, last: nil))
        #expect("\(giveUp)" == "every connection slot (2) ended 2 times in a row without progress")
        #expect(pool.active == 0)
    }

    @Test func aSlotWithNothingLeftGoesIdle() {
        var pool = ConnectionPool(slots: 2)
        _ = pool.start()
        #expect(pool.connectionEnded(slot: 0, madeProgress: true, workRemains: false) == ConnectionPool.Action.none)
        #expect(pool.connectionEnded(slot: 1, madeProgress: false, workRemains: false) == ConnectionPool.Action.none)
        #expect(pool.slots == [.idle, .idle])
        #expect(pool.active == 0)
    }

    @Test func workHandedBackAfterEverySlotWentIdleReopensOne() {
        var pool = ConnectionPool(slots: 3)
        _ = pool.start()
        _ = pool.connectionEnded(slot: 0, madeProgress: true, workRemains: false)
        #expect(pool.workReturned() == ConnectionPool.Action.none)  // slots 1 and 2 still work
        _ = pool.connectionEnded(slot: 1, madeProgress: true, workRemains: false)
        _ = pool.connectionEnded(slot: 2, madeProgress: true, workRemains: false)
        #expect(pool.workReturned() == .open(slot: 0, delay: 0))
        #expect(pool.active == 1)
        #expect(pool.workReturned() == ConnectionPool.Action.none)
    }

    @Test func theLastSlotGivingUpHandsWorkToAnIdleOne() {
        var pool = ConnectionPool(slots: 2, maxFailuresInARow: 1)
        _ = pool.start()
        _ = pool.connectionEnded(slot: 0, madeProgress: true, workRemains: false)
        #expect(pool.connectionEnded(slot: 1, madeProgress: false, workRemains: true) == .open(slot: 0, delay: 0))
        guard case .giveUp = pool.connectionEnded(slot: 0, madeProgress: false, workRemains: true) else {
            Issue.record("the pool did not give up")
            return
        }
    }

    @Test func nothingOpensAfterCancel() {
        var pool = ConnectionPool(slots: 2)
        _ = pool.start()
        pool.cancel()
        #expect(pool.connectionEnded(slot: 0, madeProgress: true, workRemains: true) == ConnectionPool.Action.none)
        _ = pool.connectionEnded(slot: 1, madeProgress: true, workRemains: true)
        #expect(pool.workReturned() == ConnectionPool.Action.none)
        #expect(pool.active == 0)
    }
}

/// The connect phase: until the endpoint answers, its failures decide when the run ends.
@Suite struct ConnectionPoolReachTests {
    /// A pool of `slots` (10 s to connect) started at 0, told its connections' first answers in
    /// the order `answers` gives them: a slot and its refusal (`nil`: accepted). Every answer
    /// but the last must leave it nothing to do; returns the pool and what the last made it do.
    static func firstAnswers(
        slots: Int,
        _ answers: [(slot: Int, refusal: EndpointFailure?)]
    ) -> (ConnectionPool, [ConnectionPool.Action]) {
        var pool = ConnectionPool(slots: slots, connectTimeout: .seconds(10))
        _ = pool.start(now: 0)
        for answer in answers.dropLast() {
            #expect(
                pool.connectionAnswered(slot: answer.slot, forbidden: answer.refusal).isEmpty,
                "slot \(answer.slot)"
            )
        }
        let last = answers.last.map { pool.connectionAnswered(slot: $0.slot, forbidden: $0.refusal) } ?? []
        return (pool, last)
    }

    static let second: UInt64 = 1_000_000_000
    static let refused = EndpointFailure(.connectionRefused, "ECONNREFUSED")
    static let untrusted = EndpointFailure(.certificateNotTrusted, "self-signed")

    @Test func aFailureRetryingCannotHealEndsTheRunAtOnce() {
        var pool = ConnectionPool(slots: 4, connectTimeout: .seconds(10))
        _ = pool.start(now: 0)
        let action = pool.connectionEnded(
            slot: 2,
            madeProgress: false,
            workRemains: true,
            failure: Self.untrusted,
            now: 1_000
        )
        #expect(action == .giveUp(.unreachable(Self.untrusted)))
        // Slots still connecting end as the engine closes them; nothing opens again.
        #expect(pool.slots == [.connecting, .connecting, .idle, .connecting])
        for slot in [0, 1, 3] {
            #expect(
                pool.connectionEnded(slot: slot, madeProgress: false, workRemains: true, failure: Self.refused) == .none
            )
        }
        #expect(pool.active == 0)
    }

    /// Refused connects are tried again with backoff, never past the connect timeout, and the
    /// run ends with the cause once it has passed, however few tries that took.
    @Test func healableFailuresAreRetriedUntilTheConnectTimeout() {
        var pool = ConnectionPool(slots: 1, maxFailuresInARow: 3, connectTimeout: .seconds(1))
        _ = pool.start(now: 5 * Self.second)
        var now = 5 * Self.second
        var tries = 1
        while true {
            let action = pool.connectionEnded(
                slot: 0,
                madeProgress: false,
                workRemains: true,
                failure: Self.refused,
                now: now
            )
            if case .giveUp(let giveUp) = action {
                #expect(giveUp == .unreachable(Self.refused))
                break
            }
            guard case .open(0, let delay) = action else {
                Issue.record("\(action)")
                return
            }
            #expect(now + delay <= 6 * Self.second, "a retry past the connect timeout")
            now += max(delay, 1_000_000)
            pool.opening(slot: 0)
            tries += 1
        }
        #expect(now >= 6 * Self.second)
        // More than the 3 in a row that would end it once the endpoint has worked: time decides.
        #expect(tries > 3)
    }

    @Test func anAnswerEndsTheConnectPhase() {
        var pool = ConnectionPool(slots: 2, maxFailuresInARow: 2, connectTimeout: .seconds(1))
        _ = pool.start(now: 0)
        #expect(pool.connectionAnswered(slot: 0).isEmpty)
        #expect(pool.reached)
        // Now even a certificate failure is one more failure in a row, not the end.
        guard
            case .open = pool.connectionEnded(
                slot: 1,
                madeProgress: false,
                workRemains: true,
                failure: Self.untrusted,
                now: 2 * Self.second
            )
        else {
            Issue.record("gave up after the endpoint had been reached")
            return
        }
    }

    @Test func a403OnEveryConnectionsFirstRequestEndsTheRun() throws {
        let refusal = EndpointFailure.forbidden(status: 403, reason: .apns(.invalidProviderToken))!
        let (pool, last) = Self.firstAnswers(slots: 3, [(0, refusal), (2, refusal), (1, refusal)])
        #expect(!pool.reached)
        guard case .giveUp(let giveUp) = last.first else {
            Issue.record("the pool did not give up")
            return
        }
        guard case .unreachable(let failure) = giveUp else {
            Issue.record("the pool gave up without naming the refusal: \(giveUp)")
            return
        }
        #expect(failure.cause == .forbidden)
        #expect(failure.detail == "403 InvalidProviderToken")
        // ExpiredProviderToken is renewed, not a refusal; other statuses are answers.
        #expect(EndpointFailure.forbidden(status: 403, reason: .apns(.expiredProviderToken)) == nil)
        #expect(EndpointFailure.forbidden(status: 400, reason: .apns(.badDeviceToken)) == nil)
        // FCM's 401 without a code refuses the bearer; a gateway's 401 to APNs requests is an
        // answer; SENDER_ID_MISMATCH is one token's.
        let bearer = try #require(EndpointFailure.forbidden(status: 401, reason: nil, fcm: true))
        #expect(bearer.cause == .forbidden && bearer.isBearerRefused)
        #expect(EndpointFailure.forbidden(status: 401, reason: nil) == nil)
        #expect(EndpointFailure.forbidden(status: 403, reason: .fcm(.senderIDMismatch), fcm: true) == nil)
        #expect(EndpointFailure.forbidden(status: 403, reason: nil, fcm: true)?.isBearerRefused == false)
    }

    @Test func oneAcceptedFirstAnswerOutweighsRefusals() {
        let refusal = EndpointFailure.forbidden(status: 403, reason: .apns(.badCertificate))!
        let (pool, last) = Self.firstAnswers(slots: 2, [(0, nil), (1, refusal)])
        #expect(last.isEmpty)
        #expect(pool.reached)
    }

    /// A refused slot waits for the others; when they go idle (nothing left for them) or give
    /// up, nobody is left to learn otherwise from: the run ends on the refusal, not on a hang.
    @Test func aRefusedSlotWithEveryOtherDoneEndsTheRun() {
        let refusal = EndpointFailure.forbidden(status: 403, reason: .apns(.invalidProviderToken))!
        var (pool, last) = Self.firstAnswers(slots: 3, [(0, refusal)])
        #expect(last.isEmpty)
        #expect(pool.connectionEnded(slot: 1, madeProgress: false, workRemains: false) == .none)
        #expect(
            pool.connectionEnded(slot: 2, madeProgress: false, workRemains: false) == .giveUp(.unreachable(refusal))
        )
        #expect(!pool.reached)
    }

    /// A refused slot's connection ends having sent its requests: that is no progress, and it
    /// does not make the others' refusals look like their own.
    @Test func aRefusedConnectionsEndIsNoReach() {
        let refusal = EndpointFailure.forbidden(status: 401, reason: nil, fcm: true)!
        var (pool, _) = Self.firstAnswers(slots: 2, [(0, refusal)])
        guard case .open(0, _) = pool.connectionEnded(slot: 0, madeProgress: true, workRemains: true) else {
            Issue.record("the refused slot was not reopened")
            return
        }
        #expect(!pool.reached)
        pool.opening(slot: 0)
        #expect(pool.connectionAnswered(slot: 1, forbidden: refusal) == [.giveUp(.unreachable(refusal))])
    }
}

extension ConnectionPool {
    /// `slot`'s connection ends `times` times without progress, each time reopened once its
    /// delay has passed.
    mutating func failAndReopen(slot: Int, times: Int) {
        for _ in 0..<times {
            _ = connectionEnded(slot: slot, madeProgress: false, workRemains: true)
            opening(slot: slot)
        }
    }
}
