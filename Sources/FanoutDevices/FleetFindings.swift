import FanoutAPNs
import FanoutInstrument
import FanoutPush
import Foundation

/// What the device fleet saw of the provider, for its card (issue #51): the fleet decides each
/// notification's outcome, so it is the one that knows that a notification sent with
/// `apns-expiration: 0` found its device offline, that an alert reached its device from storage
/// long after it was sent, or that a background push went over its device's budget. It counts
/// each as it decides, and keeps the first `ProviderCard.examplesPerRule` of each kind; the card
/// reads them at report time (`DeviceFleetShards.findings()`).
///
/// Counting is an array subscript; an example is made (a string, the apns-id's text) only for
/// the first few, so the hot path allocates nothing once they are kept.
struct FleetFindings {
    /// The card's rules the fleet checks, in `ProviderRule.allCases`' order.
    static let rules = ProviderRule.allCases.filter(\.isFleet)

    private var counts = [Int](repeating: 0, count: 3)
    private(set) var examples: [ProviderCard.Example] = []
    /// The rule of each of `examples`.
    private(set) var exampleRules: [ProviderRule] = []

    init() {
        examples.reserveCapacity(3 * ProviderCard.examplesPerRule)
        exampleRules.reserveCapacity(3 * ProviderCard.examplesPerRule)
    }

    /// The fleet's rule's place among `rules` (a switch, no search).
    @inline(__always)
    private static func slot(_ rule: ProviderRule) -> Int {
        switch rule {
        case .expirationZeroOffline: 0
        case .staleDelivery: 1
        default: 2
        }
    }

    func count(_ rule: ProviderRule) -> Int { counts[Self.slot(rule)] }

    /// Counts one case of `rule` at `time` (the model's clock) for the notification answered
    /// with apns-id `id` (its text; `nil`: not known), keeping it as an example while there is room.
    @inline(__always)
    mutating func record(_ rule: ProviderRule, id: UnsafeRawBufferPointer?, at time: UInt64, _ detail: () -> String) {
        let slot = Self.slot(rule)
        counts[slot] += 1
        guard counts[slot] <= ProviderCard.examplesPerRule else { return }
        keep(rule, id: id.map { String(decoding: $0, as: UTF8.self) }, at: time, detail())
    }

    /// Whether the next case of `rule` is kept as an example.
    func keepsExample(_ rule: ProviderRule) -> Bool { counts[Self.slot(rule)] < ProviderCard.examplesPerRule }

    /// Counts one case of `rule` whose apns-id is already text (read back from the history).
    mutating func record(_ rule: ProviderRule, idText: String?, at time: UInt64, _ detail: () -> String) {
        let slot = Self.slot(rule)
        counts[slot] += 1
        guard counts[slot] <= ProviderCard.examplesPerRule else { return }
        keep(rule, id: idText, at: time, detail())
    }

    @inline(never)
    private mutating func keep(_ rule: ProviderRule, id: String?, at time: UInt64, _ detail: String) {
        examples.append(.init(token: "", connection: 0, at: time, detail: detail, apnsID: id))
        exampleRules.append(rule)
    }

    /// `nanoseconds` in seconds, as an example's detail says it: `42.0 s`.
    static func seconds(_ nanoseconds: UInt64) -> String {
        String(format: "%.1f s", Double(nanoseconds) / 1e9)
    }
}

/// The fleet's findings over every shard, by rule.
package struct FleetFindingsSnapshot: Sendable {
    /// Each of `FleetFindings.rules`' count.
    package var counts: [ProviderRule: Int] = [:]
    /// The first examples of each rule, earliest first (`ProviderCard.examplesPerRule` at most).
    package var examples: [ProviderRule: [ProviderCard.Example]] = [:]

    package init() {}

    /// Adds one shard's findings.
    mutating func add(_ findings: FleetFindings) {
        for rule in FleetFindings.rules { counts[rule, default: 0] += findings.count(rule) }
        for (rule, example) in zip(findings.exampleRules, findings.examples) {
            examples[rule, default: []].append(example)
        }
    }

    /// Keeps the earliest examples of each rule.
    mutating func trim() {
        for (rule, list) in examples {
            examples[rule] = Array(list.sorted { $0.at < $1.at }.prefix(ProviderCard.examplesPerRule))
        }
    }
}
