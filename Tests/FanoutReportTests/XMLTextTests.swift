import Foundation
import Testing

@testable import FanoutReport

#if canImport(FoundationXML)
import FoundationXML
#endif

/// JUnit reports carry reasons and file names a person wrote: whatever their characters, the
/// report stays well-formed XML and says them back.
@Suite struct XMLTextTests {
    static let awkward = "p99 < 25ms & \"quoted\" 'single' >\ttab\nline\u{1}\u{8}\u{1F}\u{FFFE}é"

    @Test func markupAndControlsAreEscaped() {
        #expect(
            XMLText.escaped(Self.awkward)
                == "p99 &lt; 25ms &amp; &quot;quoted&quot; &apos;single&apos; &gt;\ttab\nline\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}é"
        )
        #expect(XMLText.escaped("a\tb\nc\rd", attribute: true) == "a&#9;b&#10;c&#13;d")
    }

    /// An XML parser reads the attribute back as it was written, controls aside.
    @Test func aParserReadsTheTextBack() throws {
        let xml = "<r a=\"\(XMLText.escaped(Self.awkward, attribute: true))\">\(XMLText.escaped(Self.awkward))</r>"
        final class Reader: NSObject, XMLParserDelegate {
            var attribute: String?
            var text = ""
            func parser(
                _ parser: XMLParser,
                didStartElement elementName: String,
                namespaceURI: String?,
                qualifiedName: String?,
                attributes: [String: String] = [:]
            ) { attribute = attributes["a"] }
            func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }
        }
        let parser = XMLParser(data: Data(xml.utf8))
        let reader = Reader()
        parser.delegate = reader
        #expect(parser.parse(), "\(parser.parserError.map { "\($0)" } ?? "")")
        let expected = "p99 < 25ms & \"quoted\" 'single' >\ttab\nline\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}é"
        #expect(reader.attribute == expected)
        #expect(reader.text == expected)
    }
}
