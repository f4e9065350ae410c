import FanoutResults
import FanoutSink

/// A sink's broadcasts as its run folder writes them: `summary.json`'s `broadcast` and the
/// lines of `broadcasts.csv` (docs/sink.md, "Broadcast channels").
enum BroadcastReading {
    static func read(_ records: BroadcastRecords) -> (summary: BroadcastSummary, rows: [BroadcastRow]) {
        let counts = records.counts
        var summary = BroadcastSummary(
            channels: .init(created: counts.created, deleted: counts.deleted, kept: 0, given: 0)
        )
        summary.channels.open = counts.open
        summary.channels.refused = counts.refusedCreations
        summary.broadcasts = counts.broadcasts
        summary.accepted = counts.broadcasts
        summary.devices = counts.reach
        let times = records.times
        func ms(_ nanoseconds: UInt64) -> Double { Double(nanoseconds) / 1e6 }
        let first = records.broadcasts.first?.acceptedAt ?? 0
        var lasts: [Double] = []
        lasts.reserveCapacity(records.broadcasts.count)
        let rows = records.broadcasts.enumerated().map { index, broadcast in
            let delivered = broadcast.reach.delivered > 0
            let last = ms(times.last(of: broadcast.reach.delivered))
            if delivered { lasts.append(last) }
            return BroadcastRow(
                broadcast: index + 1,
                acceptedMs: ms(broadcast.acceptedAt - min(first, broadcast.acceptedAt)),
                channel: broadcast.channel,
                devices: broadcast.reach,
                p50Ms: delivered ? ms(times.quantile(0.5)) : 0,
                p99Ms: delivered ? ms(times.quantile(0.99)) : 0,
                lastMs: last
            )
        }
        if counts.delivered > 0 {
            // Every delivered subscriber's delay is a draw from the same distribution: the run's
            // percentiles are its quantiles; its last, the broadcast with the most subscribers'.
            let overallLast = ms(times.last(of: records.mostDelivered))
            summary.deliveryMs = .init(
                p50: ms(times.quantile(0.5)),
                p90: ms(times.quantile(0.9)),
                p99: ms(times.quantile(0.99)),
                last: overallLast
            )
            let sorted = lasts.sorted()
            func at(_ share: Double) -> Double {
                sorted.isEmpty ? overallLast : sorted[min(sorted.count - 1, Int(share * Double(sorted.count)))]
            }
            summary.lastSubscriberMs = .init(p50: at(0.5), p99: at(0.99), max: overallLast)
        }
        summary.broadcastsFile = BroadcastRow.fileName
        summary.broadcastsLeftOut = records.leftOut
        return (summary, rows)
    }
}
