import FanoutFiles
import Foundation
import Testing

/// Every line-oriented file Fanout reads goes through `TextLines`: LF, CRLF and a lone CR end a
/// line alike, numbers count from 1, and a bad line is quoted short.
@Suite struct TextLinesTests {
    static func lines(_ text: String) -> [String] { TextLines(text).map { String($0.text) } }

    @Test(arguments: [
        ("a\nb\nc", ["a", "b", "c"]),
        ("a\r\nb\r\nc\r\n", ["a", "b", "c"]),
        ("a\rb\rc\r", ["a", "b", "c"]),
        ("a\r\nb\nc\rd", ["a", "b", "c", "d"]),
        ("a\n\nb\n", ["a", "", "b"]),
        ("a\r\n\r\nb", ["a", "", "b"]),
        ("\n", [""]),
        ("", [""]),
        ("é ü\r\n漢字", ["é ü", "漢字"]),
    ])
    func everyLineEndEndsALine(text: String, expected: [String]) {
        #expect(Self.lines(text) == expected)
    }

    /// Swift reads "\r\n" as one Character, so splitting on "\n" keeps a CRLF file whole: the
    /// bug a thresholds file saved on Windows met (its thresholds after the first line vanished).
    @Test func aCRLFFileIsNotOneLine() {
        let text = "# t\r\np99 < 0.001ms\r\n"
        #expect(text.split(separator: "\n").count == 1)
        let lines = Array(TextLines(text))
        #expect(lines.map(\.number) == [1, 2])
        #expect(lines[1].text == "p99 < 0.001ms")
    }

    @Test func longLinesAreQuotedShort() {
        #expect(TextLines.quoted("short") == "short")
        let long = String(repeating: "x", count: 6_600_000)
        let quoted = TextLines.quoted(long)
        #expect(quoted.count < 120)
        #expect(quoted.hasSuffix("… (6600000 bytes)"))
    }

    @Test func settingsFilesReadCRLFAndCR() throws {
        for end in ["\n", "\r\n", "\r"] {
            let text = ["# a comment", "topic = com.example.app", "priority = 5", ""].joined(separator: end)
            let settings = try SettingsFile.settings(in: text, source: "s.scenario", known: ["topic", "priority"])
            #expect(settings.map(\.name) == ["topic", "priority"], "\(end.debugDescription)")
            #expect(settings.map(\.value) == ["com.example.app", "5"])
            #expect(settings.map(\.place) == ["s.scenario:2", "s.scenario:3"])
        }
    }

    @Test func aBadSettingsLineIsQuotedShortWithItsPlace() {
        let text = "topic = a\r\n" + String(repeating: "y", count: 10_000)
        #expect {
            try SettingsFile.settings(in: text, source: "big", known: ["topic"])
        } throws: { error in
            let description = "\(error)"
            return description.hasPrefix("big:2: expected NAME = VALUE, got yyy") && description.count < 200
        }
    }

    @Test func aFileUseNamesThePathAndTheContentsHash() {
        let use = FileUse(path: "t.txt", text: "abc")
        // SHA-256("abc"), FIPS 180-2's example.
        #expect(use.sha256 == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(use.description == "t.txt (sha256 ba7816bf8f01)")
    }
}
