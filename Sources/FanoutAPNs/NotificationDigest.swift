import CFanoutSIMD
import FanoutNotation

/// An order-independent digest of (device token, payload) pairs: the sink adds every
/// notification it accepts, the sender every one it saw accepted, and equal digests (with equal
/// counts) show that nothing was lost, duplicated or corrupted in transit, whatever the order.
///
/// Each pair hashes to 64 bits; the digest is the wrapping sum of those hashes and the wrapping
/// sum of their squares' high halves, so duplicates and swaps do not cancel as XOR would. Digests
/// of shards add up with `combine`.
///
/// The pair hash, over `token ‖ 0x00 ‖ payload` read as little-endian 64-bit words (the tail
/// zero-padded, its length mixed in):
/// ```
///   h = 0x9E3779B97F4A7C15 ^ length
///   for each word w:  h = rotl(h ^ (w &* 0xBF58476D1CE4E5B9), 31) &* 0x94D049BB133111EB
///   h = fmix64(h)    (MurmurHash3's finaliser)
/// ```
public struct NotificationDigest: Sendable, Hashable, CustomStringConvertible {
    public private(set) var count: UInt64 = 0
    public private(set) var sum: UInt64 = 0
    public private(set) var squares: UInt64 = 0

    public init() {}

    public init(count: UInt64, sum: UInt64, squares: UInt64) {
        self.count = count
        self.sum = sum
        self.squares = squares
    }

    /// Adds one notification.
    public mutating func add(token: UnsafeRawBufferPointer, payload: UnsafeRawBufferPointer) {
        add(hash: Self.hash(token: token, payload: payload))
    }

    /// Adds a pair's hash (from `hash(token:payload:)`).
    public mutating func add(hash: UInt64) {
        count &+= 1
        sum &+= hash
        squares &+= hash.multipliedFullWidth(by: hash).high
    }

    /// Adds another digest (a shard's, a connection's).
    public mutating func combine(_ other: NotificationDigest) {
        count &+= other.count
        sum &+= other.sum
        squares &+= other.squares
    }

    /// The 64-bit hash of one (token, payload) pair: C's loop (`fanout_notification_hash`,
    /// Sources/CFanoutSIMD). A 64-digit token and the 280-byte poll payload (43 words) cost 489
    /// instructions where this type's Swift took 1,214 (the function's own cost in scripts/cost.sh's
    /// callgrind profile, `FANOUT_COST_KEEP=1`, marginal over 5,000 → 25,000 notifications).
    public static func hash(token: UnsafeRawBufferPointer, payload: UnsafeRawBufferPointer) -> UInt64 {
        fanout_notification_hash(
            token.baseAddress?.assumingMemoryBound(to: UInt8.self),
            token.count,
            payload.baseAddress?.assumingMemoryBound(to: UInt8.self),
            payload.count
        )
    }

    /// `20000 notifications, digest 09a95c…-215c…`: each half 16 hex digits, leading zeros kept,
    /// so equal digests are equal text (a dropped zero once made them look different to a
    /// script). Older text without the zeros still parses (`init(parsing:)`).
    public var description: String {
        "\(count) notifications, digest \(Self.hex(sum))-\(Self.hex(squares))"
    }

    /// `20,000 notifications, digest 09a95c…-215c…`: `description` with the count grouped, for
    /// the lines a person reads (files keep `description`, which `init(parsing:)` reads).
    public var text: String {
        "\(count.grouped) notifications, digest \(Self.hex(sum))-\(Self.hex(squares))"
    }

    /// 16 lowercase hex digits.
    public static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// The digest `description` wrote (`20000 notifications, digest 9a95…-215c…`).
    public init?(parsing text: String) {
        let parts = text.split(separator: " ")
        guard parts.count == 4, parts[1] == "notifications,", parts[2] == "digest", let count = UInt64(parts[0]) else {
            return nil
        }
        let halves = parts[3].split(separator: "-")
        guard halves.count == 2, let sum = UInt64(halves[0], radix: 16), let squares = UInt64(halves[1], radix: 16)
        else { return nil }
        self.init(count: count, sum: sum, squares: squares)
    }
}
