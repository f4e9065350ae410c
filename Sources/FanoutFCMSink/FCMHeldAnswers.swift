import FanoutScenarioTerms
import NIOCore

/// One HTTP/2 connection's answers held for the FCM sink's latency (`FCMSinkConfiguration
/// .latency`): each answer's stream, status and Retry-After on the shared due-time heap, its
/// body copied into a buffer of the connection's that is reused, so holding allocates nothing
/// once the connection has held its most at once (at most its 100 streams).
///
/// ```
///   answered ─► hold(due: now + draw) ─► heap (due, stream, status, retry-after, body k)
///                                         bodies[k] ◄─ the answer's bytes
///   wake(now) ─► popDue(now) ─► respond(stream, status, bodies[k]) ─► release(k)
/// ```
struct FCMHeldAnswers {
    struct Entry: DueEntry {
        var due: UInt64
        var stream: UInt32
        var status: Int16
        /// Seconds for `retry-after`, or −1 for none.
        var retryAfter: Int32
        /// The index of its body in `bodies`.
        var body: Int32
    }

    private var queue = DueHeap<Entry>()
    private var bodies: [ByteBuffer] = []
    /// Indices of `bodies` free for the next answer.
    private var free: [Int32] = []
    /// Streams reset while answers were held: some of the held answers may be for them.
    private var resetsWhileHolding = 0

    var count: Int { queue.count }
    var earliest: UInt64? { queue.earliest }

    /// Holds `answer`, whose body is `body`, until `due`.
    mutating func hold(_ answer: FCMAnswer, body: ByteBuffer, stream: UInt32, due: UInt64) {
        let index: Int32
        if let reused = free.popLast() {
            index = reused
            bodies[Int(index)].clear()
        } else {
            index = Int32(bodies.count)
            bodies.append(ByteBufferAllocator().buffer(capacity: max(256, body.readableBytes)))
        }
        bodies[Int(index)].writeImmutableBuffer(body)
        queue.push(
            Entry(
                due: due,
                stream: stream,
                status: Int16(answer.status),
                retryAfter: Int32(answer.retryAfter ?? -1),
                body: index
            )
        )
    }

    /// The earliest held answer if it is due at `now`, with its body; `release` it once sent.
    mutating func popDue(now: UInt64) -> (entry: Entry, body: ByteBuffer)? {
        guard let entry = queue.popDue(now: now) else { return nil }
        return (entry, bodies[Int(entry.body)])
    }

    /// `entry`'s body may be used again.
    mutating func release(_ entry: Entry) {
        free.append(entry.body)
    }

    /// A stream was reset: its held answer would never be sent. Once resets could account for
    /// half of what is held, the answers of streams no longer open (`isOpen`) are dropped and
    /// their bodies freed, so a client that opens and resets streams (rapid reset) cannot make
    /// the heap grow past twice what is open (the APNs sink's rule, `AnswerScheduler`). The
    /// sink counted each when it decided it (`FCMExchange`), as FCM counts a message it took.
    mutating func streamReset(isOpen: (UInt32) -> Bool) {
        guard queue.count > 0 else { return }
        resetsWhileHolding += 1
        guard resetsWhileHolding >= 64, 2 * resetsWhileHolding >= queue.count else { return }
        var dropped: [Int32] = []
        queue.removeAll { entry in
            guard !isOpen(entry.stream) else { return false }
            dropped.append(entry.body)
            return true
        }
        free += dropped
        resetsWhileHolding = 0
    }
}
