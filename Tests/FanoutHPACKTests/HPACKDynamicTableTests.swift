import FanoutRandom
import FanoutTestSupport
import Testing

@testable import FanoutHPACK

/// The byte-ring dynamic table against a plain array model of RFC 7541 §4, over long random
/// sequences of inserts and resizes that force wrapping, compaction and eviction.
@Suite struct HPACKDynamicTableTests {
    /// RFC 7541 §4 as plainly as it can be written.
    struct Model {
        var entries: [([UInt8], [UInt8])] = []  // newest first
        var maximumSize: Int
        var size: Int { entries.reduce(0) { $0 + $1.0.count + $1.1.count + 32 } }

        mutating func insert(_ name: [UInt8], _ value: [UInt8]) {
            let entrySize = name.count + value.count + 32
            while !entries.isEmpty && size + entrySize > maximumSize { entries.removeLast() }
            if entrySize <= maximumSize { entries.insert((name, value), at: 0) }
        }

        mutating func resize(_ newSize: Int) {
            maximumSize = newSize
            while size > maximumSize { entries.removeLast() }
        }
    }

    static func check(_ table: HPACKDynamicTable, _ model: Model) {
        #expect(table.count == model.entries.count)
        #expect(table.size == model.size)
        for (index, expected) in model.entries.enumerated() where index < table.count {
            let entry = table[index]
            #expect(Array(entry.name) == expected.0)
            #expect(Array(entry.value) == expected.1)
        }
    }

    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8])
    func matchesTheModel(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        var table = HPACKDynamicTable(maximumSize: 4096)
        var model = Model(maximumSize: 4096)
        for step in 0..<3000 {
            if random.next() % 97 == 0 {
                let size = [0, 64, 256, 1000, 4096, 8192][Int(random.next() % 6)]
                table.resize(to: size)
                model.resize(size)
            } else {
                // Lengths from empty to over a quarter of the table, biased to the small ones.
                let limit = random.next() % 8 == 0 ? 1200 : 60
                let name = (0..<Int(random.next() % UInt64(limit))).map { _ in UInt8(truncatingIfNeeded: random.next())
                }
                let value = (0..<Int(random.next() % UInt64(limit))).map { _ in UInt8(truncatingIfNeeded: step) }
                name.withUnsafeBytes { name in value.withUnsafeBytes { value in table.insert(name: name, value: value) }
                }
                model.insert(name, value)
            }
            Self.check(table, model)
        }
    }

    @Test func copiesDoNotShareEntries() {
        var table = HPACKDynamicTable(maximumSize: 256)
        let one: [UInt8] = Array("one".utf8)
        one.withUnsafeBytes { table.insert(name: $0, value: $0) }
        let copy = table
        let two: [UInt8] = Array("two".utf8)
        two.withUnsafeBytes { table.insert(name: $0, value: $0) }
        #expect(copy.count == 1)
        #expect(table.count == 2)
        #expect(Array(copy[0].name) == one)
    }

    @Test func anEntryLargerThanTheTableEmptiesIt() {
        var table = HPACKDynamicTable(maximumSize: 100)
        let small: [UInt8] = Array("a".utf8)
        small.withUnsafeBytes { table.insert(name: $0, value: $0) }
        let large = [UInt8](repeating: 0x61, count: 80)
        large.withUnsafeBytes { table.insert(name: $0, value: $0) }
        #expect(table.count == 0)
        #expect(table.size == 0)
    }
}
