import FanoutAPNs
import Testing

/// The apns-id that carries its send time: what the sender writes, the sink reads back — and
/// only from its own host's clock.
struct TimedAPNsIDTests {
    /// The canonical text of a UUID's bits, 8-4-4-4-12 lowercase hex.
    static func text(_ bits: (high: UInt64, low: UInt64)) -> [UInt8] {
        let hex = Array("0123456789abcdef".utf8)
        var digits: [UInt8] = []
        for word in [bits.high, bits.low] {
            for shift in stride(from: 60, through: 0, by: -4) { digits.append(hex[Int(word >> UInt64(shift) & 0xF)]) }
        }
        var text: [UInt8] = []
        for (index, digit) in digits.enumerated() {
            if [8, 12, 16, 20].contains(index) { text.append(UInt8(ascii: "-")) }
            text.append(digit)
        }
        return text
    }

    static func sendTime(_ text: [UInt8]) -> UInt64? {
        text.withUnsafeBytes { TimedAPNsID.sendTime(in: $0) }
    }

    @Test func theSendTimeComesBackToTheMicrosecond() {
        for sent: UInt64 in [1_000, 123_456_789_000, 58_000_000_000_000, (1 << 48) * 1000 - 1000] {
            let bits = TimedAPNsID.bits(sentAt: sent + 999, random: 0xDEAD_BEEF_F00D_CAFE)
            let text = Self.text(bits)
            #expect(text.count == 36)
            // Version 8, variant 10: an ordinary UUID to any server.
            #expect(text[14] == UInt8(ascii: "8"))
            #expect([UInt8(ascii: "8"), UInt8(ascii: "9"), UInt8(ascii: "a"), UInt8(ascii: "b")].contains(text[19]))
            #expect(Self.sendTime(text) == sent)
            // APNs ids may come back in capitals.
            #expect(Self.sendTime(Array(String(decoding: text, as: UTF8.self).uppercased().utf8)) == sent)
        }
    }

    @Test func otherIdsCarryNoTime() {
        var bits = TimedAPNsID.bits(sentAt: 5_000_000_000, random: 42)
        // Another host's clock tag.
        bits.high ^= 0x001
        #expect(Self.sendTime(Self.text(bits)) == nil)
        // A random version-4 id.
        #expect(Self.sendTime(Array("9b2f7c1e-3d4a-4b5c-8d6e-7f8091a2b3c4".utf8)) == nil)
        #expect(Self.sendTime(Array("not-a-uuid".utf8)) == nil)
        #expect(Self.sendTime(Array("zzzzzzzz-zzzz-8zzz-8zzz-zzzzzzzzzzzz".utf8)) == nil)
    }

    /// A Fanout sink's `apns-unique-id`: when it wrote the answer and what it held it.
    @Test func anAnswerSaysWhenItWasWrittenAndWhatItWasHeld() {
        let text = Self.text(TimedAPNsID.answerBits(writtenAt: 77_000_123_456, held: 10_000_999))
        let answer = text.withUnsafeBytes { TimedAPNsID.answer(in: $0) }
        #expect(answer?.writtenAt == 77_000_123_000)
        #expect(answer?.held == 10_000_000)
        var written = [UInt8](repeating: 0, count: 36)
        written.withUnsafeMutableBytes {
            UUIDText.write(TimedAPNsID.answerBits(writtenAt: 5_000, held: 0), into: $0)
        }
        #expect(written == Self.text(TimedAPNsID.answerBits(writtenAt: 5_000, held: 0)))
        #expect(
            Array("9b2f7c1e-3d4a-4b5c-8d6e-7f8091a2b3c4".utf8).withUnsafeBytes { TimedAPNsID.answer(in: $0) } == nil
        )
    }
}
