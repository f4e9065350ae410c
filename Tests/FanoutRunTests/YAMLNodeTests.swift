import Testing
import Yams

@testable import FanoutRun

/// `YAMLNode` as Yams writes it: the layout kubectl users read, and every value read back as
/// what it was built as, whatever its text looks like to a YAML reader.
@Suite struct YAMLNodeTests {
    /// Keys in order, a mapping indented by two, a sequence at its key's indentation, a
    /// mapping inside a sequence after its dash, empty collections inline.
    @Test func aDocumentIsWrittenInKubectlsLayout() throws {
        let document: YAMLNode = .mapping([
            ("kind", "Job"),
            ("spec", .mapping([("completions", 8), ("suspend", false), ("args", ["send", "--shard"])])),
            ("containers", [.mapping([("name", "shard"), ("ports", [])])]),
            ("labels", .mapping([])),
        ])
        #expect(
            try document.text() == """
                kind: "Job"
                spec:
                  completions: 8
                  suspend: false
                  args:
                  - "send"
                  - "--shard"
                containers:
                - name: "shard"
                  ports: []
                labels: {}

                """
        )
    }

    /// Text a YAML reader would take for a boolean, a number, null, a comment, a mapping or an
    /// alias stays a string; control characters, quotes, backslashes and text other than
    /// ASCII come back as they went; a long line is not folded.
    @Test(arguments: [
        "no", "yes", "true", "10", "0x1F", "1e3", "null", "~", "", " padded ", "# not a comment",
        "key: value", "- item", "*alias", "&anchor", "!tag", "\"quoted\"", "back\\slash",
        "line\nbreak", "tab\there", "bell\u{07}", "delete\u{7F}", "café ✓", String(repeating: "long ", count: 60),
    ])
    func aStringIsReadBackAsTheSameString(_ value: String) throws {
        let text = try YAMLNode.mapping([("value", .string(value))]).text()
        let node = try #require(try Yams.compose(yaml: text))
        let read = try #require(node.mapping?["value"]?.scalar)
        #expect(read.string == value)
        #expect(read.style == .doubleQuoted)
        #expect(text.split(separator: "\n").count == 1, "\(text)")
    }

    /// Numbers and booleans are YAML's own: read back as an integer and a boolean.
    @Test func numbersAndBooleansAreReadAsTheirTypes() throws {
        let text = try YAMLNode.mapping([("port", 2197), ("negative", -1), ("root", true)]).text()
        let node = try #require(try Yams.compose(yaml: text))
        #expect(node.mapping?["port"]?.int == 2197)
        #expect(node.mapping?["negative"]?.int == -1)
        #expect(node.mapping?["root"]?.bool == true)
    }
}
