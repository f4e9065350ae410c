import Foundation
import NIOCore

/// The sink's clocks as a connection reads them: uptime nanoseconds (`NIODeadline`'s clock),
/// by which everything is timed, and the wall clock in nanoseconds since 1970, by which a 410's
/// timestamp and `apns-expiration` are dated. A connection reads time only through this, or
/// from the HTTP/2 layer's read time, so a test can give it a clock of its own.
public struct SinkClock: Sendable {
    public var uptime: @Sendable () -> UInt64
    public var wall: @Sendable () -> Int64

    public init(uptime: @escaping @Sendable () -> UInt64, wall: @escaping @Sendable () -> Int64) {
        self.uptime = uptime
        self.wall = wall
    }

    /// The machine's clocks.
    public static let system = SinkClock(
        uptime: { NIODeadline.now().uptimeNanoseconds },
        wall: { Int64(Date().timeIntervalSince1970 * 1e9) }
    )

    /// The wall clock minus the uptime clock, in nanoseconds, now.
    var wallOffset: Int64 { wall() - Int64(uptime()) }
}
