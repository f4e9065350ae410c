import Testing

@testable import FanoutHPACK

/// The static table's lookup view against a plain scan of RFC 7541 Appendix A's texts.
@Suite struct HPACKStaticTableTests {
    /// The first entry whose name (and value) match, 1-based, as a scan of the texts finds it.
    static func scan(_ name: String, _ value: String) -> (full: Int?, name: Int?) {
        let texts = HPACKStaticTable.texts
        let full = texts.firstIndex { $0.0 == name && $0.1 == value }.map { $0 + 1 }
        let named = texts.firstIndex { $0.0 == name }.map { $0 + 1 }
        return (full, named)
    }

    static func find(_ name: String, _ value: String) -> (full: Int?, name: Int?) {
        Array(name.utf8).withUnsafeBytes { name in
            Array(value.utf8).withUnsafeBytes { value in HPACKStaticTable.view.find(name: name, value: value) }
        }
    }

    @Test func everyEntryIsFoundAtItsIndex() {
        #expect(HPACKStaticTable.texts.count == HPACKStaticTable.count)
        for (position, text) in HPACKStaticTable.texts.enumerated() {
            let found = Self.find(text.0, text.1)
            // :method GET and :method POST share a name: each is found whole at its own index.
            #expect(found.full == position + 1, "\(text)")
            let entry = HPACKStaticTable.view.entries[position]
            #expect(String(decoding: entry.name, as: UTF8.self) == text.0)
            #expect(String(decoding: entry.value, as: UTF8.self) == text.1)
        }
    }

    @Test(arguments: [
        (":method", "PUT"), (":status", "201"), ("authorization", "bearer x"), (":path", "/3/device/ab"),
        ("apns-topic", "com.example"), ("", ""), ("x", ""), ("access-control-allow-origin", "*"),
        (String(repeating: "n", count: 40), "v"), ("accept-encoding", "gzip, deflate"),
    ])
    func lookupsAgreeWithAScan(name: String, value: String) {
        let found = Self.find(name, value)
        let expected = Self.scan(name, value)
        #expect(found.full == expected.full)
        if expected.full == nil { #expect(found.name == expected.name) }
    }
}
