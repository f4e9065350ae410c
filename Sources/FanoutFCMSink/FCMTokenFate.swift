/// Which tokens the sink holds unregistered or of another sender: the tokens listed
/// (`--unregistered-tokens FILE`, by their hash), then a hash of the token's text (FNV-1a, 64
/// bits) taken modulo a million, so a sender can tell in advance what the sink will answer for
/// each, and the shares hold over any large set of distinct tokens.
///
/// ```
///   listed ─► 404 UNREGISTERED
///   0 ………… unregistered × 10⁶ ………… (unregistered + other sender) × 10⁶ ………… 10⁶
///   └── 404 UNREGISTERED ──┘└────── 403 SENDER_ID_MISMATCH ──────┘└── delivered ──┘
/// ```
public enum FCMTokenFate: Sendable, Hashable {
    case registered, unregistered, otherSender

    public static func of(
        _ token: UnsafeRawBufferPointer,
        unregistered: Double,
        otherSender: Double,
        listed: Set<UInt64> = []
    ) -> FCMTokenFate {
        guard unregistered > 0 || otherSender > 0 || !listed.isEmpty else { return .registered }
        return of(hash: hash(token), unregistered: unregistered, otherSender: otherSender, listed: listed)
    }

    /// The same, of a token whose `hash` is known.
    public static func of(
        hash: UInt64,
        unregistered: Double,
        otherSender: Double,
        listed: Set<UInt64> = []
    ) -> FCMTokenFate {
        guard unregistered > 0 || otherSender > 0 || !listed.isEmpty else { return .registered }
        if !listed.isEmpty && listed.contains(hash) { return .unregistered }
        let position = Double(hash % 1_000_000)
        if position < unregistered * 1_000_000 { return .unregistered }
        if position < (unregistered + otherSender) * 1_000_000 { return .otherSender }
        return .registered
    }

    /// FNV-1a, 64 bits, of the token's text: which fate, and which device (`FCMDeviceRates`).
    public static func hash(_ token: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in token {
            hash ^= UInt64(byte)
            hash &*= 0x100_0000_01b3
        }
        return hash
    }

    public static func of(_ token: String, unregistered: Double, otherSender: Double) -> FCMTokenFate {
        var token = token
        return token.withUTF8 { of(UnsafeRawBufferPointer($0), unregistered: unregistered, otherSender: otherSender) }
    }

    /// `hash(_:)` of a token given as text (a list read at start: `--unregistered-tokens`).
    public static func hash(_ token: String) -> UInt64 {
        var token = token
        return token.withUTF8 { hash(UnsafeRawBufferPointer($0)) }
    }
}
