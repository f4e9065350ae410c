import Testing

@testable import FanoutHTTP2

/// `HTTP2StreamIndex` against a `Dictionary` doing the same operations: whatever the order of
/// opens and closes, every lookup agrees, and nothing is left behind.
@Suite struct StreamIndexTests {
    /// A deterministic generator (SplitMix64), so a failure repeats.
    struct SplitMix64: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE5_E9B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static func expectAgrees(
        _ index: borrowing HTTP2StreamIndex,
        _ model: [UInt32: Int],
        probing ids: some Sequence<UInt32>
    ) {
        let count = index.count
        #expect(count == model.count)
        for id in ids {
            let slot = index.slot(of: id)
            #expect(slot == model[id], "stream \(id)")
        }
        let slots = index.slots
        #expect(slots.sorted() == model.values.sorted())
    }

    /// A client's streams (odd, increasing), closed in random order with up to `inFlight` open:
    /// the pattern of a connection, including long-held streams whose newer neighbours wrap the
    /// table around and collide with them.
    @Test(arguments: [1, 7, 100, 1000])
    func streamsOpenedInOrderAndClosedInAnyOrder(inFlight: Int) {
        var random = SplitMix64(state: UInt64(inFlight))
        var index = HTTP2StreamIndex(capacity: 16)
        var model: [UInt32: Int] = [:]
        var open: [UInt32] = []
        var next: UInt32 = 1
        for step in 0..<20_000 {
            if open.count < inFlight && (open.isEmpty || random.next() % 3 != 0) {
                let slot = step % 4096
                index.insert(next, slot: slot)
                model[next] = slot
                open.append(next)
                next += 2
            } else {
                // Mostly the oldest, sometimes any: some streams are held far longer than others.
                let position = random.next() % 4 == 0 ? Int(random.next() % UInt64(open.count)) : 0
                let id = open.remove(at: position)
                index.remove(id)
                model[id] = nil
            }
            if step % 997 == 0 {
                Self.expectAgrees(
                    index,
                    model,
                    probing: stride(from: next > 4000 ? next - 4000 : 1, through: next + 8, by: 1)
                )
            }
        }
        Self.expectAgrees(index, model, probing: stride(from: 1, through: next + 8, by: 1))
        for id in open { index.remove(id) }
        let (count, slots) = (index.count, index.slots)
        #expect(count == 0)
        #expect(slots.isEmpty)
    }

    /// Ids that all share one home bucket (they differ by multiples of twice the size) make one
    /// long run; removing from its middle and front keeps the rest reachable.
    @Test func idsThatCollideStayReachableAfterRemovals() {
        var index = HTTP2StreamIndex(capacity: 8)  // 16 buckets: ids 1, 33, 65, … share bucket 0
        var model: [UInt32: Int] = [:]
        let ids = (0..<7).map { UInt32(1 + 32 * $0) }
        for (slot, id) in ids.enumerated() {
            index.insert(id, slot: slot)
            model[id] = slot
        }
        // A neighbour whose home is inside the run, placed after it.
        index.insert(3, slot: 100)
        model[3] = 100
        for id in [ids[3], ids[0], 3, ids[6]] {
            index.remove(id)
            model[id] = nil
            Self.expectAgrees(index, model, probing: ids + [3, 5, 7])
        }
    }

    /// Random ids (any value but 0), random operations: the index is the dictionary.
    @Test func randomOperationsAgreeWithADictionary() {
        var random = SplitMix64(state: 42)
        var index = HTTP2StreamIndex(capacity: 8)
        var model: [UInt32: Int] = [:]
        var probes: [UInt32] = []
        for step in 0..<50_000 {
            // Mostly a small set, so that ids come back; sometimes anything but 0.
            let small = UInt32(random.next() % 1024) + 1
            let id = random.next() % 8 == 0 ? max(1, UInt32(truncatingIfNeeded: random.next())) : small
            probes.append(id)
            if model[id] == nil, random.next() % 2 == 0 {
                index.insert(id, slot: step)
                model[id] = step
            } else {
                index.remove(id)
                model[id] = nil
            }
            let slot = index.slot(of: id)
            #expect(slot == model[id])
        }
        Self.expectAgrees(index, model, probing: probes)
    }

    @Test func streamZeroIsNeverFoundAndRemovingWhatIsAbsentChangesNothing() {
        var index = HTTP2StreamIndex(capacity: 4)
        let before = index.slot(of: 0)
        index.insert(1, slot: 0)
        let after = index.slot(of: 0)
        index.remove(0)
        index.remove(3)
        let (count, slot) = (index.count, index.slot(of: 1))
        #expect(before == nil)
        #expect(after == nil)
        #expect(count == 1)
        #expect(slot == 0)
    }

    /// Started small, it doubles as streams are added and loses none on the way.
    @Test func itGrowsWithoutLosingAStream() {
        var index = HTTP2StreamIndex(capacity: 8)
        for id in stride(from: UInt32(1), through: 1999, by: 2) { index.insert(id, slot: Int(id)) }
        let count = index.count
        #expect(count == 1000)
        for id in stride(from: UInt32(1), through: 1999, by: 2) {
            let slot = index.slot(of: id)
            #expect(slot == Int(id))
        }
    }
}
