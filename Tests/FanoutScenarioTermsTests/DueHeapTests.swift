import FanoutRandom
import Testing

@testable import FanoutScenarioTerms

/// The heap both sinks hold their answers in, and the fleet its return events: against a sorted
/// list, over random pushes, pops at random times and removals.
@Suite struct DueHeapTests {
    struct Entry: DueEntry, Equatable {
        var due: UInt64
        var number: Int
    }

    @Test(arguments: [1, 2, 7, 1_000])
    func itGivesWhatIsDueEarliestFirst(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        var heap = DueHeap<Entry>()
        var reference: [Entry] = []
        var number = 0
        for round in 0..<2_000 {
            switch random.next() % 4 {
            case 0, 1:
                // Due times with ties, pushed in any order.
                let entry = Entry(due: random.next() % 500, number: number)
                number += 1
                heap.push(entry)
                reference.append(entry)
            case 2:
                let now = random.next() % 500
                var popped: [Entry] = []
                while let entry = heap.popDue(now: now) { popped.append(entry) }
                let due = reference.filter { $0.due <= now }
                reference.removeAll { $0.due <= now }
                // Earliest first, and the very entries pushed, none lost or made twice.
                #expect(popped.map(\.due) == due.map(\.due).sorted(), "round \(round)")
                #expect(popped.map(\.number).sorted() == due.map(\.number).sorted(), "round \(round)")
            default:
                let odd = random.next() % 2 == 0
                heap.removeAll { ($0.number % 2 == 1) == odd }
                reference.removeAll { ($0.number % 2 == 1) == odd }
            }
            #expect(heap.count == reference.count && heap.earliest == reference.map(\.due).min())
        }
    }
}
