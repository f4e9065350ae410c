import FanoutRandom
import Testing

@testable import FanoutDevices

/// The fleet's fixed-size store: a table with backward-shift deletion and a heap that follows
/// its moves, checked against a dictionary under random operations.
@Suite struct DeviceStoreTests {
    @Test func matchesADictionaryUnderRandomOperations() throws {
        var store = DeviceStore(capacity: 64)
        var expected: [UInt64: UInt64] = [:]  // token → next event
        var random = SeededRandom(seed: 51)
        for step in 0..<20_000 {
            // Few distinct tokens, many colliding runs: keys share low bits often.
            let token = random.next() % 200 &* 0x1_0000_0000
            if random.next() % 3 != 0 {
                let time = random.next() % 1_000_000
                if let slot = store.findOrInsert(token) {
                    store.store(
                        in: slot,
                        arrivedAt: 0,
                        dueAt: time,
                        expiresAt: time + 5,
                        collapse: 0,
                        history: 0,
                        flags: 0
                    )
                    expected[token] = time
                } else {
                    #expect(expected[token] == nil && expected.count == 64, "refused at step \(step)")
                }
            } else if let slot = store.find(token) {
                store.unstore(slot)
                expected[token] = nil
            } else {
                #expect(expected[token] == nil, "lost \(token) at step \(step)")
            }
            #expect(store.count == expected.count && store.heapCount == expected.count)
            if let earliest = store.earliest {
                #expect(earliest.time == expected.values.min())
                #expect(store[earliest.slot].nextEvent == earliest.time)
            }
        }
        for (token, time) in expected {
            let found = store.find(token)
            let slot = try #require(found)
            #expect(store[slot].dueAt == time)
        }
        // Drained in the order of their events.
        var last: UInt64 = 0
        while let (slot, time) = store.earliest {
            #expect(time >= last)
            last = time
            store.unstore(slot)
        }
        #expect(store.count == 0)
    }

    /// An unregistered token stays kept after its notification goes; a full store refuses.
    @Test func keepsUnregisteredTokensAndRefusesWhenFull() throws {
        var store = DeviceStore(capacity: 2)
        let inserted = store.findOrInsert(1)
        let first = try #require(inserted)
        store.markUnregistered(first, since: 100)
        store.store(in: first, arrivedAt: 1, dueAt: 2, expiresAt: 3, collapse: 0, history: 0, flags: 0)
        store.unstore(first)
        let found = store.find(1)
        let kept = try #require(found)
        #expect(store[kept].unregisteredSince == 100 && !store[kept].isStored)
        let second = store.findOrInsert(2)
        let third = store.findOrInsert(3)
        #expect(second != nil && third == nil)
        #expect(store.count == 2)
        // docs/sink.md ("Memory and threads") says 64 and 132 bytes.
        #expect(MemoryLayout<DeviceStoreEntry>.stride == 64 && DeviceStore.bytesPerDevice == 132)
    }

    /// A budget window keeps a device in the heap without a stored notification; a stored one
    /// taken out leaves it there until the window ends.
    @Test func budgetWindowsAreScheduled() throws {
        var store = DeviceStore(capacity: 4)
        let inserted = store.findOrInsert(5)
        let slot = try #require(inserted)
        store.setBudget(slot, until: 500, used: 1)
        #expect(store.earliest?.time == 500 && store.heapCount == 1)
        store.store(in: slot, arrivedAt: 1, dueAt: 100, expiresAt: 900, collapse: 0, history: 0, flags: 0)
        #expect(store.earliest?.time == 100)
        store.unstore(slot)
        #expect(store.earliest?.time == 500 && store.count == 1)
        store.endBudget(slot)
        #expect(store.earliest == nil && store.count == 0)
    }
}
