import Atomics
import FanoutRandom
import NIOConcurrencyHelpers

/// A bounded sample of the ids APNs answered a run with: the `apns-unique-id` (APNs'
/// development environment sends one with every answer, the id its Push Notifications Console
/// looks a notification up by; a Fanout sink sends one to a timed request) and the answer's
/// `apns-id` beside it (a Fanout sink's `/deliveries/ID` looks a notification up by that one).
///
/// Cheap on the hot path: a connection looks at one answer in `every` (a countdown, as the read
/// delay's sampling), and of those the sample keeps a uniform `capacity` (Algorithm R: the first
/// `capacity`, then the n-th replaces a random slot with probability capacity ÷ n, drawn from a
/// hash of n). Its memory, `capacity` × 72 bytes, is allocated once; keeping an id copies its
/// bytes under a lock, about capacity × (1 + ln(n ÷ capacity)) times in a run of n looked at.
public final class AnswerIDSample: Sendable {
    /// Answers kept at most.
    public static let capacity = 1000
    /// A connection looks at one answer in this many.
    public static let every = 16
    /// An id's text: `8-4-4-4-12` hex digits.
    static let idLength = 36

    /// Answers looked at that carried an `apns-unique-id`.
    private let offered = ManagedAtomic(0)
    /// `capacity` slots of two ids' text (apns-id, then apns-unique-id; zeros: none).
    private let slots = NIOLockedValueBox([UInt8](repeating: 0, count: capacity * 2 * idLength))

    public init() {}

    /// One answer's ids: its `apns-unique-id` and its `apns-id` (`nil`: none, or not 36 bytes).
    func offer(uniqueID: UnsafeRawBufferPointer, apnsID: UnsafeRawBufferPointer?) {
        guard uniqueID.count == Self.idLength else { return }
        let n = offered.loadThenWrappingIncrement(ordering: .relaxed)
        var slot = n
        if n >= Self.capacity {
            let draw = Int(truncatingIfNeeded: SeededRandom.mix(UInt64(n) ^ 0xA5A5_5A5A_C3C3_3C3C) >> 1) % (n + 1)
            guard draw < Self.capacity else { return }
            slot = draw
        }
        slots.withLockedValue { bytes in
            bytes.withUnsafeMutableBytes { all in
                let start = slot * 2 * Self.idLength
                let apnsPart = UnsafeMutableRawBufferPointer(rebasing: all[start..<start + Self.idLength])
                if let apnsID, apnsID.count == Self.idLength {
                    apnsPart.copyMemory(from: apnsID)
                } else {
                    apnsPart.initializeMemory(as: UInt8.self, repeating: 0)
                }
                UnsafeMutableRawBufferPointer(rebasing: all[start + Self.idLength..<start + 2 * Self.idLength])
                    .copyMemory(from: uniqueID)
            }
        }
    }

    /// Answers looked at that carried an `apns-unique-id` (the sample holds up to `capacity` of them).
    public var answersSeen: Int { offered.load(ordering: .relaxed) }

    /// The ids kept: `(apnsID, uniqueID)`, in their slots' order.
    public var ids: [(apnsID: String?, uniqueID: String)] {
        let count = min(answersSeen, Self.capacity)
        return slots.withLockedValue { bytes in
            (0..<count).map { slot in
                let start = slot * 2 * Self.idLength
                let apnsID = bytes[start..<start + Self.idLength]
                let uniqueID = bytes[start + Self.idLength..<start + 2 * Self.idLength]
                return (
                    apnsID.allSatisfy { $0 == 0 } ? nil : String(decoding: apnsID, as: UTF8.self),
                    String(decoding: uniqueID, as: UTF8.self)
                )
            }
        }
    }
}
