import FanoutNotation
import FanoutResults
import FanoutTestSupport
import Foundation
import Testing

@testable import FanoutReport

/// The plan's arithmetic, worked by hand for each case.
@Suite struct CapacityPlanTests {
    /// The plan's figures as its text lays them out, a figure a line: the name, then, past a
    /// gap of two spaces or more, the value (`  binds                  CPU`).
    static func figures(_ text: String) -> [String: String] {
        var figures: [String: String] = [:]
        for line in text.split(separator: "\n") {
            let trimmed = line.drop { $0 == " " }
            guard let gap = trimmed.firstRange(of: "  ") else { continue }
            let name = String(trimmed[..<gap.lowerBound])
            if figures[name] == nil { figures[name] = String(trimmed[gap.upperBound...].drop { $0 == " " }) }
        }
        return figures
    }

    static func question(cpu: Double? = nil) -> CapacityPlan.Question {
        var question = CapacityPlan.Question(
            devices: 50_000_000,
            deadline: .seconds(300),
            roundTrip: .milliseconds(80),
            coresPerMachine: 2
        )
        question.cpuMicroseconds = cpu
        return question
    }

    /// 50M in 5 minutes over an 80 ms round trip: 166,667/s; a connection carries
    /// 1000 ÷ 0.085 s = 11,765/s, 8,235/s at 70%, so 21 connections; at 5 µs a notification a
    /// core sends 200,000/s, so 166,667 ÷ 140,000 = 1.19 cores: one 2-core machine.
    @Test func roundTripsBindWhenACoreOutrunsAConnection() {
        let plan = CapacityPlan(Self.question(cpu: 5))
        #expect(abs(plan.requiredRate - 166_666.67) < 0.01)
        #expect(abs(plan.connectionCeiling - 11_764.71) < 0.01)
        #expect(plan.coreCeiling == 200_000)
        #expect(plan.connections == 21)
        #expect(abs(plan.cores! - 1.190_476) < 1e-6)
        #expect(plan.machines == 1)
        #expect(plan.binding == .roundTrips)
        // 21 × 11,765/s = 247,059/s: 50M in 202.4 s, plus one round trip.
        #expect(abs(plan.expectedDuration.seconds - (50e6 / (21 * 1000 / 0.085) + 0.085)) < 1e-6)
    }

    /// At 200 µs a notification a core sends 5,000/s, less than a connection's 11,765/s: the
    /// CPU binds each connection. 166,667 ÷ (5,000 × 0.7) = 47.6 → 48 connections and cores,
    /// 24 machines of 2 cores.
    @Test func theCPUBindsWhenAConnectionOutrunsACore() {
        let plan = CapacityPlan(Self.question(cpu: 200))
        #expect(plan.binding == .cpu)
        #expect(plan.connections == 48)
        #expect(abs(plan.cores! - 47.619) < 0.001)
        #expect(plan.machines == 24)
        // 48 connections at 5,000/s, capped by 48 cores: 240,000/s.
        #expect(abs(plan.expectedDuration.seconds - (50e6 / 240_000 + 0.085)) < 1e-6)
        #expect(CapacityPlanTests.figures(plan.text)["binds"] == "CPU")
    }

    /// Without a CPU cost the plan gives connections only, and says what is missing.
    @Test func anUnknownCostLeavesMachinesOpen() throws {
        let plan = CapacityPlan(Self.question())
        #expect(plan.connections == 21 && plan.cores == nil && plan.machines == nil)
        #expect(
            plan.assumptions.last
                == "the sender's CPU is not known: give --cost RUN_DIR or --calibrate for cores and machines"
        )
        let written = try JSONDocument.data(plan.document)
        #expect(try holdsNull(written, at: ["machines"]) && holdsNull(written, at: ["cores"]))
        #expect(plan.text.split(separator: "\n").first == "50,000,000 devices in 300 s:")
        #expect(CapacityPlanTests.figures(plan.text)["streams"] == "11,765/s (1000 streams ÷ 85 ms)")
    }
}

/// What binds a connection beyond its streams: the windows, the path's bandwidth, the
/// machine's interface, each worked by hand.
/// The options' extremes (10^15 devices in a microsecond over 2^31−1 streams; a year's round
/// trip over an 8 bit/s path) make plans past any machine, never a trap: `plan --streams
/// 9223372036854775807` used to reach `Int(_:)` with a figure past its range.
@Suite struct CapacityPlanExtremesTests {
    @Test func figuresPastIntAreHeldAndWrittenAsSuch() {
        var question = CapacityPlan.Question(
            devices: 1_000_000_000_000_000,
            deadline: .microseconds(1),
            roundTrip: .microseconds(1),
            coresPerMachine: 65_536
        )
        question.processing = .zero
        question.streams = Int(Int32.max)
        question.cpuMicroseconds = 0.001
        let plan = CapacityPlan(question)
        #expect(plan.requiredRate == 1e21)
        #expect(plan.connections >= 1 && (plan.machines ?? 1) >= 1)
        #expect(CapacityPlanTests.figures(plan.text)["required rate"] == "1e+21/s", "\(plan.text)")
    }

    @Test func aYearsRoundTripOverEightBitsASecond() {
        var question = CapacityPlan.Question(
            devices: 1_000_000_000_000_000,
            deadline: .seconds(1),
            roundTrip: .seconds(8784 * 3600),
            coresPerMachine: 1
        )
        question.streams = 1
        question.flow.bandwidth = 1
        question.flow.bodyBytes = 5120
        let plan = CapacityPlan(question)
        #expect(plan.connections == Int.max)
        #expect(plan.expectedDuration > .zero)
        #expect(!plan.text.isEmpty)
    }
}

@Suite struct CapacityPlanFlowTests {
    static func question(rtt: Duration = .milliseconds(80), processing: Duration = .zero) -> CapacityPlan.Question {
        var question = CapacityPlan.Question(
            devices: 1_000_000,
            deadline: .seconds(300),
            roundTrip: rtt,
            coresPerMachine: 2
        )
        question.processing = processing
        return question
    }

    /// nghttpd's 65,535-byte window refilled at half, 80 ms away, 280-byte bodies: one update
    /// of the 118 bodies that reach 32,767 bytes (33,040) comes back a round trip, 33,040 ÷ 0.08 s
    /// ÷ 280 = 1,475/s, far below
    /// 1000 streams ÷ 80 ms = 12,500/s. (Measured through a relay: 1,404/s.)
    @Test func theConnectionWindowBindsFarFromTheServer() {
        var question = Self.question()
        question.flow.connectionWindow = 65_535
        let plan = CapacityPlan(question)
        #expect(plan.binding == .connectionWindow)
        #expect(abs(plan.connectionCeiling - 33_040 / 0.08 / 280) < 0.01)
        #expect(abs(plan.bounds.streams - 12_500) < 0.01)
        // 3,333/s at 70% of 1,475/s: 4 connections.
        #expect(plan.connections == 4)
        let figures = CapacityPlanTests.figures(plan.text)
        #expect(figures["binds"] == "the connection window")
        #expect(
            figures["connection window"] == "1,475/s (33,040 bytes back a round trip ÷ 80 ms ÷ 280-byte bodies)",
            "\(plan.text)"
        )
    }

    /// With an update a frame the whole window comes back: 65,535 ÷ 0.08 ÷ 280.
    @Test func eachFrameGivesTheWholeWindowBack() {
        var question = Self.question()
        question.flow.connectionWindow = 65_535
        question.flow.refill = .eachFrame
        #expect(abs(CapacityPlan(question).connectionCeiling - 65_535 / 0.08 / 280) < 0.01)
        // A window of 1 MiB at half: one update a round trip, of the 1,873 bodies that reach
        // 524,288 bytes (524,440).
        question.flow.connectionWindow = 1 << 20
        question.flow.refill = .half
        let plan = CapacityPlan(question)
        #expect(abs(plan.bounds.connectionWindow! - 524_440 / 0.08 / 280) < 0.01)
        #expect(plan.binding == .roundTrips)
    }

    /// The window's round trip is the path's: a WINDOW_UPDATE leaves when DATA arrives, not
    /// when it is answered, so processing does not enter it.
    @Test func processingDoesNotSlowTheWindow() {
        var question = Self.question(processing: .milliseconds(200))
        question.flow.connectionWindow = 65_535
        let plan = CapacityPlan(question)
        #expect(abs(plan.bounds.connectionWindow! - 33_040 / 0.08 / 280) < 0.01)
        #expect(abs(plan.bounds.streams - 1000 / 0.28) < 0.01)
    }

    /// A body three stream windows long takes three round trips a stream.
    @Test func aSmallStreamWindowTakesRoundTripsABody() {
        var question = Self.question(processing: .milliseconds(5))
        question.flow.bodyBytes = 1000
        question.flow.streamWindow = 400
        let plan = CapacityPlan(question)
        #expect(abs(plan.bounds.streamWindow! - 1000 / (3 * 0.08 + 0.005)) < 0.01)
        #expect(plan.binding == .streamWindow)
        question.flow.streamWindow = 1000
        #expect(CapacityPlan(question).bounds.streamWindow == nil)
    }

    /// A 10 Mbit/s path over h2c: 81 + 9 + 280 + 9 = 379 bytes a notification, 392.61 with
    /// TCP/IP's 52 bytes a 1,448-byte segment: 1,250,000 ÷ 392.61 = 3,184/s.
    @Test func aConnectionsBandwidthBinds() {
        var question = Self.question(rtt: .milliseconds(10))
        question.flow.tls = false
        question.flow.bandwidth = 1_250_000
        let plan = CapacityPlan(question)
        let wire = 379 * (1 + 52.0 / 1448)
        #expect(abs(plan.question.flow.wireBytes - wire) < 1e-9)
        #expect(abs(plan.connectionCeiling - 1_250_000 / wire) < 0.01)
        #expect(plan.binding == .bandwidth)
    }

    /// 50M in 5 minutes of 4 KiB bodies over TLS: 81 + 9 + 4,096 + 9 + 22 = 4,217 bytes a
    /// notification, 4,368.4 on the wire; 166,667/s is 728 MB/s, past a 1 Gbit/s interface's
    /// 28,615/s (20,031/s at 70%): 9 machines even when the CPU would need one.
    @Test func theNetworkInterfaceAddsMachines() {
        var question = Self.question()
        question.devices = 50_000_000
        question.flow.bodyBytes = 4096
        question.cpuMicroseconds = 5
        let plan = CapacityPlan(question)
        let wire = Double(81 + 9 + 4096 + 9 + 22) * (1 + 52.0 / 1448)
        #expect(abs(plan.bounds.networkInterface - 125_000_000 / wire) < 0.01)
        #expect(plan.machines == Int((166_666.67 / (125_000_000 / wire * 0.7)).rounded(.up)))
        #expect(plan.machines == 9)
        #expect(plan.binding == .roundTrips && plan.machineBinding == .networkInterface)
        #expect(CapacityPlanTests.figures(plan.text)["machines bound by"] == "the network interface")
        // Issue #64: one machine names no bound of machines, in the text or plan.json.
        question.devices = 1_000_000
        let one = CapacityPlan(question)
        #expect(one.machines == 1 && one.machineBinding == nil)
        #expect(CapacityPlanTests.figures(one.text)["machines bound by"] == nil)
    }

    /// Every figure says where it came from.
    @Test func assumptionsNameEachFiguresSource() {
        var question = Self.question()
        #expect(
            CapacityPlan(question).assumptions.filter { $0.hasPrefix("the connection window") }
                == [
                    "the connection window is not known and taken as never binding: give --connection-window or --probe "
                        + "(nghttp2's 65,535 bytes 80 ms away carries about 1,450 bodies of 280 bytes a second)"
                ]
        )
        question.flow.connectionWindow = 65_535
        question.flow.sources.connectionWindow = "given"
        let assumptions = CapacityPlan(question).assumptions.joined(separator: "\n")
        #expect(assumptions.contains("a connection window of 65,535 bytes (given), refilled once half is consumed"))
        #expect(assumptions.contains("280-byte bodies (default: fixtures/poll.json's; give --template)"))
        #expect(assumptions.contains("a network interface of 1 Gbit/s a machine"))
    }
}

/// The window given back a round trip, for each rule, against what an HTTP/2 server with that
/// rule gives back to a client keeping its window full (`WindowRefillTests` in FanoutHTTP2Tests
/// shows the server side: 118 bodies of 280 bytes cross 32,767).
@Suite struct WindowBackTests {
    @Test(arguments: [
        (65_535, 280, CapacityPlan.Refill.half, 33_040.0),
        (65_535, 1000, .half, 33_000.0),
        (65_535, 32_767, .half, 65_534.0),
        (65_535, 4096, .half, 32_768.0),
        (65_535, 280, .eachFrame, 65_535.0),
        (1 << 20, 280, .half, 524_440.0),
    ])
    func windowBack(window: Int, body: Int, refill: CapacityPlan.Refill, back: Double) {
        var flow = CapacityPlan.Flow()
        flow.connectionWindow = window
        flow.bodyBytes = body
        flow.refill = refill
        #expect(flow.windowBackPerRoundTrip == back)
    }

    /// A threshold a probe saw: as many updates as fit.
    @Test func aThresholdGivesBackWhatFits() {
        var flow = CapacityPlan.Flow()
        flow.connectionWindow = 65_535
        flow.bodyBytes = 1000
        flow.refill = .threshold
        flow.refillThreshold = 10_000
        // Updates of 10 bodies; six fit in the window.
        #expect(flow.windowBackPerRoundTrip == 60_000)
    }
}
