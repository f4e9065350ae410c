import FanoutAPNs
import Testing

@testable import FanoutScenarioTerms
@testable import FanoutSink

/// The sink connection's state machines driven alone: no socket, no HTTP/2, a made-up clock
/// (nanoseconds from an arbitrary origin). `SinkConnectionState` for faults, idleness and the
/// stream limit; `AnswerScheduler` for latency, pacing, stalls and held answers.
@Suite struct SinkConnectionStateTests {
    typealias State = SinkConnectionState
    static let second: UInt64 = 1_000_000_000
    static let opened: UInt64 = 1_000 * second

    static func state(_ change: (inout State.Settings) -> Void = { _ in }) -> State {
        var settings = State.Settings()
        change(&settings)
        return State(settings, openedAt: opened)
    }

    /// Runs `timeAction` until it has nothing more.
    static func actions(_ state: inout State, at now: UInt64, _ load: State.Load = .init()) -> [State.Action] {
        var actions: [State.Action] = []
        while let action = state.timeAction(now: now, load) { actions.append(action) }
        return actions
    }

    // MARK: faults

    @Test func goAwayAfterRequestsComesOnceAtTheCount() {
        var state = Self.state { $0.faults.goAwayAfterRequests = 3 }
        for total in 1...2 {
            #expect(state.requestArrived(total: total) == nil)
            #expect(state.requestHandled(total: total, rejection: nil) == nil)
        }
        #expect(state.requestArrived(total: 3) == nil)
        #expect(state.requestHandled(total: 3, rejection: nil) == .goAway(.shutdown))
        // Requests the peer sent before reading it change nothing.
        #expect(state.requestHandled(total: 4, rejection: nil) == nil)
    }

    @Test func goAwayAfterRequestsCarriesTheScenarioReason() {
        var state = Self.state {
            $0.faults.goAwayAfterRequests = 1
            $0.faults.goAwayReason = .internalServerError
        }
        #expect(state.requestHandled(total: 1, rejection: nil) == .goAway(.internalServerError))
    }

    @Test func closeAfterRequestsAbortsAtTheCount() {
        var state = Self.state { $0.faults.closeAfterRequests = 2 }
        #expect(state.requestArrived(total: 1) == nil)
        #expect(state.requestArrived(total: 2) == .abort)
    }

    @Test func goAwayAfterTimeIsDueToTheNanosecondAndOnce() {
        var state = Self.state { $0.faults.goAwayAfter = .seconds(60) }
        let due = Self.opened + 60 * Self.second
        #expect(state.nextDeadline == due)
        #expect(Self.actions(&state, at: due - 1).isEmpty)
        #expect(Self.actions(&state, at: due) == [.goAway(.shutdown)])
        #expect(state.nextDeadline == nil)
        #expect(Self.actions(&state, at: due + 120 * Self.second).isEmpty)
    }

    // MARK: idleness

    @Test func anIdleConnectionGetsIdleTimeoutAfterAWholeTimeout() {
        var state = Self.state { $0.idleTimeout = 10 * Self.second }
        let first = Self.opened + 10 * Self.second
        #expect(state.nextDeadline == first)
        // The first look only marks the activity seen (none yet counted at opening).
        #expect(Self.actions(&state, at: first).isEmpty)
        #expect(state.nextDeadline == first + 10 * Self.second)
        #expect(Self.actions(&state, at: first + 10 * Self.second) == [.goAway(.idleTimeout)])
        #expect(state.nextDeadline == nil)
    }

    @Test func requestsStreamsAndHeldAnswersKeepAConnectionAlive() {
        var state = Self.state { $0.idleTimeout = 10 * Self.second }
        var now = Self.opened + 10 * Self.second
        #expect(Self.actions(&state, at: now).isEmpty)
        // A request in the timeout: not idle.
        _ = state.requestArrived(total: 1)
        now += 10 * Self.second
        #expect(Self.actions(&state, at: now).isEmpty)
        // No request, but a stream open, then an answer held: not idle either.
        now += 10 * Self.second
        #expect(Self.actions(&state, at: now, .init(openStreams: 1)).isEmpty)
        now += 10 * Self.second
        #expect(Self.actions(&state, at: now, .init(heldAnswers: 1)).isEmpty)
        now += 10 * Self.second
        #expect(Self.actions(&state, at: now) == [.goAway(.idleTimeout)])
    }

    @Test func incompleteRequestsAreResetAndLookedAtAgainByTheOldestLeft() {
        var state = Self.state { $0.requestTimeout = 10 * Self.second }
        let first = Self.opened + 10 * Self.second
        #expect(state.nextDeadline == first)
        #expect(Self.actions(&state, at: first) == [.resetIncompleteRequests(openedBy: Self.opened)])
        // Nothing more until the connection says what is left.
        #expect(state.nextDeadline == nil)
        state.incompleteRequestsReset(oldestLeft: first - 3 * Self.second, now: first)
        #expect(state.nextDeadline == first + 7 * Self.second)
        state.incompleteRequestsReset(oldestLeft: nil, now: first)
        #expect(state.nextDeadline == first + 10 * Self.second)
    }

    /// A request answered Shutdown (the sink draining, or a scenario's Shutdown error) is
    /// followed by GOAWAY Shutdown, once; another verdict asks for nothing.
    @Test func aShutdownVerdictEndsTheConnectionWithGoAwayShutdownOnce() {
        var state = Self.state()
        #expect(state.requestHandled(total: 1, rejection: .badDeviceToken) == nil)
        #expect(state.requestHandled(total: 2, rejection: .shutdown) == .goAway(.shutdown))
        #expect(state.phase == .closing(.goAway(.shutdown)))
        #expect(state.requestHandled(total: 3, rejection: .shutdown) == nil)
    }

    /// Both at the same request: the scenario's GOAWAY goes out, and no second one.
    @Test func goAwayAfterRequestsComesBeforeAShutdownVerdict() {
        var state = Self.state {
            $0.faults.goAwayAfterRequests = 1
            $0.faults.goAwayReason = .internalServerError
        }
        #expect(state.requestHandled(total: 1, rejection: .shutdown) == .goAway(.internalServerError))
        #expect(state.requestHandled(total: 2, rejection: .shutdown) == nil)
    }

    // MARK: a decided request's reply

    static func decided(
        rejection: APNsReason? = nil,
        unanswered: Bool = false,
        received: UInt64 = opened,
        due: UInt64 = opened,
        sentAt: UInt64 = 0
    ) -> State.DecidedRequest {
        State.DecidedRequest(
            stream: 7,
            rejection: rejection,
            digestHash: 42,
            unanswered: unanswered,
            received: received,
            due: due,
            sentAt: sentAt,
            unregisteredSince: 5
        )
    }

    @Test func anUnansweredRequestHasNoReply() {
        let state = Self.state()
        guard case .none = state.reply(to: Self.decided(unanswered: true), now: Self.opened) else {
            Issue.record("an unanswered request got a reply")
            return
        }
    }

    /// Due by now: written in this turn. A timed request read 3 ms after its send over a wire of
    /// 2 ms each way spent 1 ms in queues (its transit), and its hold is the scenario's 4 ms
    /// plus the wire's way back.
    @Test func anAnswerDueNowIsWrittenWithItsTransitAndHold() {
        let state = Self.state { $0.wireOneWay = 2_000_000 }
        let received = Self.opened + 3_000_000
        let request = Self.decided(
            rejection: .badDeviceToken,
            received: received,
            due: received + 4_000_000,
            sentAt: Self.opened
        )
        guard case .now(let answer) = state.reply(to: request, now: received + 4_000_000) else {
            Issue.record("an answer due now was not written now")
            return
        }
        #expect(answer.stream == 7)
        #expect(answer.rejection == .badDeviceToken)
        #expect(answer.digestHash == 42)
        #expect(answer.due == received + 4_000_000)
        #expect(answer.transit == 1_000_000)
        #expect(answer.held == 6_000_000)
        #expect(answer.unregisteredSince == 5)
    }

    /// Due later: held, its transit in µs and its verdict as `APNsReason.index` (-1: accepted).
    @Test func anAnswerDueLaterIsHeldWithItsTransitInMicroseconds() {
        let state = Self.state()
        let received = Self.opened + 2_500_000
        let request = Self.decided(received: received, due: received + 80_000_000, sentAt: Self.opened)
        guard case .later(let entry) = state.reply(to: request, now: received) else {
            Issue.record("an answer due later was not held")
            return
        }
        #expect(entry.due == received + 80_000_000)
        #expect(entry.stream == 7)
        #expect(entry.transit == 2_500)
        #expect(entry.digestHash == 42)
        #expect(entry.reason == -1)
        let rejected = Self.decided(rejection: .unregistered, received: received, due: received + 1)
        guard case .later(let held) = state.reply(to: rejected, now: received) else {
            Issue.record("a rejection due later was not held")
            return
        }
        #expect(held.reason == Int16(APNsReason.unregistered.index))
        #expect(held.transit == 0)
    }

    /// An untimed request has no transit; a timed one read before the wire could have brought
    /// it still has 1 ns (it was timed); one sent longer ago than `AnswerWriter.longestTransit`
    /// is held to it.
    @Test func aTransitIsZeroOnlyForAnUntimedRequestAndIsBounded() {
        let state = Self.state { $0.wireOneWay = 2_000_000 }
        let received = Self.opened + 1_000_000
        func transit(sentAt: UInt64, received: UInt64) -> UInt64? {
            let request = Self.decided(received: received, due: received, sentAt: sentAt)
            guard case .now(let answer) = state.reply(to: request, now: received) else { return nil }
            return answer.transit
        }
        #expect(transit(sentAt: 0, received: received) == 0)
        #expect(transit(sentAt: Self.opened, received: received) == 1)
        let late = Self.opened + 2 * AnswerWriter.longestTransit
        #expect(transit(sentAt: Self.opened, received: late) == AnswerWriter.longestTransit)
    }

    // MARK: the stream limit

    @Test func theFirstAcceptanceRaisesTheStreamsOnce() {
        var state = Self.state()
        #expect(!state.streamsRaised)
        #expect(state.answered(accepted: false, unacknowledged: 0, now: Self.opened) == nil)
        #expect(state.answered(accepted: true, unacknowledged: 0, now: Self.opened) == .setMaxConcurrentStreams(1000))
        #expect(state.streamsRaised)
        #expect(state.answered(accepted: true, unacknowledged: 1, now: Self.opened) == nil)
        // Without throttling a rejection leaves them raised.
        #expect(state.answered(accepted: false, unacknowledged: 0, now: Self.opened) == nil)
    }

    @Test func aVerifiedCertificateRaisesTheStreamsAtOnce() {
        var state = Self.state()
        #expect(state.certificateVerified(now: Self.opened) == .setMaxConcurrentStreams(1000))
        #expect(state.certificateAuthenticated && state.streamsRaised)
        #expect(state.answered(accepted: true, unacknowledged: 0, now: Self.opened) == nil)
    }

    @Test func throttlingFlipsTheLimitWithEachVerdict() {
        var state = Self.state { $0.throttleAfterRejection = true }
        #expect(state.answered(accepted: true, unacknowledged: 0, now: Self.opened) == .setMaxConcurrentStreams(1000))
        #expect(state.answered(accepted: false, unacknowledged: 0, now: Self.opened) == .setMaxConcurrentStreams(1))
        // A second rejection in a row changes nothing: already throttled.
        #expect(state.answered(accepted: false, unacknowledged: 0, now: Self.opened) == nil)
        #expect(state.answered(accepted: true, unacknowledged: 0, now: Self.opened) == .setMaxConcurrentStreams(1000))
    }

    /// A peer that never acknowledges: the sink sends at most `unacknowledgedSettingsLimit`
    /// SETTINGS however many verdicts flip, then after 10 s with none acknowledged closes the
    /// connection with SETTINGS_TIMEOUT (RFC 9113 §6.5.3).
    @Test func throttlingAgainstAPeerThatWithholdsAcknowledgementsIsBounded() {
        var state = Self.state { $0.throttleAfterRejection = true }
        var unacknowledged = 1  // the connection's initial SETTINGS
        var now = Self.opened
        var sent = 0
        for round in 0..<1_000 {
            now += 1_000_000
            if case .setMaxConcurrentStreams = state.answered(
                accepted: round % 2 == 0,
                unacknowledged: unacknowledged,
                now: now
            ) {
                sent += 1
                unacknowledged += 1
            }
        }
        #expect(unacknowledged == State.unacknowledgedSettingsLimit)
        #expect(sent == State.unacknowledgedSettingsLimit - 1)
        let blocked = Self.opened + 8 * 1_000_000  // the first flip held back
        #expect(state.nextDeadline == blocked + State.settingsTimeout)
        let load = State.Load(unacknowledgedSettings: unacknowledged)
        #expect(Self.actions(&state, at: blocked + State.settingsTimeout - 1, load).isEmpty)
        #expect(Self.actions(&state, at: blocked + State.settingsTimeout, load) == [.goAwaySettingsTimeout])
        #expect(Self.actions(&state, at: blocked + 2 * State.settingsTimeout, load).isEmpty)
    }

    /// A slow peer that does acknowledge: once one acknowledgement brings the SETTINGS waiting
    /// under the limit, nothing times out and flips resume.
    @Test func anAcknowledgementLetsFlipsResume() {
        var state = Self.state { $0.throttleAfterRejection = true }
        var unacknowledged = 1
        for round in 0..<20 {
            if state.answered(accepted: round % 2 == 0, unacknowledged: unacknowledged, now: Self.opened) != nil {
                unacknowledged += 1
            }
        }
        #expect(state.nextDeadline == Self.opened + State.settingsTimeout)
        // One acknowledged 9 s in: under the limit, no timeout due, and the next verdict flips.
        let later = Self.opened + 9 * Self.second
        #expect(Self.actions(&state, at: later, .init(unacknowledgedSettings: unacknowledged - 1)).isEmpty)
        #expect(state.nextDeadline == nil)
        #expect(state.answered(accepted: !state.streamsRaised, unacknowledged: unacknowledged - 1, now: later) != nil)
    }

    // MARK: answers' times

    static func scheduler(_ change: (inout SinkScenario) -> Void, startedAt: UInt64 = opened) -> AnswerScheduler {
        var scenario = SinkScenario()
        change(&scenario)
        return AnswerScheduler(scenario: scenario, coalescing: .off, startedAt: startedAt)
    }

    @Test func aFixedLatencyIsAFloorToTheNanosecond() {
        var scheduler = Self.scheduler { $0.latency = .fixed(.milliseconds(80)) }
        var random = SinkRandom(seed: 1)
        #expect(scheduler.due(received: Self.opened, &random) == Self.opened + 80_000_000)
        #expect(scheduler.due(received: Self.opened + 7, &random) == Self.opened + 80_000_007)
    }

    /// `--connection-rate 100/1s`: answers 10 ms apart however fast requests come.
    @Test func aConnectionRateSpacesAnswersEvenly() {
        var scheduler = Self.scheduler { $0.connectionRate = Rate(limit: 100, window: .seconds(1)) }
        var random = SinkRandom(seed: 1)
        let dues = (0..<5).map { _ in scheduler.due(received: Self.opened, &random) }
        #expect(dues == (0..<5).map { Self.opened + UInt64($0) * 10_000_000 })
        // A request after a pause is answered at once.
        #expect(scheduler.due(received: Self.opened + Self.second, &random) == Self.opened + Self.second)
    }

    /// `--stall 10s:1s`: an answer due inside a window goes out at its end; outside, at once.
    @Test func aStallHoldsAnswersToTheWindowsEnd() {
        var scheduler = Self.scheduler { $0.stall = (every: .seconds(10), length: .seconds(1)) }
        var random = SinkRandom(seed: 1)
        #expect(scheduler.due(received: Self.opened + 9 * Self.second, &random) == Self.opened + 9 * Self.second)
        let inside = Self.opened + 10 * Self.second + 250_000_000
        #expect(scheduler.due(received: inside, &random) == Self.opened + 11 * Self.second)
        #expect(scheduler.due(received: Self.opened + 11 * Self.second, &random) == Self.opened + 11 * Self.second)
        #expect(scheduler.due(received: Self.opened + 20 * Self.second, &random) == Self.opened + 21 * Self.second)
    }

    static func entry(due: UInt64, stream: UInt32) -> PendingResponse {
        PendingResponse(due: due, stream: stream, digestHash: 0, reason: -1)
    }

    @Test func heldAnswersComeOutInDueOrderWhenDue() {
        var scheduler = Self.scheduler { _ in }
        for (stream, due) in [(1, 30), (3, 10), (5, 20)] {
            scheduler.hold(Self.entry(due: Self.opened + UInt64(due), stream: UInt32(stream)))
        }
        #expect(scheduler.earliest == Self.opened + 10)
        #expect(scheduler.popDue(now: Self.opened + 9) == nil)
        var streams: [UInt32] = []
        while let entry = scheduler.popDue(now: Self.opened + 30) { streams.append(entry.stream) }
        #expect(streams == [3, 5, 1])
        #expect(scheduler.held == 0 && scheduler.earliest == nil)
    }

    /// Rapid reset: answers held for reset streams are dropped once resets could be half of
    /// what is held, so the heap stays within twice the streams open.
    @Test func heldAnswersOfResetStreamsAreDroppedInBulk() {
        var scheduler = Self.scheduler { _ in }
        for stream in 0..<200 { scheduler.hold(Self.entry(due: Self.opened + 1, stream: UInt32(2 * stream + 1))) }
        let open: Set<UInt32> = [1, 3, 5]
        for _ in 0..<63 { scheduler.streamReset { open.contains($0) } }
        #expect(scheduler.held == 200)
        for _ in 0..<37 { scheduler.streamReset { open.contains($0) } }
        #expect(scheduler.held == 3)
        var streams: [UInt32] = []
        while let entry = scheduler.popDue(now: Self.opened + 1) { streams.append(entry.stream) }
        #expect(streams.sorted() == [1, 3, 5])
    }
}
