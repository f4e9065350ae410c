import FanoutPayload
import Testing

/// Every kind of bad template gets an error that names the place (line and column) and says
/// what was expected there.
@Suite struct TemplateErrorTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let json: String
        let code: PayloadTemplateError.Code
        let line: Int
        let column: Int
        let says: String
        var testDescription: String { says }
    }

    static let cases: [Case] = [
        // Malformed JSON
        Case(json: "", code: .malformedJSON, line: 1, column: 1, says: "the file is empty"),
        Case(
            json: "{\"aps\":{}",
            code: .malformedJSON,
            line: 1,
            column: 10,
            says: "expected ',' or '}' in the object, found end of file"
        ),
        Case(json: "{\"aps\":{},}", code: .malformedJSON, line: 1, column: 11, says: "trailing comma before '}'"),
        Case(json: "{\"aps\":[1]}", code: .invalidPayload, line: 1, column: 8, says: "aps must be an object"),
        Case(
            json: "{\"aps\":{}, \"x\":[1,]}",
            code: .malformedJSON,
            line: 1,
            column: 19,
            says: "trailing comma before ']'"
        ),
        Case(
            json: "{\"aps\":{}}\n x",
            code: .malformedJSON,
            line: 2,
            column: 2,
            says: "unexpected 'x' after the JSON value"
        ),
        Case(
            json: "{\n  \"aps\": {\n    \"badge\": 01\n  }\n}",
            code: .malformedJSON,
            line: 3,
            column: 14,
            says: "leading zeros"
        ),
        Case(
            json: "{\"aps\":{\"badge\":1.}}",
            code: .malformedJSON,
            line: 1,
            column: 19,
            says: "expected a digit after '.'"
        ),
        Case(
            json: "{\"aps\":{\"badge\":-}}",
            code: .malformedJSON,
            line: 1,
            column: 18,
            says: "expected a digit after '-'"
        ),
        Case(json: "{\"aps\":{\"badge\":tru}}", code: .malformedJSON, line: 1, column: 17, says: "did you mean true?"),
        Case(
            json: "{\"aps\":{\"alert\":'x'}}",
            code: .malformedJSON,
            line: 1,
            column: 17,
            says: "expected a JSON value, found '''"
        ),
        Case(
            json: "{aps:{}}",
            code: .malformedJSON,
            line: 1,
            column: 2,
            says: "expected an object key in double quotes"
        ),
        Case(
            json: "{\"aps\" {}}",
            code: .malformedJSON,
            line: 1,
            column: 8,
            says: "expected ':' after the key \"aps\""
        ),
        Case(
            json: "{\"aps\":{\"alert\":\"abc}}",
            code: .malformedJSON,
            line: 1,
            column: 23,
            says: "unterminated string"
        ),
        Case(
            json: "{\"aps\":{\"alert\":\"a\tb\"}}",
            code: .malformedJSON,
            line: 1,
            column: 19,
            says: "control character U+0009"
        ),
        Case(
            json: "{\"aps\":{\"alert\":\"a\\qb\"}}",
            code: .malformedJSON,
            line: 1,
            column: 19,
            says: "invalid escape '\\q'"
        ),
        Case(
            json: "{\"aps\":{\"alert\":\"\\u12G4\"}}",
            code: .malformedJSON,
            line: 1,
            column: 18,
            says: "four hex digits"
        ),
        Case(
            json: "{\"aps\":{\"alert\":\"\\uD800\"}}",
            code: .malformedJSON,
            line: 1,
            column: 18,
            says: "lone surrogate \\uD800"
        ),
        Case(
            json: "{\"aps\":{\"alert\":\"\\uDC00\"}}",
            code: .malformedJSON,
            line: 1,
            column: 18,
            says: "lone low surrogate"
        ),
        Case(
            json: "{\"aps\":{},\"aps\":{}}",
            code: .malformedJSON,
            line: 1,
            column: 11,
            says: "duplicate key \"aps\" (first at t.json:1:2)"
        ),
        Case(json: "{\"aps\":{},\"n\":1e999}", code: .unrepresentableNumber, line: 1, column: 15, says: "out of range"),
        Case(
            json: String(repeating: "[", count: 100),
            code: .malformedJSON,
            line: 1,
            column: 65,
            says: "nesting deeper than 64"
        ),
        // Not an APNs payload
        Case(json: "[]", code: .invalidPayload, line: 1, column: 1, says: "a notification is a JSON object"),
        Case(json: "{\"alert\":\"hi\"}", code: .invalidPayload, line: 1, column: 1, says: "has no \"aps\" dictionary"),
        Case(
            json: "{\"aps\":{\"badge\":\"x\"}}",
            code: .invalidPayload,
            line: 1,
            column: 17,
            says: "aps.badge must be an integer, found a string"
        ),
        Case(
            json: "{\"aps\":{\"badge\":-1}}",
            code: .invalidPayload,
            line: 1,
            column: 17,
            says: "aps.badge must be at least 0, found -1"
        ),
        Case(
            json: "{\"aps\":{\"badge\":1.5}}",
            code: .invalidPayload,
            line: 1,
            column: 17,
            says: "aps.badge must be an integer, found a number"
        ),
        Case(
            json: "{\"aps\":{\"alert\":3}}",
            code: .invalidPayload,
            line: 1,
            column: 17,
            says: "aps.alert must be a string or an object"
        ),
        Case(
            json: "{\"aps\":{\"alert\":{\"titel\":\"x\"}}}",
            code: .invalidPayload,
            line: 1,
            column: 18,
            says: "unknown key \"titel\" in aps.alert"
        ),
        Case(
            json: "{\"aps\":{\"alert\":{\"loc-args\":[1]}}}",
            code: .invalidPayload,
            line: 1,
            column: 30,
            says: "aps.alert.loc-args[0] must be a string"
        ),
        Case(
            json: "{\"aps\":{\"sound\":{\"volume\":2}}}",
            code: .invalidPayload,
            line: 1,
            column: 27,
            says: "aps.sound.volume must be from 0.0 to 1.0"
        ),
        Case(
            json: "{\"aps\":{\"content-available\":2}}",
            code: .invalidPayload,
            line: 1,
            column: 29,
            says: "must be the integer 1 (or 0), found 2"
        ),
        Case(
            json: "{\"aps\":{\"mutable-content\":true}}",
            code: .invalidPayload,
            line: 1,
            column: 27,
            says: "found a boolean"
        ),
        Case(
            json: "{\"aps\":{\"interruption-level\":\"urgent\"}}",
            code: .invalidPayload,
            line: 1,
            column: 30,
            says: "must be one of \"passive\""
        ),
        Case(
            json: "{\"aps\":{\"relevance-score\":1.5}}",
            code: .invalidPayload,
            line: 1,
            column: 27,
            says: "from 0.0 to 1.0, found 1.5"
        ),
        Case(
            json: "{\"aps\":{\"event\":\"pause\"}}",
            code: .invalidPayload,
            line: 1,
            column: 17,
            says: "aps.event must be one of"
        ),
        Case(
            json: "{\"aps\":{\"content-state\":[]}}",
            code: .invalidPayload,
            line: 1,
            column: 25,
            says: "aps.content-state must be an object"
        ),
        Case(
            json: "{\"aps\":{\"content-changed\":1}}",
            code: .invalidPayload,
            line: 1,
            column: 27,
            says: "must be true or false"
        ),
        Case(
            json: "{\"aps\":{\"custom\":1}}",
            code: .invalidPayload,
            line: 1,
            column: 9,
            says: "unknown key \"custom\" in aps"
        ),
        Case(
            json: "{\"aps\":{},\"category-actions\":[{\"type\":\"url\"}]}",
            code: .invalidPayload,
            line: 1,
            column: 31,
            says: "category-actions[0] needs a \"name\""
        ),
        Case(
            json: "{\"aps\":{},\"category-actions\":{}}",
            code: .invalidPayload,
            line: 1,
            column: 30,
            says: "category-actions must be an array"
        ),
        Case(
            json: "{\"aps\":{},\"notification-action\":\"x\"}",
            code: .invalidPayload,
            line: 1,
            column: 33,
            says: "notification-action must be an object"
        ),
        // Placeholders
        Case(
            json: "{\"aps\":{\"alert\":\"Hi {{name}}\"}}",
            code: .invalidPlaceholder,
            line: 1,
            column: 21,
            says: "unknown placeholder {{name}}"
        ),
        Case(
            json: "{\"aps\":{\"alert\":\"Hi {{token\"}}",
            code: .invalidPlaceholder,
            line: 1,
            column: 21,
            says: "unterminated placeholder"
        ),
        Case(
            json: "{\"aps\":{\"alert\":\"{{field.0}}\"}}",
            code: .invalidPlaceholder,
            line: 1,
            column: 18,
            says: "unknown field '0'"
        ),
        Case(
            json: "{\"aps\":{\"alert\":\"{{field.who}}\"}}",
            code: .invalidPlaceholder,
            line: 1,
            column: 18,
            says: "no field names were given"
        ),
        Case(
            json: "{\"aps\":{\"alert\":\"{{field.1:date}}\"}}",
            code: .invalidPlaceholder,
            line: 1,
            column: 18,
            says: "unknown placeholder type 'date'"
        ),
        Case(
            json: "{\"aps\":{\"alert\":\"n={{seq:int}}\"}}",
            code: .invalidPlaceholder,
            line: 1,
            column: 20,
            says: "must be the whole string"
        ),
        Case(
            json: "{\"aps\":{\"alert\":\"{{seq:int}}\"}}",
            code: .invalidPayload,
            line: 1,
            column: 17,
            says: "aps.alert is a string, but {{seq:int}} makes a int"
        ),
        Case(
            json: "{\"aps\":{\"badge\":\"{{field.1}}\"}}",
            code: .invalidPayload,
            line: 1,
            column: 17,
            says: "write \"{{field.1:int}}\""
        ),
        Case(
            json: "{\"aps\":{},\"x\":\"{{token:int}}\"}",
            code: .invalidPlaceholder,
            line: 1,
            column: 16,
            says: "{{token}} is hex text and cannot be an int"
        ),
        Case(
            json: "{\"aps\":{},\"x\":\"{{seq:bool}}\"}",
            code: .invalidPlaceholder,
            line: 1,
            column: 16,
            says: "{{seq}} is a number and cannot be a bool"
        ),
        Case(
            json: "{\"aps\":{},\"x\":\"{{open:int}}\"}",
            code: .invalidPlaceholder,
            line: 1,
            column: 16,
            says: "takes no type"
        ),
        // Integers are exact: one past 64 bits would be sent as a rounded double.
        Case(
            json: "{\"aps\":{},\n \"id\": 12345678901234567891}",
            code: .unrepresentableNumber,
            line: 2,
            column: 8,
            says: "the integer 12345678901234567891 is outside −2^63…2^63−1"
        ),
        Case(
            json: "{\"aps\":{},\"id\":-9223372036854775809}",
            code: .unrepresentableNumber,
            line: 1,
            column: 16,
            says: "the integer -9223372036854775809 is outside"
        ),
        Case(
            json: "{\"aps\":{},\"id\":\(String(repeating: "9", count: 5000))}",
            code: .unrepresentableNumber,
            line: 1,
            column: 16,
            says: "the integer 999999999999999999999999… (5000 digits) is outside"
        ),
    ]

    @Test(arguments: cases)
    func badTemplateIsReportedWithPlace(_ bad: Case) {
        let error = loadError(bad.json)
        #expect(error?.code == bad.code, "\(String(describing: error))")
        #expect(
            error?.location == TemplateLocation(file: "t.json", line: bad.line, column: bad.column),
            "\(String(describing: error))"
        )
        #expect(error?.message.contains(bad.says) == true, "\(String(describing: error))")
        #expect(error?.description.hasPrefix("t.json:\(bad.line):\(bad.column): ") == true)
    }

    @Test func columnsCountCharactersNotBytes() {
        let error = loadError("{\"aps\":{\"alert\":\"é€𝄞\", \"badge\":\"x\"}}")
        #expect(error?.location?.column == 32)
    }

    @Test func byteOrderMarkIsSkipped() throws {
        let t = try PayloadTemplate(json: [0xEF, 0xBB, 0xBF] + Array(#"{"aps":{"badge":1}}"#.utf8))
        #expect(try render(t) == #"{"aps":{"badge":1}}"#)
    }

    @Test func unknownAPSKeysPassThroughWhenAllowed() throws {
        let t = try template(#"{"aps":{"new-key":{"a":[1]},"badge":2}}"#, options: .init(allowUnknownAPSKeys: true))
        #expect(try render(t) == #"{"aps":{"badge":2,"new-key":{"a":[1]}}}"#)
    }

    @Test func openWritesLiteralBraces() throws {
        let t = try template(#"{"aps":{"alert":"{{open}}token}} is {{token}}"}}"#)
        #expect(try render(t, token: "ab") == #"{"aps":{"alert":"{{token}} is ab"}}"#)
        #expect(TemplateText([.text("a{{b"), .placeholder(.token)]).description == "a{{open}}b{{token}}")
    }

    @Test func spacesInsideBracesAreIgnored() throws {
        let t = try template(#"{"aps":{"badge":"{{ field.1 : int }}"},"d":"{{ token }}"}"#)
        #expect(try render(t, token: "ab", fields: ["4"]) == #"{"aps":{"badge":4},"d":"ab"}"#)
    }

    @Test func unreadableFileIsReported() {
        do {
            _ = try PayloadTemplate(contentsOf: "/nonexistent/template.json")
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .unreadableFile)
            #expect(error.message == "cannot open /nonexistent/template.json: No such file or directory")
        }
    }

    @Test func fixtureErrorNamesTheFile() {
        do {
            _ = try PayloadTemplate(contentsOf: fixturePath("poll.json"), options: .init(sizeLimit: 100))
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .tooLarge)
            #expect(error.location?.file == fixturePath("poll.json"))
        }
    }
}
