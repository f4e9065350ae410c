import FanoutDevices
import FanoutNotation
import FanoutReport
import FanoutResults
import FanoutSink
import Foundation
import Histogram
import NIOCore

extension DeliverySummary {
    /// What the sink's device fleet says now: its counts, its times in milliseconds, and the
    /// expirations of what is still stored turned from the uptime clock to the wall's.
    init(_ snapshot: DeliverySnapshot, now: Date = Date(), uptime: UInt64 = NIODeadline.now().uptimeNanoseconds) {
        self.init()
        counts = snapshot.counts
        func wall(_ time: UInt64) -> String {
            let seconds = time >= uptime ? Double(time - uptime) / 1e9 : -Double(uptime - time) / 1e9
            return TimeNotation.format(now.addingTimeInterval(seconds))
        }
        storedExpireFrom = snapshot.earliestExpiry.map(wall)
        storedExpireUntil = snapshot.latestExpiry.map(wall)
        let times = snapshot.times
        func figures(_ histogram: Histogram<UInt64>, last: Double? = nil) -> Times? {
            guard histogram.totalCount > 0 else { return nil }
            func ms(_ percent: Double) -> Double { Double(histogram.valueAtPercentile(percent)) / 1000 }
            return Times(p50: ms(50), p90: ms(90), p99: ms(99), max: last ?? Double(histogram.max) / 1000)
        }
        toDeviceMs = figures(times.toDevice)
        reachedMs = figures(times.sinceStart, last: Double(times.last) / 1e6)
        deliveredPerSecond = times.sinceStart.totalCount > 0 ? times.perSecond : nil
        if times.sinceStart.totalCount > 0 {
            let reached = share(allDelivered)
            reachedCurve = Self.curvePercents.map { percent in
                let ms =
                    percent == 100
                    ? Double(times.last) / 1e6 : Double(times.sinceStart.valueAtPercentile(percent)) / 1000
                return CurvePoint(ms: ms, share: reached * percent / 100)
            }
        }
    }
}
