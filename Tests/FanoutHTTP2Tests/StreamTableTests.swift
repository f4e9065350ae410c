import NIOCore
import Testing

@testable import FanoutHTTP2

/// `HTTP2StreamTable` against a `Dictionary` of what each open stream should hold: through
/// growth (the slots move to a larger allocation) and reuse (the free list, and the slot held
/// back after each close), every open stream keeps its own state and buffers.
@Suite struct StreamTableTests {
    /// Marks stream `id`'s slot so that a slot mixed up with another shows.
    static func mark(_ table: inout HTTP2StreamTable, _ slot: Int, _ id: UInt32) {
        table[slot].status = Int(id)
        withUnsafeBytes(of: id) { table[slot].headers.append($0) }
        withUnsafeBytes(of: UInt64(id) * 3) { table[slot].body.append($0) }
    }

    static func expectHolds(_ table: borrowing HTTP2StreamTable, _ model: [UInt32: Int]) {
        let count = table.count
        #expect(count == model.count)
        for (id, slot) in model {
            let (found, stream) = (table.slot(of: id), table[slot])
            #expect(found == slot, "stream \(id)")
            #expect(stream.id == id)
            #expect(stream.status == Int(id))
            #expect(stream.headers.count == 4 && stream.headers.bytes.loadUnaligned(as: UInt32.self) == id)
            #expect(stream.body.count == 8 && stream.body.bytes.loadUnaligned(as: UInt64.self) == UInt64(id) * 3)
        }
        let open = table.openSlots
        #expect(open.sorted() == model.values.sorted())
    }

    /// Made for 2 streams, it grows to 1000 open at once, closes them in a shuffled order and
    /// opens as many again: no two open streams share a slot, each keeps what it was given,
    /// and the table never has more slots than streams were open at once, plus the held-back one.
    @Test func slotsSurviveGrowthAndAreReusedOneAtATime() {
        var random = StreamIndexTests.SplitMix64(state: 42)
        var table = HTTP2StreamTable(expectedStreams: 2)
        var model: [UInt32: Int] = [:]
        var next: UInt32 = 1
        var slotsSeen = Set<Int>()
        for _ in 0..<1000 {
            let slot = table.open(id: next, tag: UInt64(next), sendWindow: 10, receiveWindow: 20)
            #expect(model.values.contains(slot) == false)
            Self.mark(&table, slot, next)
            model[next] = slot
            slotsSeen.insert(slot)
            next += 2
        }
        Self.expectHolds(table, model)
        var ids = Array(model.keys)
        ids.shuffle(using: &random)
        for (closed, id) in ids.enumerated() {
            table.close(slot: model.removeValue(forKey: id)!)
            if closed % 97 == 0 { Self.expectHolds(table, model) }
        }
        Self.expectHolds(table, model)
        for _ in 0..<1000 {
            let slot = table.open(id: next, tag: UInt64(next), sendWindow: 10, receiveWindow: 20)
            let stream = table[slot]
            // A reused slot starts clean.
            #expect(stream.headers.count == 0 && stream.body.count == 0)
            #expect(stream.localOpen && stream.remoteOpen && !stream.headersReceived)
            Self.mark(&table, slot, next)
            model[next] = slot
            slotsSeen.insert(slot)
            next += 2
        }
        Self.expectHolds(table, model)
        #expect(slotsSeen.count == 1001)
    }

    /// The slot closed last is not handed out by the next open (its header buffer may still be
    /// shared with the message the stream ended with), only after the close that follows.
    @Test func theSlotClosedLastIsHeldBackForOneClose() {
        var table = HTTP2StreamTable(expectedStreams: 4)
        let first = table.open(id: 1, tag: 0, sendWindow: 0, receiveWindow: 0)
        let second = table.open(id: 3, tag: 0, sendWindow: 0, receiveWindow: 0)
        table.close(slot: first)
        let third = table.open(id: 5, tag: 0, sendWindow: 0, receiveWindow: 0)
        #expect(third != first && third != second)
        table.close(slot: second)
        let fourth = table.open(id: 7, tag: 0, sendWindow: 0, receiveWindow: 0)
        #expect(fourth == first)
    }
}
