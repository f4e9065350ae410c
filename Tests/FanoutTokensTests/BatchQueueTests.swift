import FanoutTestSupport
import Foundation
import Testing

@testable import FanoutTokens

/// The queue between the token reader and the connections: a full or empty side parks until
/// the other side changes the queue, and is woken by it, never by the park's bound.
struct BatchQueueTests {
    /// Two threads pass one batch to and fro through two queues, 500 times; every fifth round
    /// each side holds the batch until the other has parked waiting for it (its `parks` count
    /// rises), so that the push must wake it: a missed wakeup leaves both parked until the
    /// bound, which counts it. (Pauses of 200 µs stood in for that wait and, on a loaded
    /// machine, sometimes let a whole run go by with no park at all.)
    @Test func parkedSidesAreWokenByTheOtherSideNotByTheirBound() {
        // A bound no wait here comes near, however loaded the machine: only a missed wakeup
        // runs a park to it.
        let ready = BatchQueue(capacity: 2, parkBound: .seconds(20))
        let free = BatchQueue(capacity: 2, parkBound: .seconds(20))
        // One batch in play: while it is on one side, the other waits for it.
        #expect(free.tryPush(TokenBatch(byteCapacity: 64, tokenCapacity: 1)))
        let rounds = 500
        let done = DispatchSemaphore(value: 0)
        let consumerParksSeen = LockedTally()
        // Read before the producer can park on `free` at all (the thread may start late).
        let firstFreeParks = free.parks
        let consumer = Thread {
            defer { done.signal() }
            // The other side's parks as they stood before it could get the batch again: read
            // before each hand-over, so a park it makes before this side looks is not missed.
            var freeParks = firstFreeParks
            for round in 0..<rounds {
                guard let batch = ready.pop() else { return }
                if round % 5 == 0, Self.untilParked(free, after: freeParks) { consumerParksSeen.add() }
                freeParks = free.parks
                _ = free.push(batch)
            }
        }
        consumer.start()
        var moved = 0
        var producerParksSeen = 0
        var readyParks = ready.parks
        for round in 0..<rounds {
            guard let batch = free.pop() else { break }
            if round % 5 == 2, Self.untilParked(ready, after: readyParks) { producerParksSeen += 1 }
            readyParks = ready.parks
            #expect(ready.push(batch))
            moved += 1
        }
        #expect(done.wait(timeout: .now() + 60) == .success)
        #expect(moved == rounds)
        #expect(free.tryPop() != nil && ready.tryPop() == nil)
        // Every held round saw the other side park: 100 each way.
        #expect(producerParksSeen == rounds / 5 && consumerParksSeen.value == rounds / 5)
        #expect(
            ready.parks >= rounds / 5 && free.parks >= rounds / 5,
            "parks: ready \(ready.parks), free \(free.parks)"
        )
        #expect(
            ready.timedOutParks == 0 && free.timedOutParks == 0,
            "timed out: ready \(ready.timedOutParks), free \(free.timedOutParks)"
        )
    }

    /// Waits (bounded) until `queue` has one more park than `before`: its other side is
    /// parked, or about to, waiting for the batch this side holds.
    static func untilParked(_ queue: BatchQueue, after before: Int) -> Bool {
        poll(timeout: .seconds(10), every: .microseconds(50)) { queue.parks > before }
    }

    /// Closing wakes a parked waiter: a pop of an empty queue ends with `nil`.
    @Test func closingEndsAParkedPop() {
        let queue = BatchQueue(capacity: 2, parkBound: .seconds(20))
        let done = DispatchSemaphore(value: 0)
        let popper = Thread {
            #expect(queue.pop() == nil)
            done.signal()
        }
        popper.start()
        // Closed once the pop has parked (or after 10 s, when the test fails below).
        poll(timeout: .seconds(10), every: .milliseconds(1)) { queue.parks > 0 }
        #expect(queue.parks == 1)
        queue.close()
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(queue.timedOutParks == 0)
    }
}

/// A count two threads share.
private final class LockedTally: @unchecked Sendable {
    // Unchecked: `count` is read and written under `lock` only.
    private let lock = NSLock()
    private var count = 0

    func add() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
