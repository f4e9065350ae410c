import FanoutTestSupport
import Foundation
import Testing

@testable import FanoutTokens

/// The queue between the token reader and the connections: a full or empty side parks until
/// the other side changes the queue, and is woken by it, never by the park's bound.
struct BatchQueueTests {
    /// Two threads pass one batch to and fro through two queues, 500 times, each stopping
    /// 200 µs now and then so that the other parks and must be woken: a missed wakeup leaves
    /// both parked until the bound, which counts it.
    @Test func parkedSidesAreWokenByTheOtherSideNotByTheirBound() {
        // A bound no wait here comes near, however loaded the machine: only a missed wakeup
        // runs a park to it.
        let ready = BatchQueue(capacity: 2, parkBound: .seconds(20))
        let free = BatchQueue(capacity: 2, parkBound: .seconds(20))
        // One batch in play: while it is on one side, the other waits for it.
        #expect(free.tryPush(TokenBatch(byteCapacity: 64, tokenCapacity: 1)))
        let rounds = 500
        let done = DispatchSemaphore(value: 0)
        let consumer = Thread {
            defer { done.signal() }
            for round in 0..<rounds {
                guard let batch = ready.pop() else { return }
                // Pauses that make each side wait for the other now and then: the parking under test.
                if round % 5 == 0 { usleep(200) }
                _ = free.push(batch)
            }
        }
        consumer.start()
        var moved = 0
        for round in 0..<rounds {
            guard let batch = free.pop() else { break }
            if round % 5 == 2 { usleep(200) }
            #expect(ready.push(batch))
            moved += 1
        }
        #expect(done.wait(timeout: .now() + 60) == .success)
        #expect(moved == rounds)
        #expect(free.tryPop() != nil && ready.tryPop() == nil)
        #expect(ready.parks > 0 && free.parks > 0, "parks: ready \(ready.parks), free \(free.parks)")
        #expect(
            ready.timedOutParks == 0 && free.timedOutParks == 0,
            "timed out: ready \(ready.timedOutParks), free \(free.timedOutParks)"
        )
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
