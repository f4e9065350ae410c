import Atomics
import Dispatch

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A bounded, lock-free queue of token batches: Dmitry Vyukov's bounded MPMC ring, on
/// swift-atomics.
///
/// ```
///  cells:     [ seq | batch ] [ seq | batch ] … (capacity, a power of two)
///  push at p: cell p & mask is free when seq == p     → store batch, seq = p + 1 (release)
///  pop at p:  cell p & mask is full when seq == p + 1 → take batch,  seq = p + capacity
/// ```
/// `tryPush`/`tryPop` never block. `push`/`pop` wait for room or a batch: they yield the core
/// a few times, then park on a semaphore until the other side wakes them, so an empty or full
/// queue costs nothing while it waits (the reader of a token file far ahead of a paced run
/// sleeps until a batch comes back). A parked waiter says so before its last look, and a
/// push or pop looks for parked waiters after its own change, each behind a full fence: one of
/// the two always sees the other, so no wakeup is missed; the park still ends after
/// `parkBound`, so no wait is unbounded. A closed queue refuses pushes and, once drained, ends
/// pops.
final class BatchQueue: @unchecked Sendable {
    // Unchecked: `elements` is plain memory, but each cell is written only by the thread that
    // won it through `enqueuePosition` and read only by the one that won it through
    // `dequeuePosition`; the cell's sequence number (release/acquire) publishes it.

    private let mask: Int
    private let sequences: UnsafeMutablePointer<UnsafeAtomic<Int>.Storage>
    private let elements: UnsafeMutablePointer<Unmanaged<TokenBatch>?>
    private let enqueuePosition = ManagedAtomic<Int>(0)
    private let dequeuePosition = ManagedAtomic<Int>(0)
    private let closed = ManagedAtomic<Bool>(false)
    private let sleepers = ManagedAtomic<Int>(0)
    private let wakeup = DispatchSemaphore(value: 0)
    private let parksTimedOut = ManagedAtomic<Int>(0)
    private let parksTotal = ManagedAtomic<Int>(0)

    /// The longest a parked waiter sleeps before looking again: a bound, not a poll (it is
    /// woken when the queue changes).
    private let parkBound: DispatchTimeInterval

    /// Creates a queue holding at most `capacity` batches (rounded up to a power of two).
    init(capacity: Int, parkBound: DispatchTimeInterval = .seconds(1)) {
        self.parkBound = parkBound
        let size = max(2, 1 << (Int.bitWidth - (max(capacity, 2) - 1).leadingZeroBitCount))
        mask = size - 1
        sequences = .allocate(capacity: size)
        elements = .allocate(capacity: size)
        for index in 0..<size {
            (sequences + index).initialize(to: UnsafeAtomic<Int>.Storage(index))
            (elements + index).initialize(to: nil)
        }
    }

    deinit {
        for index in 0...mask {
            elements[index]?.release()
            _ = (sequences + index).move().dispose()
        }
        sequences.deallocate()
        elements.deallocate()
    }

    /// The most batches it holds.
    var capacity: Int { mask + 1 }

    private func sequence(_ cell: Int) -> UnsafeAtomic<Int> {
        UnsafeAtomic(at: sequences + cell)
    }

    /// Adds `batch` if there is room; never blocks.
    func tryPush(_ batch: TokenBatch) -> Bool {
        var position = enqueuePosition.load(ordering: .relaxed)
        while true {
            let cell = position & mask
            let difference = sequence(cell).load(ordering: .acquiring) &- position
            if difference == 0 {
                let (exchanged, current) = enqueuePosition.weakCompareExchange(
                    expected: position,
                    desired: position &+ 1,
                    ordering: .relaxed
                )
                if exchanged {
                    elements[cell] = Unmanaged.passRetained(batch)
                    sequence(cell).store(position &+ 1, ordering: .releasing)
                    wakeSleepers()
                    return true
                }
                position = current
            } else if difference < 0 {
                return false
            } else {
                position = enqueuePosition.load(ordering: .relaxed)
            }
        }
    }

    /// Takes the oldest batch if there is one; never blocks.
    func tryPop() -> TokenBatch? {
        var position = dequeuePosition.load(ordering: .relaxed)
        while true {
            let cell = position & mask
            let difference = sequence(cell).load(ordering: .acquiring) &- (position &+ 1)
            if difference == 0 {
                let (exchanged, current) = dequeuePosition.weakCompareExchange(
                    expected: position,
                    desired: position &+ 1,
                    ordering: .relaxed
                )
                if exchanged {
                    let batch = elements[cell]!.takeRetainedValue()
                    elements[cell] = nil
                    sequence(cell).store(position &+ mask &+ 1, ordering: .releasing)
                    wakeSleepers()
                    return batch
                }
                position = current
            } else if difference < 0 {
                return nil
            } else {
                position = dequeuePosition.load(ordering: .relaxed)
            }
        }
    }

    /// Adds `batch`, waiting for room; `false` when the queue is closed.
    func push(_ batch: TokenBatch) -> Bool {
        var pushed = false
        wait {
            pushed = self.tryPush(batch)
            return pushed
        }
        return pushed
    }

    /// Takes a batch, waiting for one; `nil` once the queue is closed and empty.
    func pop() -> TokenBatch? {
        var batch: TokenBatch?
        wait {
            batch = self.tryPop()
            return batch != nil
        }
        return batch ?? tryPop()
    }

    /// Refuses further pushes and wakes every waiter; pops drain what is left.
    func close() {
        closed.store(true, ordering: .sequentiallyConsistent)
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        for _ in 0..<max(1, sleepers.load(ordering: .sequentiallyConsistent)) { wakeup.signal() }
    }

    var isClosed: Bool { closed.load(ordering: .acquiring) }

    /// Parks that ended at `parkBound` rather than woken: a wakeup missed, or a wait that
    /// nothing ended for a second.
    var timedOutParks: Int { parksTimedOut.load(ordering: .relaxed) }
    /// Every park so far.
    var parks: Int { parksTotal.load(ordering: .relaxed) }

    /// Tries `attempt` until it succeeds or the queue is closed: a few times yielding the core,
    /// then parked until a push or pop wakes it.
    private func wait(for attempt: () -> Bool) {
        var attempts = 0
        while true {
            if attempt() || closed.load(ordering: .acquiring) { return }
            attempts += 1
            if attempts < 64 {
                sched_yield()
                continue
            }
            sleepers.wrappingIncrement(ordering: .sequentiallyConsistent)
            atomicMemoryFence(ordering: .sequentiallyConsistent)
            // The last look, after saying it parks: a change made before the other side could
            // see `sleepers` is seen here.
            if attempt() || closed.load(ordering: .sequentiallyConsistent) {
                sleepers.wrappingDecrement(ordering: .sequentiallyConsistent)
                return
            }
            parksTotal.wrappingIncrement(ordering: .relaxed)
            if wakeup.wait(timeout: .now() + parkBound) == .timedOut {
                parksTimedOut.wrappingIncrement(ordering: .relaxed)
            }
            sleepers.wrappingDecrement(ordering: .sequentiallyConsistent)
        }
    }

    /// After a push or pop: wakes a parked waiter, if any.
    private func wakeSleepers() {
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        if sleepers.load(ordering: .sequentiallyConsistent) > 0 { wakeup.signal() }
    }
}
