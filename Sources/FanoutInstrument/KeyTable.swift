import Atomics

/// A fixed-size table of 64-bit keys, each with a 24-bit value, shared by every event loop
/// without a lock: what the provider card remembers of tokens and apns-ids in memory that does
/// not grow with the fan-out (50 million tokens or 5,000).
///
/// ```
///   slot (one UInt64, 0 = empty)   ┌──────── tag: key >> 24, never 0 ────────┬── value (24 bits) ──┐
///                                  63                                        24 23                  0
///   a key probes `probes` slots from `key & mask`; a lookup stops at its tag or an empty slot
/// ```
///
/// Two keys share a slot only when their top 40 bits match (one in 2^40). When every slot a key
/// may use is taken, `insert` says so (`.full`) and `replace` overwrites the first: a table
/// that remembers what it can and counts what it could not, never one that grows.
@usableFromInline
final class KeyTable: @unchecked Sendable {
    @usableFromInline
    enum Insertion: Equatable {
        case added
        case updated
        case full
    }

    /// Slots a key may use, from its home slot on.
    @usableFromInline
    static let probes = 16

    @usableFromInline
    let slots: UnsafeMutablePointer<UnsafeAtomic<UInt64>.Storage>
    @usableFromInline
    let mask: Int
    @usableFromInline
    let used = ManagedAtomic(0)

    /// A table of `2^log2Capacity` slots (8 bytes each).
    init(log2Capacity: Int) {
        let capacity = 1 << log2Capacity
        mask = capacity - 1
        slots = .allocate(capacity: capacity)
        slots.initialize(repeating: UnsafeAtomic<UInt64>.Storage(0), count: capacity)
    }

    deinit {
        slots.deallocate()
    }

    /// Keys held.
    @inlinable
    var count: Int { used.load(ordering: .relaxed) }
    var capacity: Int { mask + 1 }

    @inlinable
    static func tag(_ key: UInt64) -> UInt64 { max(1, key >> 24) }

    @inlinable
    func slot(_ index: Int) -> UnsafeAtomic<UInt64> {
        UnsafeAtomic(at: slots + (index & mask))
    }

    /// The value stored with `key`, if it is held (asked per request: inlinable).
    @inlinable
    func value(of key: UInt64) -> UInt32? {
        let tag = Self.tag(key)
        for probe in 0..<Self.probes {
            let entry = slot(Int(truncatingIfNeeded: key) &+ probe).load(ordering: .relaxed)
            if entry == 0 { return nil }
            if entry >> 24 == tag { return UInt32(truncatingIfNeeded: entry & 0xFF_FFFF) }
        }
        return nil
    }

    /// Holds `key` with `value` (its low 24 bits), or gives its held key the new value.
    @usableFromInline
    @discardableResult
    func insert(_ key: UInt64, value: UInt32) -> Insertion {
        let tag = Self.tag(key)
        let entry = tag << 24 | UInt64(value & 0xFF_FFFF)
        for probe in 0..<Self.probes {
            let slot = slot(Int(truncatingIfNeeded: key) &+ probe)
            var current = slot.load(ordering: .relaxed)
            while true {
                if current == 0 {
                    let (exchanged, found) = slot.compareExchange(expected: 0, desired: entry, ordering: .relaxed)
                    if exchanged {
                        used.wrappingIncrement(ordering: .relaxed)
                        return .added
                    }
                    current = found
                    continue
                }
                if current >> 24 == tag {
                    slot.store(entry, ordering: .relaxed)
                    return .updated
                }
                break
            }
        }
        return .full
    }

    /// `insert`, overwriting the key's home slot when every slot it may use is taken.
    @usableFromInline
    func replace(_ key: UInt64, value: UInt32) {
        guard insert(key, value: value) == .full else { return }
        slot(Int(truncatingIfNeeded: key)).store(Self.tag(key) << 24 | UInt64(value & 0xFF_FFFF), ordering: .relaxed)
    }
}
