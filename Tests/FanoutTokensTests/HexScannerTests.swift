import FanoutAPNs
import Testing

@testable import FanoutTokens

@Suite struct HexScannerTests {
    /// Every byte value at every position of vectors and tails of every length up to 40, against
    /// the scalar definition.
    @Test func scanAgreesWithTheScalarDefinition() {
        for length in 1...40 {
            for position in 0..<length {
                for byte in UInt8.min...UInt8.max {
                    var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    bytes[position] = byte
                    let expected = DeviceTokenFormat.isHexDigit(byte) ? length : position
                    let found = bytes.withUnsafeBytes { HexScanner.hexPrefixLength($0) }
                    if found != expected {
                        Issue.record(
                            "length \(length), byte \(byte) at \(position): \(found), expected \(expected)"
                        )
                        return
                    }
                }
            }
        }
    }
}
