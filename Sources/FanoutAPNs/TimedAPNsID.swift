import Foundation

/// An `apns-id` that says when its request was sent, so that a Fanout sink on the same host can
/// time its own lateness from the send — queues in the sender's socket, the kernel's buffers and
/// its own read backlog included — rather than from the moment it got round to reading it.
/// APNs echoes a client's `apns-id`; to any other server it is an ordinary UUID (version 8,
/// RFC 9562's custom layout):
///
/// ```
///   tttttttt-tttt-8hhh-Vrrr-rrrrrrrrrrrr
///   t  48 bits  the send time, microseconds of the host's monotonic clock (`NIODeadline`)
///   8   4 bits  the UUID version
///   h  12 bits  the host's clock tag: a hash of its boot id (same boot, same monotonic clock)
///   V   2 bits  the variant, 10
///   r  62 bits  random
/// ```
///
/// A sink on another host (another clock) sees a tag that is not its own and ignores the time.
///
/// A Fanout sink answers a timed request with an `apns-unique-id` (the header APNs' development
/// environment sends) of the same layout, which carries when it wrote the answer and how long
/// its scenario held it, so the sender can take the hold — the part that is the server's —
/// out of each such answer's latency. A sink with a wire in front (`--rtt`) counts the wire as
/// the server's too: the answer is written as of when the wire hands it on, and the hold has
/// both ways of the wire in it (half the round trip each, a spread's median):
///
/// ```
///   wwwwwwww-wwww-8hhh-Vddd-dddddddddddd
///   w  48 bits  when the answer was written (and off the sink's wire), microseconds of the same clock
///   d  62 bits  the hold the scenario asked for, and the wire's two ways, microseconds
/// ```
public enum TimedAPNsID {
    /// The name of the answer's header.
    public static let answerHeader: StaticString = "apns-unique-id"

    /// The UUID's bits for a request sent at `uptimeNanoseconds`, with `random` filling the rest.
    public static func bits(sentAt uptimeNanoseconds: UInt64, random: UInt64) -> (high: UInt64, low: UInt64) {
        let microseconds = (uptimeNanoseconds / 1000) & 0xFFFF_FFFF_FFFF
        return (microseconds << 16 | 0x8000 | hostTag, random & 0x3FFF_FFFF_FFFF_FFFF | 0x8000_0000_0000_0000)
    }

    /// The send time (uptime nanoseconds) in a canonical UUID's 36 bytes, when it is a timed id
    /// of this host's clock; `nil` for any other id.
    @inline(__always)
    public static func sendTime(in text: UnsafeRawBufferPointer) -> UInt64? {
        guard text.count == 36, text[14] == UInt8(ascii: "8") else { return nil }
        var high: UInt64 = 0
        for index in 0..<18 where index != 8 && index != 13 {
            guard let digit = hexValue(text[index]) else { return nil }
            high = high << 4 | digit
        }
        guard high & 0xFFF == hostTag else { return nil }
        return (high >> 16) * 1000
    }

    /// The bits of an answer's `apns-unique-id`: written at `uptimeNanoseconds`, held `held`.
    public static func answerBits(writtenAt uptimeNanoseconds: UInt64, held: UInt64) -> (high: UInt64, low: UInt64) {
        bits(sentAt: uptimeNanoseconds, random: held / 1000)
    }

    /// When the answer was written and how long it was held (nanoseconds), from an
    /// `apns-unique-id` of this host's clock; `nil` for any other.
    public static func answer(in text: UnsafeRawBufferPointer) -> (writtenAt: UInt64, held: UInt64)? {
        guard let writtenAt = sendTime(in: text) else { return nil }
        var low: UInt64 = 0
        for index in 19..<36 where index != 23 {
            guard let digit = hexValue(text[index]) else { return nil }
            low = low << 4 | digit
        }
        return (writtenAt, (low & 0x3FFF_FFFF_FFFF_FFFF) * 1000)
    }

    @inline(__always)
    private static func hexValue(_ byte: UInt8) -> UInt64? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt64(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt64(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt64(byte - UInt8(ascii: "A") + 10)
        default: nil
        }
    }

    /// 12 bits of an FNV-1a hash of the boot id (Linux), else of the host's name.
    public static let hostTag: UInt64 = {
        let boot = try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8)
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in (boot ?? ProcessInfo.processInfo.hostName).utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3
        }
        return (hash ^ hash >> 32) & 0xFFF
    }()
}
