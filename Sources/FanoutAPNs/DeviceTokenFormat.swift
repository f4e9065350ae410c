import CFanoutSIMD
import FanoutNotation

/// The accepted shape of a device token as it travels in `/3/device/<token>`: hexadecimal text.
///
/// Apple asks providers not to assume 64 characters (tokens of 100 to 200 characters have been
/// seen), so the accepted length is a range. Validation reads bytes in place and never allocates.
public struct DeviceTokenFormat: Sendable, Hashable {
    /// The accepted lengths, in hex characters (both ends even and at least 2); for FCM
    /// registration tokens, in characters.
    public var hexLengths: ClosedRange<Int>
    /// The characters a token is made of.
    public var alphabet = Alphabet.hex

    /// What a token's characters may be.
    public enum Alphabet: Sendable, Hashable {
        /// APNs device tokens: `0-9a-fA-F`, an even count.
        case hex
        /// FCM registration tokens (`dXpL…:APA91b…`, about 163 characters): `A-Z a-z 0-9 - _ :`,
        /// text that a JSON string and a URL carry as it is. Hex tokens are among them.
        case fcmRegistration
    }

    /// FCM registration tokens of 1 to 4096 characters (Google documents no length; the tokens
    /// seen are 140 to 200).
    public static let fcm = DeviceTokenFormat(fcmLengths: 1...4096)

    /// A format of FCM registration tokens whose length, in characters, lies in `lengths`.
    public init(fcmLengths lengths: ClosedRange<Int>) {
        precondition(lengths.lowerBound >= 1, "a token has at least one character")
        hexLengths = lengths
        alphabet = .fcmRegistration
    }

    /// Whether `byte` may be in an FCM registration token.
    @inlinable
    public static func isFCMTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: ":"):
            true
        default:
            false
        }
    }

    /// The default range: 16 to 200 bytes of token, that is 32 to 400 hex characters.
    public static let `default` = DeviceTokenFormat(hexLengths: 32...400)

    /// Creates a format accepting tokens whose hex length lies in `hexLengths`.
    public init(hexLengths: ClosedRange<Int>) {
        precondition(hexLengths.lowerBound >= 2, "a token has at least one byte")
        self.hexLengths = hexLengths
    }

    /// Checks `bytes` (ASCII hex, either case) and returns what is wrong, or `nil` when valid.
    public func problem(in bytes: UnsafeRawBufferPointer) -> DeviceTokenProblem? {
        if bytes.isEmpty { return .empty }
        if alphabet == .fcmRegistration {
            for index in bytes.indices where !DeviceTokenFormat.isFCMTokenByte(bytes[index]) {
                return .notInFCMToken(offset: index, byte: bytes[index])
            }
            return hexLengths.contains(bytes.count) ? nil : .fcmLengthOutOfRange(bytes.count, accepted: hexLengths)
        }
        // The hex run sixteen bytes a step (SSE2): a 64-digit token in 4 steps, 137 instructions
        // where a byte at a time took 752 (the functions' own costs in scripts/cost.sh's
        // callgrind profile, `FANOUT_COST_KEEP=1`).
        let hexRun = fanout_hex_prefix_length(bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), bytes.count)
        if hexRun < bytes.count { return .invalidCharacter(offset: hexRun, byte: bytes[hexRun]) }
        if bytes.count % 2 != 0 { return .oddLength(bytes.count) }
        if !hexLengths.contains(bytes.count) { return .lengthOutOfRange(bytes.count, accepted: hexLengths) }
        return nil
    }

    /// Checks a token given as text; convenient away from the hot path.
    public func problem(in token: String) -> DeviceTokenProblem? {
        var token = token
        return token.withUTF8 { problem(in: UnsafeRawBufferPointer($0)) }
    }

    /// Whether `byte` is an ASCII hex digit, `0-9`, `a-f` or `A-F`.
    @inlinable
    public static func isHexDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"),
            UInt8(ascii: "A")...UInt8(ascii: "F"):
            true
        default:
            false
        }
    }
}

/// Why a device token is not acceptable. Each case says what a person needs to fix it.
public enum DeviceTokenProblem: Sendable, Hashable, CustomStringConvertible {
    /// The token has no characters (APNs answers 400 MissingDeviceToken).
    case empty
    /// The byte at `offset` (0-based) is not a hex digit.
    case invalidCharacter(offset: Int, byte: UInt8)
    /// Hex encodes whole bytes, so the length must be even.
    case oddLength(Int)
    /// The length, in hex characters, lies outside the accepted range.
    case lengthOutOfRange(Int, accepted: ClosedRange<Int>)
    /// An FCM registration token's byte at `offset` (0-based) is not in its alphabet.
    case notInFCMToken(offset: Int, byte: UInt8)
    /// An FCM registration token's length, in characters, lies outside the accepted range.
    case fcmLengthOutOfRange(Int, accepted: ClosedRange<Int>)

    public var description: String {
        switch self {
        case .empty:
            return "the device token is empty"
        case .invalidCharacter(let offset, let byte):
            return
                "character \(offset + 1) of the device token is \(ByteDescription.describe(byte)), not a hex digit"
        case .oddLength(let length):
            return "the device token has \(length) hex characters; hex needs an even number"
        case .lengthOutOfRange(let length, let accepted):
            return
                "the device token has \(length) hex characters; accepted are \(accepted.lowerBound) to \(accepted.upperBound)"
        case .notInFCMToken(let offset, let byte):
            return
                "character \(offset + 1) of the registration token is \(ByteDescription.describe(byte)), not in an FCM registration token (A-Z a-z 0-9 - _ :)"
        case .fcmLengthOutOfRange(let length, let accepted):
            return
                "the FCM registration token has \(length) characters; accepted are \(accepted.lowerBound) to \(accepted.upperBound)"
        }
    }
}
