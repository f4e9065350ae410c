import FanoutPayload
import NIOCore
import Testing

@Suite struct EncoderTests {
    @Test func sequenceNumberAsTextAndAsInteger() throws {
        let t = try template(#"{"aps":{"badge":"{{seq:int}}"},"id":"n-{{seq}}","max":"{{seq:number}}"}"#)
        #expect(try render(t, sequence: 0) == #"{"aps":{"badge":0},"id":"n-0","max":0}"#)
        #expect(
            try render(t, sequence: UInt64.max)
                == #"{"aps":{"badge":18446744073709551615},"id":"n-18446744073709551615","max":18446744073709551615}"#
        )
    }

    @Test func fieldsByNumberAndByName() throws {
        let t = try template(
            #"{"aps":{"alert":"Hi {{field.name}}, {{field.2}} new","badge":"{{field.1:int}}"}}"#,
            options: .init(fieldNames: ["count", "name"])
        )
        #expect(try render(t, fields: ["3", "Zoë"]) == #"{"aps":{"alert":"Hi Zoë, Zoë new","badge":3}}"#)
    }

    @Test func wholeValuePlaceholdersOfEveryType() throws {
        let t = try template(
            #"{"aps":{},"s":"{{field.1:string}}","i":"{{field.2:int}}","n":"{{field.3:number}}","b":"{{field.4:bool}}"}"#
        )
        #expect(
            try render(t, fields: ["x", "-12", "1.5e-3", "true"]) == #"{"aps":{},"s":"x","i":-12,"n":1.5e-3,"b":true}"#
        )
    }

    @Test(arguments: [
        ("int", "1.5"), ("int", "01"), ("int", ""), ("int", "-"), ("int", "+1"), ("int", " 1"), ("int", "0x10"),
        ("number", "1."), ("number", ".5"), ("number", "1e"), ("number", "NaN"), ("number", "Infinity"),
        ("number", "--1"), ("bool", "True"), ("bool", "1"), ("bool", "yes"), ("bool", ""),
    ])
    func invalidFieldValueSkipsTheNotification(type: String, value: String) throws {
        let t = try template(#"{"aps":{},"v":"{{field.1:\#(type)}}"}"#)
        #expect(throws: PayloadEncodingError.invalidValue(.field(1), Placeholder.ValueType(rawValue: type)!)) {
            try render(t, fields: [value])
        }
    }

    @Test(arguments: ["0", "-0", "123", "-9223372036854775808", "99999999999999999999999"])
    func validIntegersAreCopiedAsWritten(value: String) throws {
        let t = try template(#"{"aps":{},"v":"{{field.1:int}}"}"#)
        #expect(try render(t, fields: [value]) == #"{"aps":{},"v":\#(value)}"#)
    }

    @Test(arguments: ["0", "-0", "3", "9223372036854775807"])
    func badgesAPNsTakesAreSent(value: String) throws {
        let t = try template(#"{"aps":{"badge":"{{field.1:int}}"}}"#)
        #expect(try render(t, fields: [value]) == #"{"aps":{"badge":\#(value)}}"#)
    }

    /// APNs' integer keys count or date from 1970: a value below 0 or past 64 bits is refused
    /// at render time, naming the field, as a literal is at load time.
    @Test(arguments: ["-3", "-9223372036854775808", "9223372036854775808", "99999999999999999999999"])
    func badgesAPNsRefusesAreRefused(value: String) throws {
        for key in ["badge", "stale-date", "timestamp", "dismissal-date"] {
            let t = try template(#"{"aps":{"\#(key)":"{{field.1:int}}"}}"#)
            let error = #expect(throws: PayloadEncodingError.self) { try render(t, fields: [value]) }
            guard case .outOfRange(.field(1), .int, _) = error else {
                Issue.record("\(key) = \(value): \(String(describing: error))")
                continue
            }
            #expect(error?.description.hasPrefix("the value of {{field.1}} is an int outside 0…2^63−1") == true)
        }
    }

    /// A number a JSON reader would take for infinity is refused; the largest double is not.
    @Test(arguments: ["1e999", "-1e309", "1.8e308", "179769313486231590000000000000000e276", "0.0000000001e320"])
    func numbersPastADoubleAreRefused(value: String) throws {
        let t = try template(#"{"aps":{},"n":"{{field.1:number}}"}"#)
        let error = #expect(throws: PayloadEncodingError.self) { try render(t, fields: [value]) }
        guard case .outOfRange(.field(1), .number, _) = error else {
            Issue.record("\(value): \(String(describing: error))")
            return
        }
        #expect(
            error?.description
                == "the value of {{field.1}} is a number outside a 64-bit float's range (it would be read as infinity)"
        )
    }

    @Test(arguments: [
        "1.7976931348623157e308", "-1.7976931348623157e308", "179769313486231580000000000000000e276", "1e308", "1e-999",
        "0e99999", "0.000", "123.456e-7",
        "99999999999999999999999", "0.00000000001e318",
    ])
    func finiteNumbersAreCopiedAsWritten(value: String) throws {
        let t = try template(#"{"aps":{},"n":"{{field.1:number}}"}"#)
        #expect(try render(t, fields: [value]) == #"{"aps":{},"n":\#(value)}"#)
    }

    @Test func missingFieldIsReported() throws {
        let t = try template(#"{"aps":{"alert":"{{field.3}}"}}"#)
        #expect(throws: PayloadEncodingError.missingField(3)) { try render(t, fields: ["a", "b"]) }
        #expect(throws: PayloadEncodingError.missingField(3)) { try render(t) }
        #expect(try render(t, fields: ["a", "b", ""]) == #"{"aps":{"alert":""}}"#)
    }

    @Test func emptyFieldsAreFieldsToo() throws {
        let t = try template(#"{"aps":{"alert":"[{{field.1}}][{{field.2}}]"}}"#)
        #expect(try render(t, fields: ["", ""]) == #"{"aps":{"alert":"[][]"}}"#)
    }

    @Test func fieldValuesAreEscaped() throws {
        let t = try template(#"{"aps":{"alert":"{{field.1}}"}}"#)
        #expect(try render(t, fields: ["say \"hi\" \\ \n"]) == #"{"aps":{"alert":"say \"hi\" \\ \n"}}"#)
    }

    @Test func invalidUTF8InAFieldSkipsTheNotification() throws {
        let t = try template(#"{"aps":{"alert":"{{field.1}}"}}"#)
        let encoder = PayloadEncoder(template: t)
        var buffer = ByteBuffer()
        let token = Array(sampleToken.utf8)
        let fields: [UInt8] = [UInt8(ascii: "\t"), 0x41, 0xC3]  // "A" then a truncated two-byte sequence
        _ = token.withUnsafeBytes { token in
            fields.withUnsafeBytes { fields in
                #expect(throws: PayloadEncodingError.invalidUTF8(.field(1))) {
                    try encoder.encode(NotificationInput(token: token, sequence: 0, fields: fields), into: &buffer)
                }
            }
        }
        #expect(buffer.readableBytes == 0)
    }

    @Test func failedEncodingLeavesTheBufferAsItWas() throws {
        let t = try template(#"{"aps":{"badge":"{{field.1:int}}"}}"#)
        var buffer = ByteBuffer(string: "kept")
        #expect(throws: PayloadEncodingError.self) {
            try PayloadEncoder(template: t).encode(token: sampleToken, fields: ["x"], into: &buffer)
        }
        #expect(String(buffer: buffer) == "kept")
    }

    @Test func reusedBufferKeepsItsStorage() throws {
        let t = try PayloadTemplate(
            contentsOf: fixturePath("poll-personalised.json"),
            options: .init(fieldNames: ["badge"])
        )
        let encoder = PayloadEncoder(template: t)
        var buffer = ByteBufferAllocator().buffer(capacity: 4096)
        _ = try encoder.encode(token: sampleToken, fields: ["1"], into: &buffer)
        let capacity = buffer.capacity
        for badge in 0..<100 {
            buffer.clear()
            _ = try encoder.encode(token: sampleToken, fields: ["\(badge)"], into: &buffer)
        }
        #expect(buffer.capacity == capacity)
    }

    @Test func tokensOfAnyLengthAreSpliced() throws {
        let t = try template(#"{"aps":{},"d":"{{token}}"}"#)
        for length in [2, 7, 8, 9, 64, 100, 200, 400] {
            let token = String(repeating: "ab", count: length / 2) + (length % 2 == 1 ? "c" : "")
            #expect(try render(t, token: token) == #"{"aps":{},"d":"\#(token)"}"#)
        }
    }
}

@Suite struct EncoderEntryPointTests {
    let poll: PayloadTemplate = try! PayloadTemplate(
        contentsOf: fixturePath("poll-personalised.json"),
        options: .init(fieldNames: ["badge"])
    )

    func withInput<Result>(
        token: String,
        fields: String,
        validated: Bool,
        _ body: (NotificationInput) throws -> Result
    ) rethrows -> Result {
        let token = Array(token.utf8)
        let fields = Array(fields.utf8)
        return try token.withUnsafeBytes { token in
            try fields.withUnsafeBytes { fields in
                try body(NotificationInput(token: token, sequence: 9, fields: fields, tokenIsValidatedHex: validated))
            }
        }
    }

    @Test func rawMemoryAndByteBufferGiveTheSameBytes() throws {
        let encoder = PayloadEncoder(template: poll)
        try withInput(token: sampleToken, fields: "\t5", validated: false) { input in
            var buffer = ByteBuffer()
            let size = try encoder.encode(input, into: &buffer)
            let memory = UnsafeMutableRawBufferPointer.allocate(
                byteCount: encoder.requiredCapacity(for: input),
                alignment: 1
            )
            defer { memory.deallocate() }
            let rawSize = try encoder.encode(input, into: memory)
            #expect(rawSize == size)
            #expect(Array(memory[0..<rawSize]) == Array(buffer.readableBytesView))
        }
    }

    @Test func requiredCapacityCoversTheWorstCase() throws {
        let t = try template(#"{"aps":{"alert":"{{field.1}}{{field.1}}"},"n":"{{seq:int}}"}"#)
        let encoder = PayloadEncoder(template: t, oversizePolicy: .send)
        // Every byte of the field escapes to six, in two slots, plus a 20-digit number.
        try withInput(token: "ab", fields: "\t" + String(repeating: "\u{1}", count: 100), validated: false) { input in
            var buffer = ByteBuffer()
            let size = try encoder.encode(input, into: &buffer)
            #expect(size <= encoder.requiredCapacity(for: input))
            #expect(size == t.staticSize + 2 * 600 + 1)
        }
    }

    @Test func validatedTokensAreCopiedAsTheyAre() throws {
        let encoder = PayloadEncoder(template: poll)
        let checked = try withInput(token: sampleToken, fields: "\t5", validated: false) { input in
            var buffer = ByteBuffer()
            _ = try encoder.encode(input, into: &buffer)
            return String(buffer: buffer)
        }
        let validated = try withInput(token: sampleToken, fields: "\t5", validated: true) { input in
            var buffer = ByteBuffer()
            _ = try encoder.encode(input, into: &buffer)
            return String(buffer: buffer)
        }
        #expect(checked == validated)
    }

    @Test func unvalidatedTokensAreCheckedEveryTime() throws {
        let t = try template(#"{"aps":{},"a":"{{token}}","b":"{{token}}"}"#)
        #expect(try render(t, token: #"ab"c\"#) == #"{"aps":{},"a":"ab\"c\\","b":"ab\"c\\"}"#)
        let long = String(repeating: "ab", count: 20) + "\"" + String(repeating: "cd", count: 20)
        let escaped = String(repeating: "ab", count: 20) + "\\\"" + String(repeating: "cd", count: 20)
        #expect(try render(t, token: long) == #"{"aps":{},"a":"\#(escaped)","b":"\#(escaped)"}"#)
    }
}
