import FanoutScenarioTerms

/// Responses waiting for their time (injected latency, stalls): the shared min-heap on the due
/// time (`DueHeap`), which allocates nothing once it has grown to the run's in-flight count.
typealias PendingResponses = DueHeap<PendingResponse>

/// A response held for its time. 64 bytes.
struct PendingResponse: DueEntry {
    /// Due time, in `NIODeadline` uptime nanoseconds.
    var due: UInt64
    var stream: UInt32
    /// How much earlier than `due` an ideal sink would have answered (µs): the time the
    /// request spent between its send and the sink's read (`TimedAPNsID`), 0 when unknown.
    /// Its lateness is timed from `due` − this.
    var transit: UInt32 = 0
    /// The notification's digest hash, counted when the answer goes out.
    var digestHash: UInt64
    /// The apns-id's 36 bytes.
    var id: (UInt64, UInt64, UInt64, UInt64, UInt32) = (0, 0, 0, 0, 0)
    /// The reason's `APNsReason.index`, or -1 for success (last: the entry
    /// packs into 64 bytes).
    var reason: Int16
}
