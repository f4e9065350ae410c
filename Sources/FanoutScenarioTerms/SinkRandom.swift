import FanoutRandom
import Foundation

/// The sink's draws: uniform and normal, from a `SeededRandom`. Drawn per request (errors,
/// latencies), so its methods are inlinable into the sink, the fleet and the channels.
@usableFromInline
package struct SinkRandom: Sendable {
    @usableFromInline
    var generator: SeededRandom

    @inlinable
    package init(seed: UInt64) {
        generator = SeededRandom(seed: seed)
    }

    @inlinable
    package mutating func next() -> UInt64 { generator.next() }

    /// A uniform draw from [0, 1).
    @inlinable
    package mutating func unit() -> Double { generator.unit() }

    /// A standard normal draw (Box–Muller).
    @inlinable
    package mutating func normal() -> Double {
        let u = max(unit(), 0x1p-53)
        return (-2 * Foundation.log(u)).squareRoot() * Foundation.cos(2 * Double.pi * unit())
    }
}
