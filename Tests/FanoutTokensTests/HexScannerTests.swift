import Testing

@testable import FanoutTokens

@Suite struct HexScannerTests {
    /// Every byte value at every position of vectors, words and tails of every length up to 40,
    /// against the scalar definition, for both the SSE2 scan and the Swift one.
    @Test func swarScanAgreesWithTheScalarDefinition() {
        for length in 1...40 {
            for position in 0..<length {
                for byte in UInt8.min...UInt8.max {
                    var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    bytes[position] = byte
                    let expected = HexScanner.isHexDigit(byte) ? length : position
                    let found = bytes.withUnsafeBytes { HexScanner.hexPrefixLength($0) }
                    let swar = bytes.withUnsafeBytes { HexScanner.swarHexPrefixLength($0) }
                    if found != expected || swar != expected {
                        Issue.record(
                            "length \(length), byte \(byte) at \(position): \(found) / \(swar), expected \(expected)"
                        )
                        return
                    }
                }
            }
        }
    }
}
