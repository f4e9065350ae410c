import FanoutAPNs
import FanoutRandom
import Testing

/// The digest's pair hash is what its documentation draws, whatever the lengths, and the digest
/// ignores order but not loss, duplication or change.
@Suite struct NotificationDigestTests {
    /// The documented definition, byte by byte: `token ‖ 0x00 ‖ payload` as little-endian
    /// 64-bit words, the tail zero-padded.
    static func reference(_ token: [UInt8], _ payload: [UInt8]) -> UInt64 {
        let bytes = token + [0] + payload
        var hash: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(bytes.count)
        for start in stride(from: 0, to: bytes.count, by: 8) {
            var word: UInt64 = 0
            for (index, byte) in bytes[start..<min(start + 8, bytes.count)].enumerated() {
                word |= UInt64(byte) << (8 * UInt64(index))
            }
            let mixed = hash ^ (word &* 0xBF58_476D_1CE4_E5B9)
            hash = (mixed << 31 | mixed >> 33) &* 0x94D0_49BB_1331_11EB
        }
        hash ^= hash >> 33
        hash &*= 0xFF51_AFD7_ED55_8CCD
        hash ^= hash >> 33
        hash &*= 0xC4CE_B9FE_1A85_EC53
        hash ^= hash >> 33
        return hash
    }

    @Test func thePairHashIsTheDocumentedOneForEveryLength() {
        var state: UInt64 = 0x1234
        func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            return SeededRandom.mix(state)
        }
        for tokenLength in [0, 1, 7, 8, 9, 32, 63, 64, 65, 100] {
            // 8 to 23: every tail length after a whole-word token (the one-load-a-word path).
            for payloadLength in [0, 1, 6, 7] + Array(8...23) + [280, 4096] {
                let token = (0..<tokenLength).map { _ in UInt8(truncatingIfNeeded: next()) }
                let payload = (0..<payloadLength).map { _ in UInt8(truncatingIfNeeded: next()) }
                let hash = token.withUnsafeBytes { token in
                    payload.withUnsafeBytes { NotificationDigest.hash(token: token, payload: $0) }
                }
                #expect(hash == Self.reference(token, payload), "token \(tokenLength), payload \(payloadLength)")
            }
        }
    }

    @Test func orderDoesNotMatterButLossDuplicationAndChangeDo() {
        let hashes: [UInt64] = (1...100).map { SeededRandom.mix($0) }
        var forward = NotificationDigest()
        for hash in hashes { forward.add(hash: hash) }
        var backward = NotificationDigest()
        for hash in hashes.reversed() { backward.add(hash: hash) }
        #expect(forward == backward)

        var lost = NotificationDigest()
        for hash in hashes.dropLast() { lost.add(hash: hash) }
        #expect(lost != forward)
        var duplicated = lost
        duplicated.add(hash: hashes[0])
        #expect(duplicated.count == forward.count && duplicated != forward)

        var halves = NotificationDigest()
        for hash in hashes[..<50] { halves.add(hash: hash) }
        var rest = NotificationDigest()
        for hash in hashes[50...] { rest.add(hash: hash) }
        halves.combine(rest)
        #expect(halves == forward)
    }

    /// Each half is 16 hex digits, leading zeros kept: equal digests are equal text (a half
    /// with a leading zero printed 15 digits before), and the older text still parses.
    @Test func digestsAreFixedWidthText() throws {
        let digest = NotificationDigest(count: 3, sum: 0x07d5_478d_2f30_a3cc, squares: 0x123)
        #expect(digest.description == "3 notifications, digest 07d5478d2f30a3cc-0000000000000123")
        #expect(NotificationDigest(parsing: digest.description) == digest)
        #expect(NotificationDigest(parsing: "3 notifications, digest 7d5478d2f30a3cc-123") == digest)
    }
}
