import NIOConcurrencyHelpers

/// Each device's send rates, as FCM limits them (docs/fcm.md, "Quota and rate limits"): 240
/// messages a minute and 5,000 an hour to one device, past which a send is 429 QUOTA_EXCEEDED
/// ("device message rate exceeded"); and collapsible messages (with a `collapse_key`) a burst of
/// 20 refilled one every 3 minutes, the excess accepted and its delivery held, not refused.
///
/// ```
///   device (its token's hash) ─► minute window  count < 240   ─┐
///                               hour window    count < 5,000 ─┴► accepted ─► collapsible? bucket > 0 ─► delivered
///                                   └ else 429, Retry-After: to the window's end        └ else 200, held
/// ```
///
/// Each window starts with the device's first message in it, as the project's quota does (**our
/// assumption**: Google does not say). A device is kept in one of 64 shards behind its own lock,
/// 24 bytes and its hash; one whose windows have ended and whose bucket is full is forgotten when
/// its shard is swept (every 65,536 sends to it). A fan-out to 10 million devices within the hour
/// holds them all: about 0.5 GB.
final class FCMDeviceRates: Sendable {
    let limits: FCMSinkConfiguration.DeviceLimits
    private let shards: [NIOLockedValueBox<Shard>]
    /// The time origin, so that seconds fit in 32 bits.
    private let origin: UInt64

    private struct Device {
        var minuteStart: UInt32 = 0
        var minuteCount: UInt32 = 0
        var hourStart: UInt32 = 0
        var hourCount: UInt32 = 0
        /// Collapsible messages left in the burst, and when it was last refilled (seconds).
        var bucket: UInt32
        var refilledAt: UInt32 = 0
    }

    private struct Shard {
        var devices: [UInt64: Device] = [:]
        var sendsSinceSweep = 0
    }

    enum Verdict: Equatable {
        case delivered
        /// Accepted; a collapsible message past its burst: its delivery is held.
        case held
        /// Past the device's minute or hour: the seconds to that window's end.
        case refused(retryAfter: Int)
    }

    init(_ limits: FCMSinkConfiguration.DeviceLimits, now: UInt64) {
        self.limits = limits
        origin = now
        // Room for 65,536 devices made at the start, so that a sink's first sends to new devices
        // do not grow the tables (each growth after it doubles a shard: amortized, none a send).
        shards = (0..<64).map { _ in NIOLockedValueBox(Shard(devices: Dictionary(minimumCapacity: 1024))) }
    }

    /// One send to the device whose token hashes to `device`, at `now` (uptime nanoseconds).
    func admit(_ device: UInt64, collapsible: Bool, now: UInt64) -> Verdict {
        // A time before the origin (none the sink gives) is its origin, not 136 years on.
        let second = UInt32(truncatingIfNeeded: (now > origin ? now - origin : 0) / 1_000_000_000)
        let limits = limits
        return shards[Int(device & 63)].withLockedValue { shard in
            shard.sendsSinceSweep += 1
            if shard.sendsSinceSweep >= 65_536 {
                shard.sendsSinceSweep = 0
                shard.devices = shard.devices.filter { !Self.isForgettable($0.value, at: second, limits) }
            }
            var state = shard.devices[device] ?? Device(bucket: UInt32(limits.collapsibleBurst))
            if state.minuteCount == 0 || second >= state.minuteStart + 60 {
                (state.minuteStart, state.minuteCount) = (second, 0)
            }
            if state.hourCount == 0 || second >= state.hourStart + 3600 {
                (state.hourStart, state.hourCount) = (second, 0)
            }
            if state.minuteCount >= limits.perMinute {
                return .refused(retryAfter: Int(max(1, state.minuteStart + 60 - second)))
            }
            if state.hourCount >= limits.perHour {
                return .refused(retryAfter: Int(max(1, state.hourStart + 3600 - second)))
            }
            state.minuteCount += 1
            state.hourCount += 1
            var verdict = Verdict.delivered
            if collapsible {
                let refill = UInt32(limits.collapsibleRefillSeconds)
                let earned = (second - state.refilledAt) / refill
                if earned > 0 {
                    state.bucket = min(UInt32(limits.collapsibleBurst), state.bucket + earned)
                    state.refilledAt += earned * refill
                }
                if state.bucket > 0 {
                    state.bucket -= 1
                } else {
                    verdict = .held
                }
                if state.bucket == UInt32(limits.collapsibleBurst) - 1 && verdict == .delivered {
                    state.refilledAt = second
                }
            }
            shard.devices[device] = state
            return verdict
        }
    }

    /// Nothing to remember: both windows over and the burst full again.
    private static func isForgettable(
        _ device: Device,
        at second: UInt32,
        _ limits: FCMSinkConfiguration.DeviceLimits
    ) -> Bool {
        let refilled = device.bucket + (second - device.refilledAt) / UInt32(limits.collapsibleRefillSeconds)
        return second >= device.minuteStart + 60 && second >= device.hourStart + 3600
            && refilled >= UInt32(limits.collapsibleBurst)
    }

    /// Devices remembered now.
    var count: Int { shards.reduce(0) { $0 + $1.withLockedValue { $0.devices.count } } }
}
