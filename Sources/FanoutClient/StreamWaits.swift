/// Notifications of the open model that fell due while every stream their connection could
/// open was busy, so that they waited for the server, not for the generator: the ramp at a
/// connection's start (APNs allows 1 stream until the connection's first request is accepted,
/// so arrivals in the first round trip queue behind it), or a stream limit reached later.
/// Their latency counts from their due time all the same; this says what part of it was that.
public struct StreamWaits: Sendable, Equatable {
    public var count = 0
    /// The longest wait, nanoseconds.
    public var longest: UInt64 = 0
    /// The fewest streams that were busy while one waited: the tightest limit met (0: none
    /// waited, or only for a connection that could not take writes).
    public var fewestStreams = 0
    /// The most streams that were busy while one waited: the limit once a connection had its
    /// full allowance (a connection's first round trip allows 1).
    public var mostStreams = 0

    public init() {}

    mutating func add(_ nanoseconds: UInt64, streams: Int) {
        count += 1
        longest = max(longest, nanoseconds)
        if streams > 0 { fewestStreams = fewestStreams == 0 ? streams : min(fewestStreams, streams) }
        mostStreams = max(mostStreams, streams)
    }

    mutating func add(_ other: StreamWaits) {
        count += other.count
        longest = max(longest, other.longest)
        if other.fewestStreams > 0 {
            fewestStreams = fewestStreams == 0 ? other.fewestStreams : min(fewestStreams, other.fewestStreams)
        }
        mostStreams = max(mostStreams, other.mostStreams)
    }
}
