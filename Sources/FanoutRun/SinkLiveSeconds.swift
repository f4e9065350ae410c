import FanoutAPNs
import FanoutReport
import FanoutSink

/// The sink's `LiveDocument`, one second at a time: what it accepted and rejected in each
/// second (the difference of its running totals, read once a second off its event loops) and
/// the connections open at the second's end. The sink keeps no per-second latency of its own:
/// its seconds carry none. Refusals are keyed by the service's own reasons: APNs' (`APNsReason`)
/// or FCM's errorCode (`FCMErrorCode`).
struct SinkLiveSeconds<Reason: Hashable & RawRepresentable> where Reason.RawValue == String {
    private var seconds: [LiveDocument.Second] = []
    private var last = (accepted: 0, rejected: [Reason: Int]())
    /// Seconds closed so far: the next to close is this one.
    private(set) var closed = 0

    /// The document at `elapsed` seconds, with the next second closed at the totals given.
    mutating func close(
        elapsed: Double,
        accepted: Int,
        rejected: [Reason: Int],
        connections: Int
    ) -> LiveDocument {
        let second = closed
        closed += 1
        var inSecond: [Reason: Int] = [:]
        for (reason, count) in rejected where count > last.rejected[reason, default: 0] {
            inSecond[reason] = count - last.rejected[reason, default: 0]
        }
        let completed = accepted - last.accepted + inSecond.values.reduce(0, +)
        seconds.append(
            .init(
                second: second,
                completed: completed,
                rejected: LiveDocument.named(inSecond),
                connections: connections
            )
        )
        if seconds.count > LiveDocument.secondsKept { seconds.removeFirst(seconds.count - LiveDocument.secondsKept) }
        last = (accepted, rejected)
        return LiveDocument(
            command: "sink",
            elapsedSeconds: elapsed,
            finished: accepted + rejected.values.reduce(0, +),
            ratePerSecond: Double(completed),
            accepted: accepted,
            rejected: LiveDocument.named(rejected),
            failed: [:],
            seconds: seconds
        )
    }
}
