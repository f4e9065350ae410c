import FanoutFCMAuth
import Foundation
import NIOConcurrencyHelpers
import NIOCore

/// A sender's FCM access token (docs/fcm.md, "OAuth2"): fetched from the service account's
/// `token_uri` with an assertion its key signs, before the first send, and again ahead of its
/// expiry or once FCM refuses it (`FCMTokenSchedule` decides; this carries it out on `loop`).
/// Every connection reads the same token (`current`), which never waits on the network: the
/// next one is fetched while the last is still good.
///
/// ```
///   start() ──► fetch ──► token 1 ──► current() … ──► E − 3m45s: fetch ──► token 2 …
///                                  └─► refused(generation: 1) by a 401 ──► fetch at once
/// ```
package final class FCMBearerTokens: Sendable {
    package let account: FCMServiceAccount
    private let request: FCMTokenRequest
    private let loop: any EventLoop
    private let clock: @Sendable () -> UInt64
    private let wallClock: @Sendable () -> Int
    private let state: NIOLockedValueBox<State>
    /// Each fetch's end, for `start`.
    private let outcomes = AsyncStream.makeStream(of: Outcome.self, bufferingPolicy: .bufferingNewest(8))

    private struct Outcome: Sendable {
        /// `nil`: a token came.
        var failure: FCMTokenError?
        /// Fetches failed in a row.
        var failures: Int
    }

    private struct State {
        var schedule = FCMTokenSchedule()
        var timer: Scheduled<Void>?
        var stopped = false
        var started = false
        /// Who waits for a count of tokens fetched (`fetched(atLeast:)`).
        var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
        /// `started(attempts:)`'s promise, until the first token or the last try's failure.
        var start: (promise: EventLoopPromise<Void>, attempts: Int)?
    }

    /// Tokens for `account` from `request`'s endpoint, fetched on `loop`.
    package init(
        account: FCMServiceAccount,
        request: FCMTokenRequest,
        loop: any EventLoop,
        clock: @escaping @Sendable () -> UInt64 = { NIODeadline.now().uptimeNanoseconds },
        wallClock: @escaping @Sendable () -> Int = { Int(Date().timeIntervalSince1970) }
    ) {
        self.account = account
        self.request = request
        self.loop = loop
        self.clock = clock
        self.wallClock = wallClock
        state = NIOLockedValueBox(State())
    }

    /// The `authorization` value to send now (`Bearer <token>`) and its generation, or `nil`
    /// when no token is valid: then nothing is sent.
    package func current() -> (value: String, generation: Int)? {
        let now = clock()
        return state.withLockedValue { $0.schedule.valid(at: now) }.map { ($0.authorization, $0.generation) }
    }

    /// How many tokens were fetched so far (each is a generation).
    package var fetchedCount: Int { state.withLockedValue { $0.schedule.token?.generation ?? 0 } }

    /// Returns once `count` tokens have been fetched (or fetching stopped).
    package func fetched(atLeast count: Int) async {
        await withCheckedContinuation { continuation in
            let ready = state.withLockedValue { state in
                guard (state.schedule.token?.generation ?? 0) < count, !state.stopped else { return true }
                state.waiters.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// FCM answered 401 to a request that carried generation `generation`'s token.
    package func refused(generation: Int) {
        let now = clock()
        // Only the first refusal of a token moves the schedule; the rest cost a lock.
        guard state.withLockedValue({ $0.schedule.refused(generation: generation, now: now) }) else { return }
        loop.execute { self.turn() }
    }

    /// Fetches the first token: returns once there is one, or throws the endpoint's refusal, or
    /// its failure after `attempts` tries (transient failures are tried again after 1 s, 2 s…,
    /// as google-auth tries three times).
    ///
    /// Called once. A cancelled task stops the fetching and throws that it was stopped.
    package func start(attempts: Int = 3) async throws(FCMTokenError) {
        let first = state.withLockedValue { state in
            defer { state.started = true }
            return !state.started
        }
        precondition(first, "FCMBearerTokens.start is called once")
        loop.execute { self.turn() }
        let failure: FCMTokenError? = await withTaskCancellationHandler {
            for await outcome in outcomes.stream {
                guard let failure = outcome.failure else { return nil }
                if !failure.isTransient || outcome.failures >= attempts { return failure }
            }
            return FCMTokenError(endpoint: request.endpoint, .noAnswer, "was stopped before it answered")
        } onCancel: {
            stop()
        }
        guard let failure else { return }
        stop()
        throw failure
    }

    /// `start(attempts:)` for a caller that is not async (`fanout send`'s job, which may run on
    /// a thread of Swift's cooperative pool): a future of the loop, so waiting on it needs no
    /// task to run. Called once, instead of `start`.
    package func started(attempts: Int = 3) -> EventLoopFuture<Void> {
        let promise = loop.makePromise(of: Void.self)
        let first = state.withLockedValue { state in
            defer { state.started = true }
            if !state.started { state.start = (promise, attempts) }
            return !state.started
        }
        precondition(first, "FCMBearerTokens.start or started is called once")
        loop.execute { self.turn() }
        return promise.futureResult
    }

    /// Stops fetching: a timer waiting is cancelled, a fetch under way is let go of.
    package func stop() {
        let (waiting, start) = state.withLockedValue { state in
            state.stopped = true
            state.timer?.cancel()
            state.timer = nil
            defer {
                state.waiters = []
                state.start = nil
            }
            return (state.waiters, state.start)
        }
        for waiter in waiting { waiter.continuation.resume() }
        start?.promise.fail(FCMTokenError(endpoint: request.endpoint, .noAnswer, "was stopped before it answered"))
        outcomes.continuation.finish()
    }

    // MARK: Carrying out the schedule

    /// Does what the schedule says at the clock's now.
    private func turn() {
        loop.assertInEventLoop()
        let now = clock()
        let action: FCMTokenSchedule.Action? = state.withLockedValue { state in
            guard !state.stopped else { return nil }
            state.timer?.cancel()
            state.timer = nil
            return state.schedule.next(now: now)
        }
        switch action {
        case .fetch:
            fetch()
        case .wait(let until):
            let timer = loop.scheduleTask(in: .nanoseconds(Int64(clamping: until - now))) { self.turn() }
            state.withLockedValue { state in
                if state.stopped { timer.cancel() } else { state.timer = timer }
            }
        case .waitForFetch, nil:
            break
        }
    }

    private func fetch() {
        let assertion: String
        do {
            assertion = try FCMAssertion.signed(by: account, issuedAt: wallClock())
        } catch {
            let failure = FCMTokenError(
                endpoint: request.endpoint,
                .refused,
                "was not asked: the service account's key cannot sign the assertion (\(error))"
            )
            ended(.failure(failure))
            return
        }
        let endpoint = request.endpoint
        request.fetch(form: FCMAssertion.form(assertion), on: loop).whenComplete { result in
            self.ended(
                result.mapError { $0 as? FCMTokenError ?? FCMTokenError(endpoint: endpoint, .unreachable, "\($0)") }
            )
        }
    }

    private func ended(_ result: Result<(accessToken: String, expiresIn: Int), FCMTokenError>) {
        let now = clock()
        let (outcome, ready, start) = state.withLockedValue { state in
            var failure: FCMTokenError?
            switch result {
            case .success(let answer):
                if !state.schedule.fetched(accessToken: answer.accessToken, expiresIn: answer.expiresIn, now: now) {
                    failure = FCMTokenError(
                        endpoint: request.endpoint,
                        .badAnswer,
                        "answered a token of \(answer.expiresIn) s that had expired when it came"
                    )
                }
            case .failure(let refusal):
                state.schedule.failed(now: now)
                failure = refusal
            }
            let fetched = state.schedule.token?.generation ?? 0
            let ready = state.waiters.filter { $0.count <= fetched }.map(\.continuation)
            state.waiters.removeAll { $0.count <= fetched }
            let outcome = Outcome(failure: failure, failures: state.schedule.failures)
            // `started`'s promise: kept through transient failures until its tries are spent.
            var start: (EventLoopPromise<Void>, FCMTokenError?)?
            if let waiting = state.start {
                if let failure {
                    if !failure.isTransient || outcome.failures >= waiting.attempts {
                        start = (waiting.promise, failure)
                    }
                } else {
                    start = (waiting.promise, nil)
                }
                if start != nil { state.start = nil }
            }
            return (outcome, ready, start)
        }
        for continuation in ready { continuation.resume() }
        if let (promise, failure) = start {
            if let failure {
                stop()
                promise.fail(failure)
                return
            }
            promise.succeed()
        }
        outcomes.continuation.yield(outcome)
        turn()
    }
}
