import Testing

@testable import FanoutProbe

/// The probe's state machine, driven with a made-up clock: its phases in order, the refill a
/// server showed, the bytes a request put on the wire, and the flow test against made-up
/// servers whose window, refill rule and stream limit are known, so the rate and what bound it
/// are known too.
@Suite struct ProbeStateTests {
    /// `next` with SETTINGS in and a window that never binds.
    static func next(_ state: inout ProbeState, _ now: UInt64, settings: Bool = true, streams: Int) -> ProbeState.Action
    {
        state.next(now: now, hasPeerSettings: settings, availableStreams: streams, connectionWindow: 65_535)
    }

    @Test func phasesRunInOrder() {
        var state = ProbeState(pings: 2, requests: 3)
        #expect(Self.next(&state, 0, settings: false, streams: 1) == .wait)
        #expect(Self.next(&state, 10, streams: 1) == .ping(opaque: 0xFA_9000))
        #expect(Self.next(&state, 11, streams: 1) == .wait)
        state.pingAcknowledged(0xFA_9000, now: 110)
        #expect(Self.next(&state, 110, streams: 1) == .ping(opaque: 0xFA_9001))
        state.pingAcknowledged(0xFA_9001, now: 310)
        // One at a time: the next goes when the last is answered.
        #expect(Self.next(&state, 310, streams: 1) == .send(index: 0, tag: 0))
        #expect(Self.next(&state, 311, streams: 1) == .wait)
        state.answered(tag: 0, status: 200, reason: nil, now: 1310)
        #expect(Self.next(&state, 1310, streams: 500) == .send(index: 1, tag: 1))
        state.answered(tag: 1, status: 400, reason: .badDeviceToken, now: 2310)
        #expect(Self.next(&state, 2310, streams: 500) == .send(index: 2, tag: 2))
        state.reset(tag: 2, now: 2400)
        // In parallel: as many as the streams allow.
        #expect(Self.next(&state, 3000, streams: 2) == .send(index: 0, tag: 0))
        #expect(Self.next(&state, 3000, streams: 1) == .send(index: 1, tag: 1))
        #expect(Self.next(&state, 3000, streams: 0) == .wait)
        state.answered(tag: 0, status: 200, reason: nil, now: 4000)
        #expect(Self.next(&state, 4000, streams: 1) == .send(index: 2, tag: 2))
        state.answered(tag: 1, status: 200, reason: nil, now: 4100)
        state.answered(tag: 2, status: 200, reason: nil, now: 5000)
        #expect(Self.next(&state, 5000, streams: 1) == .finish)
        #expect(state.phase == .done)
        let record = state.record
        #expect(record.pingRoundTrips == [100, 200])
        #expect(record.oneAtATime == [1000, 1000])
        #expect(record.inParallel == [1000, 1100, 1000])
        #expect(record.parallelSpan == 2000)
        #expect(record.peakInFlight == 2)
        #expect(record.resets == 1)
        #expect(record.accepted == 4)
        #expect(record.answers == [ProbeAnswer(status: 200): 4, ProbeAnswer(status: 400, reason: .badDeviceToken): 1])
        #expect(record.flow == nil)
        #expect(record.window.atStart == 65_535)
        #expect(record.window.afterFirstAnswers == 65_535)
    }

    @Test func withoutRequestsItFinishesAfterThePings() {
        var state = ProbeState(pings: 1, requests: 0, flow: .init(duration: 1_000, mostRequests: 10, mostStreams: 10))
        #expect(Self.next(&state, 0, streams: 1) == .ping(opaque: 0xFA_9000))
        state.pingAcknowledged(0xFA_9000, now: 50)
        #expect(Self.next(&state, 50, streams: 1) == .finish)
        // No request went: no refill to judge, no flow test.
        #expect(state.record.window.refill == nil)
        #expect(state.record.flow == nil)
    }

    // MARK: - The refill a server showed

    /// A window record started at `window` with DATA frames of `frame` bytes, `sent` bytes
    /// out, then each of `updates` (increment, bytes sent just before it).
    static func refill(
        window: Int = 65_535,
        frame: Int = 280,
        _ updates: [(increment: Int, sentBefore: Int)]
    ) -> ProbeState.WindowRecord {
        var record = ProbeState.WindowRecord()
        record.observe(connectionWindow: window)
        record.start(at: 0)
        record.largestDataFrame = frame
        var current = window
        for (index, update) in updates.enumerated() {
            current -= update.sentBefore
            record.observe(connectionWindow: current)
            current += update.increment
            _ = record.update(stream: 0, increment: update.increment, windowAfter: current, at: UInt64(index + 1))
        }
        return record
    }

    /// nghttp2's rule: nothing until half is consumed, then all that was consumed.
    @Test func halfIsHalfOrMoreAfterHalfWasOutstanding() {
        let record = Self.refill([(33_040, 65_520), (33_040, 33_040), (33_040, 33_040)])
        #expect(record.refill == .half)
        #expect(record.connectionRefills == 3)
        #expect(record.smallestRefill == 33_040)
        #expect(record.mostInFlight == 65_520)
        // A server crediting everything when 90% is out is "half or more".
        #expect(Self.refill([(59_000, 60_000), (59_000, 59_000)]).refill == .half)
    }

    /// Must fail `half`: updates of a quarter, and half-sized ones before half was outstanding.
    @Test func smallerOrEarlierRefillsAreAThreshold() {
        #expect(Self.refill([(16_384, 16_384), (16_384, 16_384)]).refill == .threshold(smallest: 16_384))
        // 30,000 is ≈ half of 65,535 (≥ 45%), but came with only 31,000 of it outstanding.
        #expect(Self.refill([(30_000, 31_000), (33_000, 33_000)]).refill == .threshold(smallest: 30_000))
        // One smaller refill among half ones spoils the rule.
        #expect(Self.refill([(33_040, 65_520), (8_000, 8_000)]).refill == .threshold(smallest: 8_000))
    }

    @Test func eachFrameIsOneFrameAtATime() {
        let record = Self.refill(Array(repeating: (280, 280), count: 50))
        #expect(record.refill == .eachFrame)
        // Must fail: two frames a refill is a threshold, not each frame.
        #expect(Self.refill(Array(repeating: (560, 560), count: 50)).refill == .threshold(smallest: 560))
    }

    @Test func noRefillIsNoneNeededOnlyBelowHalf() {
        #expect(Self.refill([]).refill == .noneNeeded)
        var large = Self.refill(window: 16 << 20, [])
        large.observe(connectionWindow: (16 << 20) - 1_000_000)
        #expect(large.refill == .noneNeeded)
        // Must fail: half the window out and nothing back.
        var starved = Self.refill([])
        starved.observe(connectionWindow: 65_535 - 40_000)
        #expect(starved.refill == .notRefilled)
    }

    /// An update past what was outstanding grows the grant and is no refill; WINDOW_UPDATEs
    /// before the first request are the window at start.
    @Test func enlargementsAndEarlyUpdatesAreNotRefills() {
        var record = ProbeState.WindowRecord()
        record.observe(connectionWindow: 65_535)
        #expect(record.update(stream: 0, increment: 1_000_000, windowAfter: 1_065_535, at: 1) == nil)
        record.observe(connectionWindow: 1_065_535)
        record.start(at: 2)
        #expect(record.atStart == 1_065_535)
        record.largestDataFrame = 280
        record.observe(connectionWindow: 1_065_535 - 2_800)
        // 2,800 out, 100,000 credited: 2,800 refilled, 97,200 more granted.
        #expect(record.update(stream: 0, increment: 100_000, windowAfter: 1_162_735, at: 3) == 2_800)
        #expect(record.enlarged == 97_200)
        #expect(record.granted == 1_162_735)
        #expect(record.connectionRefills == 0)
        #expect(record.update(stream: 1, increment: 280, windowAfter: 1_162_735, at: 4) == nil)
        #expect(record.streamUpdates == 1)
        #expect(record.updates.map(\.increment) == [100_000, 280])
        #expect(record.refill == .noneNeeded)
    }

    // MARK: - What bound the connection

    @Test func theBoundHeldHalfTheSteadyPart() {
        #expect(ProbeState.Bound.deciding(windowBound: 60, streamsBound: 0, steady: 100) == .window)
        #expect(ProbeState.Bound.deciding(windowBound: 0, streamsBound: 50, steady: 100) == .streams)
        // Must fail: neither held half the time, or there was no steady part.
        #expect(ProbeState.Bound.deciding(windowBound: 40, streamsBound: 40, steady: 100) == .neither)
        #expect(ProbeState.Bound.deciding(windowBound: 0, streamsBound: 0, steady: 0) == .neither)
    }

    /// Answers that come a window at a time: 10 every 100 ms from 50 ms in. Counted over
    /// (0, 460 ms] they say 108.7/s, over (0, 400 ms] 100/s: the count depends on where the
    /// span's ends fall; the slope of the count against time is 100/s either way.
    @Test func theRateIsTheSlopeOfBurstsNotTheirCountOverASpan() throws {
        var fit = ProbeState.LineFit()
        var count = 0.0
        for burst in 0..<5 {
            for _ in 0..<10 {
                count += 1
                fit.add(seconds: 0.05 + 0.1 * Double(burst), count: count)
            }
        }
        let slope = try #require(fit.slope)
        #expect(abs(slope - 100) < 1e-6, "\(slope)")
        #expect(abs(count / 0.46 - 100) > 8)
        // All at one instant: no slope.
        var instant = ProbeState.LineFit()
        for index in 1...10 { instant.add(seconds: 0.2, count: Double(index)) }
        #expect(instant.slope == nil)
    }

    // MARK: - The bytes on the wire

    @Test func aRequestsBytesSplitIntoFrames() {
        func frames(_ sample: ProbeState.WireSample?) -> [Int]? {
            sample.map { [$0.headerBlock, $0.headerFrames, $0.dataBytes, $0.dataFrames, $0.largestDataFrame] }
        }
        #expect(frames(.init(bytes: 9 + 81 + 9 + 280, dataBytes: 280, maxFrameSize: 16_384)) == [81, 1, 280, 1, 280])
        // Over the frame size: CONTINUATION, and DATA in two frames.
        let large = ProbeState.WireSample(
            bytes: 2 * 9 + 20_000 + 2 * 9 + 20_000,
            dataBytes: 20_000,
            maxFrameSize: 16_384
        )
        #expect(frames(large) == [20_000, 2, 20_000, 2, 16_384])
        #expect(ProbeState.WireSample(bytes: 9 + 5, dataBytes: 0, maxFrameSize: 16_384)?.dataFrames == 0)
        // Fewer bytes than a HEADERS frame and the body: not one request's.
        #expect(ProbeState.WireSample(bytes: 280 + 9 + 3, dataBytes: 280, maxFrameSize: 16_384) == nil)
    }

    /// The header block in steady state is the 3rd request's on, not the first's.
    @Test func theSteadyHeaderBlockSkipsTheFirstTwo() {
        var state = ProbeState(pings: 0, requests: 5)
        // Five one at a time, then five in parallel.
        let sizes = [125, 90, 81, 81, 82, 81, 81, 81, 81, 81]
        var blocks = sizes
        var now: UInt64 = 0
        while case .send(_, let tag) = Self.next(&state, now, streams: 1) {
            state.sent(
                bodyBytes: 280,
                wire: .init(bytes: 9 + blocks.removeFirst() + 9 + 280, dataBytes: 280, maxFrameSize: 16_384)
            )
            now += 10
            state.answered(tag: tag, status: 200, reason: nil, now: now)
        }
        #expect(state.record.wire.firstHeaderBlock == 125)
        #expect(state.record.wire.steadyHeaderBlocks == Array(sizes.dropFirst(2)))
        #expect(state.record.wire.steadyHeaderBlock == 81)
        #expect(state.record.wire.bodyBytes == 280)
    }

    // MARK: - The flow test against made-up servers

    /// A server `roundTrip` away on a made-up clock: it grants `window` bytes and refills by
    /// `refill` (given what it consumed and not yet credited, what it credits now), allows
    /// `streams` at once and answers each request at once; the probe's body is `body` bytes.
    struct MadeUpServer {
        var window: Int
        var streams: Int
        var body = 100
        var roundTrip: UInt64 = 10_000_000
        /// How long the server holds each answer (a PING's it answers at once).
        var processing: UInt64 = 0
        var refill: @Sendable (_ consumed: Int, _ window: Int) -> Bool

        static let half: @Sendable (Int, Int) -> Bool = { consumed, window in consumed >= window / 2 }
        static let eachFrame: @Sendable (Int, Int) -> Bool = { consumed, _ in consumed > 0 }
        static let never: @Sendable (Int, Int) -> Bool = { _, _ in false }

        /// Runs the probe to its end; its record.
        func probe(_ plan: ProbeState.FlowPlan, requests: Int = 2) -> ProbeState.Record {
            enum Arrival {
                case pingAck(UInt64)
                case answer(tag: UInt64, credit: Int?)
                case credit(Int)
            }
            var state = ProbeState(pings: 3, requests: requests, flow: plan)
            var now: UInt64 = 1_000_000_000
            var sendWindow = window
            var open = 0
            var consumed = 0
            var arrivals: [(at: UInt64, what: Arrival)] = []
            while true {
                switch state.next(
                    now: now,
                    hasPeerSettings: true,
                    availableStreams: streams - open,
                    connectionWindow: sendWindow
                ) {
                case .ping(let opaque):
                    arrivals.append((now + roundTrip, .pingAck(opaque)))
                case .send(_, let tag):
                    open += 1
                    sendWindow -= body
                    state.sent(
                        bodyBytes: body,
                        wire: .init(bytes: 18 + 50 + body, dataBytes: body, maxFrameSize: 16_384)
                    )
                    // The server reads it half a round trip on; its credit and answer come back
                    // half a round trip later, the credit first.
                    consumed += body
                    var credit: Int?
                    if refill(consumed, window) {
                        credit = consumed
                        consumed = 0
                    }
                    // Answers held by `processing` come after credits of later requests.
                    arrivals.append((now + roundTrip + processing, .answer(tag: tag, credit: nil)))
                    if let credit { arrivals.append((now + roundTrip, .credit(credit))) }
                    arrivals.sort { $0.at < $1.at }
                case .finish:
                    return state.record
                case .wait:
                    let due = min(arrivals.first?.at ?? .max, state.wakeAt ?? .max)
                    guard due < .max else { return state.record }
                    now = max(now, due)
                    while let first = arrivals.first, first.at <= now {
                        arrivals.removeFirst()
                        switch first.what {
                        case .pingAck(let opaque):
                            state.pingAcknowledged(opaque, now: first.at)
                        case .credit(let credit):
                            sendWindow += credit
                            state.windowUpdated(stream: 0, increment: credit, windowAfter: sendWindow, now: first.at)
                        case .answer(let tag, let credit):
                            if let credit {
                                sendWindow += credit
                                state.windowUpdated(
                                    stream: 0,
                                    increment: credit,
                                    windowAfter: sendWindow,
                                    now: first.at
                                )
                            }
                            open -= 1
                            state.answered(tag: tag, status: 200, reason: nil, now: first.at)
                        }
                    }
                }
            }
        }
    }

    static let second: UInt64 = 1_000_000_000

    /// `server` probed for a second, the count out of reach, at most `mostStreams` of the
    /// probe's own: the record, and the flow test it must hold.
    static func probe(
        _ server: MadeUpServer,
        mostStreams: Int = 10_000
    ) throws -> (ProbeState.Record, ProbeState.FlowRecord) {
        let record = server.probe(.init(duration: second, mostRequests: 100_000, mostStreams: mostStreams))
        return (record, try #require(record.flow))
    }

    /// nghttp2's rule on its default 65,535-byte window, 280-byte bodies, 10 ms: the first
    /// refill comes once 117 bodies are in (32,760 < 32,767, the 118th crosses), the bodies
    /// past it stay below the threshold, so each round trip brings back 118 bodies (33,040
    /// bytes): (W/2 + one body) ÷ round trip ÷ body = 11,800/s, bound by the window.
    @Test func aHalfRefilledWindowBindsAtHalfAWindowARoundTrip() throws {
        let server = MadeUpServer(window: 65_535, streams: 1000, body: 280, refill: MadeUpServer.half)
        let (record, flow) = try Self.probe(server)
        #expect(record.window.refill == .half)
        #expect(record.window.smallestRefill == 33_040)
        #expect(flow.bound == .window)
        #expect(flow.boundShares.window > 0.9)
        #expect(flow.target == 2 * 65_535 / 280 + 1)
        let expected = Double(65_535 / 2 + 280) / 0.010 / 280
        let rate = try #require(flow.rate)
        #expect(abs(rate / expected - 1) < 0.01, "rate \(rate), expected \(expected)")
        #expect(flow.mostBytesInFlight == 234 * 280)
        #expect(flow.refillInterval == server.roundTrip)
        let credited = try #require(flow.creditedPerRoundTrip)
        #expect(abs(credited / 33_040 - 1) < 0.01, "credited \(credited) a round trip")
        #expect(!flow.stoppedByCount)
        #expect(flow.answered == flow.sent)
        #expect(record.answers == [ProbeAnswer(status: 200): 4])
    }

    /// Must fail the formula: a window of 10,000 and 100-byte bodies puts the bodies past the
    /// first refill exactly at the threshold (50 × 100 = 5,000), so a second refill follows in
    /// the same round trip: a whole window a round trip, twice what (W/2 + body) says.
    @Test func aRemainderAtTheThresholdRefillsTwiceARoundTrip() throws {
        let server = MadeUpServer(window: 10_000, streams: 1000, refill: MadeUpServer.half)
        let (record, flow) = try Self.probe(server)
        #expect(record.window.refill == .half)
        let rate = try #require(flow.rate)
        #expect(abs(rate / 10_000 - 1) < 0.01, "rate \(rate)")
        #expect(abs(rate / 5_100 - 1) > 0.5)
    }

    /// Each frame credited at once: a whole window a round trip, still bound by the window.
    @Test func anEachFrameWindowBindsAtAWindowARoundTrip() throws {
        let server = MadeUpServer(window: 10_000, streams: 1000, refill: MadeUpServer.eachFrame)
        let (record, flow) = try Self.probe(server)
        #expect(record.window.refill == .eachFrame)
        #expect(flow.bound == .window)
        let rate = try #require(flow.rate)
        #expect(abs(rate / 10_000 - 1) < 0.01, "rate \(rate)")
    }

    /// A window far larger than the streams can fill: 20 streams a round trip, bound by them.
    @Test func fewStreamsBindALargeWindow() throws {
        let server = MadeUpServer(window: 16 << 20, streams: 20, refill: MadeUpServer.half)
        let (record, flow) = try Self.probe(server)
        #expect(record.window.refill == .noneNeeded)
        #expect(flow.bound == .streams)
        #expect(flow.boundShares.streams > 0.9)
        #expect(flow.peakStreams == 20)
        let rate = try #require(flow.rate)
        #expect(abs(rate / 2_000 - 1) < 0.01, "rate \(rate)")
    }

    /// Must fail both: the probe's own stream cap below the server's limit and a window with
    /// room is its own pace, not the endpoint's bound.
    @Test func theProbesOwnCapIsNeither() throws {
        let server = MadeUpServer(window: 16 << 20, streams: 20, refill: MadeUpServer.half)
        let (_, flow) = try Self.probe(server, mostStreams: 5)
        #expect(flow.bound == .neither)
        #expect(flow.peakStreams == 5)
    }

    /// A window that is never refilled stalls the test: not refilled, and it still ends (at
    /// its duration) with what it measured.
    @Test func aWindowNeverRefilledIsSaid() throws {
        let server = MadeUpServer(window: 10_000, streams: 1000, refill: MadeUpServer.never)
        let (record, flow) = try Self.probe(server)
        #expect(record.window.refill == .notRefilled)
        #expect(flow.bound == .window)
        #expect(flow.sent == 10_000 / 100 - 4)
    }

    /// A server holding each answer 70 ms past a 10 ms PING: the test's length and its skipped
    /// start are counted in the request's 80 ms, and 20 streams carry 20 every 80 ms.
    @Test func theRequestsRoundTripPacesTheTest() throws {
        let server = MadeUpServer(window: 16 << 20, streams: 20, processing: 70_000_000, refill: MadeUpServer.half)
        let flow = try #require(
            server.probe(.init(duration: 1_000_000, mostRequests: 100_000, mostStreams: 10_000)).flow
        )
        #expect(flow.roundTrip == 10_000_000)
        #expect(flow.requestRoundTrip == 80_000_000)
        #expect(flow.stopAt - flow.started == 20 * 80_000_000)
        #expect(flow.steadyFrom - flow.started == 2 * 80_000_000)
        #expect(flow.bound == .streams)
        let rate = try #require(flow.rate)
        #expect(abs(rate / 250 - 1) < 0.01, "rate \(rate)")
    }

    /// The count ends sending before the duration; the last answers are awaited, and the
    /// duration is at least 20 round trips.
    @Test func theCountAndTheRoundTripsBoundTheTest() throws {
        let server = MadeUpServer(window: 16 << 20, streams: 20, refill: MadeUpServer.half)
        let counted = try #require(
            server.probe(.init(duration: Self.second, mostRequests: 500, mostStreams: 10_000)).flow
        )
        #expect(counted.stoppedByCount)
        #expect(counted.sent == 500)
        #expect(counted.answered == 500)
        let short = try #require(
            server.probe(.init(duration: 1_000_000, mostRequests: 100_000, mostStreams: 10_000)).flow
        )
        #expect(short.stopAt - short.started == 20 * server.roundTrip)
        #expect(short.steadyFrom - short.started == 2 * server.roundTrip)
    }
}
