import FanoutScenarioTerms
import Testing

@testable import FanoutRun

/// The return wave's plan (issue #63) against a convolution computed here another way: the
/// deliveries binned evenly over the fan-out, the open delays drawn two million times with the
/// sink's own draws and binned, the two convolved bin by bin. The plan's peak must be within 5%
/// of the convolution's; its pace the shortest that keeps the wave under a capacity.
@Suite struct WavePlanTests {
    /// The convolution's peak rate (requests a second) and when, with bins of `bin` seconds.
    static func convolvedPeak(
        _ question: WavePlan.Question,
        devices: Double,
        fanOut: Double,
        bin: Double
    ) -> (rate: Double, at: Double) {
        var random = SinkRandom(seed: 42)
        let draws = 2_000_000
        var delays: [Double] = []
        for _ in 0..<draws {
            let seconds = Double(question.openAfter.sample(&random)) / 1e9
            let index = Int(seconds / bin)
            // The far tail past a million bins cannot be the peak.
            guard index < 1_000_000 else { continue }
            if index >= delays.count { delays += Array(repeating: 0, count: index - delays.count + 1) }
            delays[index] += 1 / Double(draws)
        }
        let deliveryBins = max(1, Int((fanOut / bin).rounded()))
        let requests = devices * question.open * Double(question.requestsPerOpen)
        var wave = [Double](repeating: 0, count: delays.count + deliveryBins)
        for delivery in 0..<deliveryBins {
            for (index, share) in delays.enumerated() where share > 0 {
                wave[delivery + index] += requests / Double(deliveryBins) * share
            }
        }
        let best = wave.indices.max { wave[$0] < wave[$1] }!
        return (wave[best] / bin, (Double(best) + 0.5) * bin)
    }

    @Test(arguments: [
        ("lognormal:7m,1.2", 50_000_000.0, 300.0, 5.0),
        ("uniform:0s-10s", 100_000.0, 1.0, 0.1),
        ("normal:8s,3s", 2_400.0, 0.5, 0.1),
        ("fixed:30s", 1_000_000.0, 60.0, 1.0),
    ])
    func thePeakIsTheConvolutions(_ spread: String, _ devices: Double, _ fanOut: Double, _ bin: Double) throws {
        let question = WavePlan.Question(
            open: 0.03,
            openAfter: try LatencyDistribution(parsing: spread),
            requestsPerOpen: 4,
            capacity: nil
        )
        let plan = WavePlan(question, devices: UInt64(devices), fanOutSeconds: fanOut)
        let convolved = Self.convolvedPeak(question, devices: devices, fanOut: fanOut, bin: bin)
        #expect(
            abs(plan.peak - convolved.rate) <= 0.05 * convolved.rate,
            "\(spread): plan \(plan.peak)/s, convolution \(convolved.rate)/s"
        )
        // A uniform or fixed delay makes a plateau, where any time is the peak's; a bell one peak.
        if spread.hasPrefix("lognormal") || spread.hasPrefix("normal") {
            #expect(
                abs(plan.peakSeconds - convolved.at) <= max(2 * bin, 0.1 * convolved.at),
                "\(spread): at \(plan.peakSeconds) s, \(convolved.at) s"
            )
        }
        #expect(abs(plan.requests - devices * 0.03 * 4) < 1)
    }

    /// The pace: the shortest fan-out whose wave stays under the capacity — a fan-out 3% shorter
    /// would pass it; one the plan's length does not. A capacity the wave never reaches keeps
    /// the fan-out as it is.
    @Test func thePaceIsTheShortestUnderTheCapacity() throws {
        let openAfter = try LatencyDistribution(parsing: "lognormal:7m,1.2")
        let base = WavePlan.Question(open: 0.03, openAfter: openAfter, requestsPerOpen: 4, capacity: nil)
        let unpaced = WavePlan(base, devices: 50_000_000, fanOutSeconds: 300)
        var question = base
        question.capacity = unpaced.peak / 3
        let plan = WavePlan(question, devices: 50_000_000, fanOutSeconds: 300)
        let paced = try #require(plan.pacedSeconds)
        #expect(plan.holds == false && paced > 300)
        #expect(WavePlan(base, devices: 50_000_000, fanOutSeconds: paced).peak <= unpaced.peak / 3 * 1.001)
        #expect(WavePlan(base, devices: 50_000_000, fanOutSeconds: paced * 0.97).peak > unpaced.peak / 3)
        question.capacity = unpaced.peak * 2
        let roomy = WavePlan(question, devices: 50_000_000, fanOutSeconds: 300)
        #expect(roomy.holds == true && roomy.pacedSeconds == 300)
        // A pace past the deadline is said so (newcomer pass 5: 20 s under a 10 s deadline, silent).
        question.capacity = unpaced.peak / 3
        let late = WavePlan(question, devices: 50_000_000, fanOutSeconds: 300, deadlineSeconds: 300)
        #expect(
            late.text.components(separatedBy: "\n").last
                == "  that is longer than the --deadline of 5.0 min: the deadline and this backend cannot both hold",
            "\(late.text)"
        )
        let inTime = WavePlan(question, devices: 50_000_000, fanOutSeconds: 300, deadlineSeconds: paced * 2)
        #expect(
            inTime.text.components(separatedBy: "\n").count == late.text.components(separatedBy: "\n").count - 1,
            "\(inTime.text)"
        )
    }

    /// A fixed delay and a fan-out far shorter than the grid's step: the plateau between the
    /// delay and the delay plus the fan-out is found at the delay's breakpoint.
    @Test func aPlateauNarrowerThanTheGridIsFound() {
        let question = WavePlan.Question(
            open: 0.5,
            openAfter: .fixed(.seconds(3600)),
            requestsPerOpen: 2,
            capacity: nil
        )
        let plan = WavePlan(question, devices: 10_000, fanOutSeconds: 0.1)
        // 10,000 requests over 0.1 s.
        #expect(abs(plan.peak - 100_000) < 1_000, "\(plan.peak)")
        #expect(plan.peakSeconds >= 3600 && plan.peakSeconds <= 3600.1)
    }

    /// What a rehearsal's busiest whole second is predicted to hold: the wave integrated over
    /// each second. A trapezoid's plateau (a fan-out longer than a uniform delay) holds its
    /// rate; a burst narrower than a second is all in one second, or split over two by its edge.
    @Test func theBusiestWholeSecondIsTheWaveIntegratedOverIt() {
        let uniform = WavePlan.Question(
            open: 1,
            openAfter: .uniform(.zero, .seconds(10)),
            requestsPerOpen: 1,
            capacity: nil
        )
        // 40,000 requests, fan-out 13.33 s: the plateau 3,000/s from 10 s to 13.33 s.
        let plateau = WavePlan.busiestSecond(uniform, total: 40_000, fanOut: 40_000.0 / 3_000)
        #expect(abs(plateau - 3_000) < 1, "\(plateau)")
        let fixed = WavePlan.Question(
            open: 1,
            openAfter: .fixed(.milliseconds(2_200)),
            requestsPerOpen: 1,
            capacity: nil
        )
        // 500 requests due over 2.2–2.4 s: all in second 2.
        #expect(abs(WavePlan.busiestSecond(fixed, total: 500, fanOut: 0.2) - 500) < 1)
        // Over 2.9–3.1 s: half in each of seconds 2 and 3.
        let edge = WavePlan.Question(
            open: 1,
            openAfter: .fixed(.milliseconds(2_900)),
            requestsPerOpen: 1,
            capacity: nil
        )
        #expect(abs(WavePlan.busiestSecond(edge, total: 500, fanOut: 0.2) - 250) < 1)
    }
}
