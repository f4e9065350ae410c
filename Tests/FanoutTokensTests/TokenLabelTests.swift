import FanoutAPNs
import Foundation
import Testing

@testable import FanoutTokens

/// A campaign's token set: `apns:` and `fcm:` lines (and unlabelled APNs lines) in one file,
/// each half's reader taking its own, as `fanout send --fcm-endpoint` reads it twice.
@Suite struct TokenLabelTests {
    static let apnsA = String(repeating: "a1", count: 32)
    static let apnsB = String(repeating: "B2", count: 32)
    static let fcmA = "dXpLq7Rz0aE:APA91bHun4MxP5egoKMwt2KZFBaFUH-1RYqx"
    static let fcmB = "cF0Qm9vZ0bA:APA91bE_3kq-8xYwz"

    /// Lines of both services, a comment, an unlabelled APNs line, fields, CRLF.
    static let mixed = """
        # a campaign's devices
        apns:\(apnsA)\tuser=1
        fcm:\(fcmA)\tuser=2
        \(apnsB)\r
        fcm:\(fcmB)

        """

    static let apnsHalf = TokenReaderConfiguration(format: .default, lines: .campaignHalf)
    static let fcmHalf = TokenReaderConfiguration(format: .fcm, lines: .campaignHalf)

    @Test func eachHalfReadsItsOwnLinesWithTheirPlaceAndFields() throws {
        let folder = TemporaryFolder()
        let path = folder.file("mixed.txt", Self.mixed)
        let apns = try readAll(.file(path), Self.apnsHalf)
        #expect(
            apns.tokens == [
                ReadToken(token: Self.apnsA, fields: "\tuser=1", line: 2, sequence: 0),
                ReadToken(token: Self.apnsB, fields: "", line: 4, sequence: 1),
            ]
        )
        #expect(apns.summary.otherService == 2)
        #expect(apns.summary.lines == 5 && apns.summary.validTokens == 2 && apns.summary.error == nil)
        let fcm = try readAll(.file(path), Self.fcmHalf)
        #expect(
            fcm.tokens == [
                ReadToken(token: Self.fcmA, fields: "\tuser=2", line: 3, sequence: 0),
                ReadToken(token: Self.fcmB, fields: "", line: 5, sequence: 1),
            ]
        )
        // The unlabelled line is APNs's.
        #expect(fcm.summary.otherService == 2)
        #expect(fcm.summary.lines == 5 && fcm.summary.validTokens == 2 && fcm.summary.error == nil)
    }

    /// Without labels a file is one service's, as it always was; a label of the reader's own
    /// service is allowed there too.
    @Test func aOneServiceSetTakesItsOwnLabel() throws {
        let folder = TemporaryFolder()
        let apns = try readAll(.file(folder.file("apns.txt", "apns:\(Self.apnsA)\n\(Self.apnsB)\n")))
        #expect(apns.tokens.map(\.token) == [Self.apnsA, Self.apnsB])
        #expect(apns.summary.otherService == 0)
        let fcm = try readAll(
            .file(folder.file("fcm.txt", "fcm:\(Self.fcmA)\n\(Self.fcmB)\n")),
            TokenReaderConfiguration(format: .fcm)
        )
        #expect(fcm.tokens.map(\.token) == [Self.fcmA, Self.fcmB])
    }

    /// The other service's line in a one-service set is the user's mistake: the read stops at
    /// it, naming the line and what to do (under skip it is turned down and counted).
    @Test func theOtherServicesLineInAOneServiceSetIsRefusedWithItsPlace() throws {
        let folder = TemporaryFolder()
        let path = folder.file("mixed.txt", Self.mixed)
        let apns = try readAll(.file(path))
        #expect(apns.tokens.map(\.token) == [Self.apnsA])
        let error = try #require(apns.summary.error)
        #expect(error.line == 3 && error.column == 1)
        #expect(
            error.message
                == "the line is FCM's (fcm:), and these tokens are APNs's: a set of both services is a campaign's (fanout send --fcm-endpoint sends each half to its own service)"
        )
        var skipping = TokenReaderConfiguration(format: .fcm)
        skipping.invalidTokens = .skip
        let fcm = try readAll(.file(path), skipping)
        #expect(fcm.tokens.map(\.token) == [Self.fcmA, Self.apnsB, Self.fcmB])
        #expect(fcm.summary.skipped == 1 && fcm.summary.error == nil)
    }

    /// A labelled token is checked as any token is, its column counted from the line's start.
    @Test func aBadLabelledTokenIsPlacedAfterItsLabel() throws {
        let folder = TemporaryFolder()
        let odd = try readAll(.file(folder.file("odd.txt", "apns:abc\n")), Self.apnsHalf)
        #expect(odd.summary.error?.column == 6)
        #expect(odd.summary.error?.message == "the token has 3 hex digits; hex needs an even number")
        let digit = try readAll(.file(folder.file("digit.txt", "apns:\(Self.apnsA)x\n")), Self.apnsHalf)
        #expect(digit.summary.error?.column == 70)
        #expect(digit.summary.error?.message == "'x' is not a hex digit")
        let empty = try readAll(.file(folder.file("empty.txt", "fcm:\n")), Self.fcmHalf)
        #expect(empty.summary.error?.column == 5)
        #expect(empty.summary.error?.message == "no token after the label fcm:")
        let space = try readAll(.file(folder.file("space.txt", "fcm:\(Self.fcmA) x\n")), Self.fcmHalf)
        #expect(space.summary.error?.column == 5 + Self.fcmA.utf8.count)
    }

    /// In a campaign's file an FCM token without its label reads as a bad APNs token: the
    /// message says what an unlabelled line is.
    @Test func anUnlabelledFCMTokenInACampaignSaysWhatItIsTakenFor() throws {
        let folder = TemporaryFolder()
        let read = try readAll(.file(folder.file("slip.txt", "apns:\(Self.apnsA)\n\(Self.fcmA)\n")), Self.apnsHalf)
        #expect(read.tokens.map(\.token) == [Self.apnsA])
        #expect(read.summary.error?.line == 2 && read.summary.error?.column == 2)
        #expect(
            read.summary.error?.message
                == "'X' is not a hex digit (in a campaign's file an unlabelled line is an APNs token: an FCM token's line begins fcm:)"
        )
        // Outside a campaign the message is as it was.
        let plain = try readAll(.file(folder.file("plain.txt", "\(Self.fcmA)\n")))
        #expect(plain.summary.error?.message == "'X' is not a hex digit")
    }

    /// Look-alikes are not labels: `apns` without its colon, a capital, a label not at the
    /// line's start.
    @Test func onlyAnExactLabelAtTheLineStartIsOne() throws {
        for line in ["apns\(Self.apnsA)", "APNS:\(Self.apnsA)", " apns:\(Self.apnsA)", "fcm;\(Self.apnsA)"] {
            let folder = TemporaryFolder()
            let read = try readAll(.file(folder.file("look.txt", line + "\n")), Self.apnsHalf)
            #expect(read.tokens.isEmpty, "\(line)")
            #expect(read.summary.otherService == 0, "\(line)")
            #expect(read.summary.error?.line == 1, "\(line)")
        }
    }

    /// A campaign reads the file once a half: a binary set has no labels to split it by.
    @Test func aCampaignHalfRefusesABinarySet() throws {
        let folder = TemporaryFolder()
        let text = folder.file("apns.txt", "\(Self.apnsA)\n\(Self.apnsB)\n")
        let binary = folder.path + "/apns.bin"
        try TokenStream(.file(text)).copy(to: TokenSetWriter(path: binary, format: .binary), sourceName: text)
        #expect(try readAll(.file(binary)).tokens.count == 2)
        // The set is told binary as the stream opens it: the refusal comes before any token.
        let error = #expect(throws: TokenSetError.self) { try readAll(.file(binary), Self.apnsHalf) }
        #expect(
            error?.message
                == "a binary token set holds one service's tokens, with no apns: or fcm: labels: a campaign's set is text (fanout tokens convert --format text)"
        )
    }

    /// Each half's shard is of its own tokens: shard k of n of the APNs half and of the FCM
    /// half together cover each half once.
    @Test func shardsSplitEachHalfOnItsOwn() throws {
        var text = ""
        for index in 0..<40 {
            text += index % 3 == 0 ? "fcm:tok\(index)\n" : "apns:\(String(format: "%064x", index))\n"
        }
        let folder = TemporaryFolder()
        let path = folder.file("many.txt", text)
        for (format, expected) in [(DeviceTokenFormat.default, 26), (.fcm, 14)] {
            var seen = 0
            for shard in 1...3 {
                var configuration = TokenReaderConfiguration(format: format, lines: .campaignHalf)
                configuration.shard = try TokenShard(shard, of: 3)
                seen += try readAll(.file(path), configuration).tokens.count
            }
            #expect(seen == expected)
        }
    }
}
