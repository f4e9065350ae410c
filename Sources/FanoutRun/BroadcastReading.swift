import FanoutAPNs
import FanoutChannels
import FanoutMeasure
import FanoutResults
import FanoutSink
import Foundation
import Histogram

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
        let first = records.broadcasts.first?.acceptedAt ?? 0
        var storage = StorageDeliveries(records)
        var lasts: [Double] = []
        lasts.reserveCapacity(records.broadcasts.count)
        let rows = records.broadcasts.enumerated().map { index, broadcast in
            let delivered = broadcast.reach.delivered > 0
            let fromStorage = storage.add(broadcast)
            let last = max(ms(times.last(of: broadcast.reach.delivered)), fromStorage?.last ?? 0)
            if delivered || fromStorage != nil { lasts.append(last) }
            return BroadcastRow(
                broadcast: index + 1,
                acceptedMs: ms(broadcast.acceptedAt - min(first, broadcast.acceptedAt)),
                channel: broadcast.channel,
                devices: broadcast.reach,
                p50Ms: delivered ? ms(times.quantile(0.5)) : 0,
                p99Ms: delivered ? ms(times.quantile(0.99)) : 0,
                storageP50Ms: fromStorage?.p50 ?? 0,
                storageP99Ms: fromStorage?.p99 ?? 0,
                lastMs: last
            )
        }
        // Every subscriber delivered at once draws its delay from the same distribution: the
        // run's percentiles are its quantiles; its last, the broadcast with the most of them's.
        let lastAtOnce = counts.delivered > 0 ? ms(times.last(of: records.mostDelivered)) : 0
        if counts.delivered > 0 {
            summary.deliveryMs = .init(
                p50: ms(times.quantile(0.5)),
                p90: ms(times.quantile(0.9)),
                p99: ms(times.quantile(0.99)),
                last: lastAtOnce
            )
        }
        summary.storageMs = storage.summary
        if !lasts.isEmpty || counts.delivered > 0 {
            let overallLast = max(lastAtOnce, storage.summary?.last ?? 0, lasts.max() ?? 0)
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

    static func ms(_ nanoseconds: UInt64) -> Double { Double(nanoseconds) / 1e6 }
}

/// The deliveries from storage of the listed broadcasts, worked out: a subscriber back within a
/// stored update's span (`StorageSpan`) gets it at its return, so its time from the broadcast is
/// its return (the return distribution conditioned on the span: `SubscriberReturns`) less the
/// broadcast's acceptance, plus the fleet's delivery delay (its median: a delay of milliseconds
/// next to returns of seconds or more). Each broadcast's percentiles are worked out; the run's
/// come from a histogram given each broadcast's deliveries at `points` quantiles.
struct StorageDeliveries {
    /// Quantiles a broadcast puts in the run's histogram (its deliveries split evenly over them).
    static let points = 100
    private let returns: SubscriberReturns
    private let delay: UInt64
    /// Microseconds, up to 2⁴⁰ (12.7 days: longer than APNs' storage is reported to last).
    private static let largest: UInt64 = 1 << 40
    private var histogram = Histogram<UInt64>(
        lowestDiscernibleValue: 1,
        highestTrackableValue: largest,
        numberOfSignificantValueDigits: .three
    )
    private var last = 0.0

    init(_ records: BroadcastRecords) {
        returns = records.returns
        delay = records.times.quantile(0.5)
    }

    /// A broadcast's deliveries from storage (ms from its acceptance), counted in the run's; nil
    /// when it had none.
    mutating func add(_ broadcast: BroadcastRecords.Broadcast) -> (p50: Double, p99: Double, last: Double)? {
        let count = broadcast.reach.fromStorage
        guard count > 0, let span = broadcast.storage else { return nil }
        let within = returns.within(span)
        func after(_ q: Double) -> UInt64 { within.returnTime(q) - span.from + delay }
        let points = min(count, Self.points)
        for point in 0..<points {
            let share = count * (point + 1) / points - count * point / points
            let value = max(1, after((Double(point) + 0.5) / Double(points)) / 1000)
            _ = histogram.record(min(value, Self.largest), count: UInt64(share))
        }
        let times = (
            p50: BroadcastReading.ms(after(0.5)),
            p99: BroadcastReading.ms(after(0.99)),
            last: BroadcastReading.ms(after(pow(0.5, 1 / Double(count))))
        )
        last = max(last, times.last)
        return times
    }

    /// The run's deliveries from storage; nil without any.
    var summary: BroadcastSummary.Times? {
        guard histogram.totalCount > 0 else { return nil }
        func ms(_ percentile: Double) -> Double { Double(histogram.valueAtPercentile(percentile)) / 1000 }
        return .init(p50: ms(50), p90: ms(90), p99: ms(99), last: last)
    }
}
