/// How many streams a connection kept in flight, integrated over time: the time-weighted mean
/// is the area under the open-streams curve over the time it was busy.
///
/// ```
///   open streams
///     3 ┤      ┌──┐
///     2 ┤   ┌──┘  └──┐            area = Σ level × time at that level   (stream·ns)
///     1 ┤ ┌─┘        └─┐          mean = area ÷ (last change − first request)
///     0 ┼─┘            └──────
///         ▲ first request   ▲ last change (its last answer)
/// ```
///
/// `note` is called after every request and every wake that answered: two subtractions, a
/// multiply and an add. Both sinks' instruments keep one a connection (the APNs sink's
/// `ProviderObserver`, the FCM sink's `FCMConnectionWatch`).
@usableFromInline
package struct StreamUse: Sendable, Hashable {
    /// Streams open since `since` (uptime ns).
    @usableFromInline
    package var level = 0
    @usableFromInline
    package var since: UInt64 = 0
    /// Stream·nanoseconds since the first request.
    @usableFromInline
    package var area: UInt64 = 0
    /// The first request's arrival; 0 before it.
    @usableFromInline
    package var firstRequest: UInt64 = 0
    /// The most streams open at any change: the mean, an average of levels, is never above it.
    @usableFromInline
    package var peak = 0

    package init() {}

    /// The connection has `open` streams from `now` on.
    @inlinable
    package mutating func note(_ open: Int, at now: UInt64) {
        if firstRequest == 0 {
            guard open > 0 else { return }
            firstRequest = now
        } else {
            area &+= UInt64(level) &* (now - min(now, since))
        }
        level = open
        peak = max(peak, open)
        since = max(since, now)
    }

    /// Nanoseconds from the first request to the last change (0 before any request).
    package var busy: UInt64 { firstRequest == 0 ? 0 : since - firstRequest }

    /// The time-weighted mean of streams open while busy.
    package var mean: Double { busy == 0 ? Double(level) : Double(area) / Double(busy) }
}
