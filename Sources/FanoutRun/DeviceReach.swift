import FanoutDevices
import FanoutNotation
import FanoutRandom
import FanoutResults
import FanoutScenarioTerms
import FanoutSink
import Foundation

/// The planner's second question (issue #51): not when APNs has accepted the fan-out, but when
/// it has reached a share of the devices, given the fleet the sink models (docs/sink.md,
/// "Devices behind the sink"): a share offline when the fan-out starts, back after a spread
/// counted from its start, and each notification's `apns-expiration`.
///
/// The fan-out sends at the plan's rate, so a device's notification is accepted at a time
/// uniform over the expected duration `D`. Then, as the sink's fleet decides:
///
/// ```
///   online:   reached when accepted (s)
///   offline:  back at R (drawn from the spread; never: lost)
///             R ≤ s          reached at s (it was back already)
///             s < R ≤ s + E  reached at R (stored until it came back)
///             R > s + E      lost: Discarded – Expired (E = 0: apns-expiration 0, deliver once)
/// ```
///
/// A Monte Carlo of `samples` devices with the sink's own draws (`LatencyDistribution.draws`);
/// the delivery delay to a device that can take it is left out (milliseconds against a
/// campaign's minutes).
public struct DeviceReach: Sendable {
    /// The fleet, as `fanout plan --device-…` gives it.
    public struct Question: Sendable, Hashable {
        /// Devices offline when the fan-out starts (0...1).
        public var offline = 0.0
        /// When an offline device is back, from the fan-out's start; `nil`: not within the run.
        public var returnAfter: LatencyDistribution?
        /// Each notification's `apns-expiration`, as the time after it is sent: 0 delivers once
        /// or never; `nil` (no header) stores it for `defaultExpiry`.
        public var expiration: Duration?
        /// The sink's `--device-default-expiry`: storage without `apns-expiration`.
        public var defaultExpiry = DeviceFleetSettings().defaultExpiry
        public var seed: UInt64 = 1

        public init() {}

        /// The longest a notification waits in storage, seconds.
        var storage: Double { (expiration ?? defaultExpiry).seconds }
    }

    public let question: Question
    /// When APNs has accepted the whole fan-out (the plan's expected duration), seconds.
    public let acceptedSeconds: Double
    /// The devices modelled.
    public let samples: Int
    /// When each reached device had it (seconds from the fan-out's start), sorted.
    private let reached: [Double]

    /// The shares given at these times after acceptance, as well as at it.
    public static let after: [Double] = [60, 300, 3600]
    /// The shares of the devices whose time to reach is said.
    public static let targets: [Double] = [0.5, 0.9, 0.99]

    public init(_ question: Question, acceptedSeconds: Double, samples: Int = 200_000) {
        self.question = question
        self.acceptedSeconds = max(0, acceptedSeconds)
        self.samples = max(1, samples)
        let returns = question.returnAfter?.draws(self.samples, seed: SeededRandom.mix(question.seed ^ 0x5EED_0F_BAC4))
        var random = SeededRandom(seed: question.seed)
        var times: [Double] = []
        times.reserveCapacity(self.samples)
        let storage = question.storage
        for index in 0..<self.samples {
            // Accepted at an even step of the fan-out, offline or not by a draw.
            let sent = self.acceptedSeconds * (Double(index) + 0.5) / Double(self.samples)
            guard random.unit() < question.offline else {
                times.append(sent)
                continue
            }
            guard let back = returns?[index] else { continue }
            if back <= sent {
                times.append(sent)
            } else if back - sent <= storage && storage > 0 {
                times.append(back)
            }
        }
        reached = times.sorted()
    }

    /// The share of all devices reached by `seconds` after the fan-out's start.
    public func share(by seconds: Double) -> Double {
        var low = 0
        var high = reached.count
        while low < high {
            let middle = (low + high) / 2
            if reached[middle] <= seconds { low = middle + 1 } else { high = middle }
        }
        return Double(low) / Double(samples)
    }

    /// The share reached in the end; the rest is lost (offline past its expiration, or never back).
    public var finalShare: Double { Double(reached.count) / Double(samples) }

    /// Seconds from the fan-out's start until `share` of all devices had it; `nil`: never.
    public func time(toReach share: Double) -> Double? {
        let needed = Int((share * Double(samples)).rounded(.up))
        guard needed <= reached.count else { return nil }
        return needed == 0 ? 0 : reached[needed - 1]
    }

    /// plan.json's `reach`.
    public var document: PlanDocument.Reach {
        PlanDocument.Reach(
            offline: question.offline,
            returnAfter: question.returnAfter.map { "\($0)" } ?? "never",
            expirationSeconds: question.expiration?.seconds,
            defaultExpirySeconds: question.defaultExpiry.seconds,
            acceptedSeconds: acceptedSeconds,
            atAcceptance: share(by: acceptedSeconds),
            after: Self.after.map { .init(seconds: $0, share: share(by: acceptedSeconds + $0)) },
            targets: Self.targets.map { .init(share: $0, seconds: time(toReach: $0)) },
            finalShare: finalShare,
            samples: samples
        )
    }

    /// What `fanout plan` prints:
    ///
    /// ```
    ///   devices: 70.0% reached when APNs has accepted the fan-out (0.0 s); 85.0% by +1m, 100.0% by +5m, 100.0% by +1h
    ///     50% of the devices at 0.0 s, 90% at 80.0 s, 99% at 116.0 s; in the end 100.0% (lost: 0.0%)
    /// ```
    public var text: String {
        func percent(_ share: Double) -> String { String(format: "%.1f%%", share * 100) }
        func seconds(_ value: Double) -> String { String(format: "%.1f s", value) }
        let later = Self.after.map {
            "\(percent(share(by: acceptedSeconds + $0))) by +\(DurationNotation.format(.seconds($0)))"
        }
        let times = Self.targets.map { target in
            "\(Int(target * 100))%" + (time(toReach: target).map { " at \(seconds($0))" } ?? " never")
        }
        return
            "devices: \(percent(share(by: acceptedSeconds))) reached when APNs has accepted the fan-out (\(seconds(acceptedSeconds))); "
            + later.joined(separator: ", ") + "\n  " + times.joined(separator: ", ")
            + "; in the end \(percent(finalShare)) (lost: \(percent(1 - finalShare)): offline past their expiration or never back)"
    }
}
