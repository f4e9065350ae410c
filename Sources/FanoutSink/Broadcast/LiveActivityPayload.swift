/// Checks that a payload is a Live Activity's (docs/apns.md, "Live Activity payloads"): its
/// `aps` holds `event` (start, update or end) and a numeric `timestamp`; an update and a start
/// hold a `content-state` object; a start also `attributes-type` (a string) and `attributes`
/// (an object). Runs on a payload `PayloadSyntax` already found to be one JSON object, over its
/// bytes in place: no allocation.
///
/// ```
///   {"aps":{"timestamp":1732000000,"event":"update","content-state":{"score":"2-1"}}}
///           └ number ┘             └ start|update|end ┘ └ object (start, update) ┘
/// ```
enum LiveActivityPayload {
    /// What is wrong with a payload, for the summary and tests.
    enum Problem: Equatable {
        case noAPS, noEvent, unknownEvent, noTimestamp, noContentState, noAttributes
    }

    enum Event: Equatable { case start, update, end }

    /// The first problem found, or `nil` for a Live Activity payload.
    static func problem(in body: UnsafeRawBufferPointer) -> Problem? {
        let scanner = Scanner(bytes: body)
        guard let aps = scanner.member(named: "aps", ofObjectAt: scanner.firstNonSpace()),
            body[aps] == UInt8(ascii: "{")
        else { return .noAPS }
        var event: Event?
        var hasEventKey = false
        var hasTimestamp = false
        var hasContentState = false
        var hasAttributesType = false
        var hasAttributes = false
        scanner.forEachMember(ofObjectAt: aps) { key, value in
            let first = body[value]
            if same(key, "event") {
                hasEventKey = true
                if same(key: "start", quotedAt: value, in: body) {
                    event = .start
                } else if same(key: "update", quotedAt: value, in: body) {
                    event = .update
                } else if same(key: "end", quotedAt: value, in: body) {
                    event = .end
                }
            } else if same(key, "timestamp") {
                hasTimestamp = first == UInt8(ascii: "-") || (first >= UInt8(ascii: "0") && first <= UInt8(ascii: "9"))
            } else if same(key, "content-state") {
                hasContentState = first == UInt8(ascii: "{")
            } else if same(key, "attributes-type") {
                hasAttributesType = first == UInt8(ascii: "\"")
            } else if same(key, "attributes") {
                hasAttributes = first == UInt8(ascii: "{")
            }
        }
        guard hasEventKey else { return .noEvent }
        guard let event else { return .unknownEvent }
        guard hasTimestamp else { return .noTimestamp }
        if event != .end && !hasContentState { return .noContentState }
        if event == .start && !(hasAttributesType && hasAttributes) { return .noAttributes }
        return nil
    }

    /// The payload's `aps.timestamp` when it is a number (a fraction dropped), for the card's
    /// `timestamp-backwards`; `nil` otherwise. In place, no allocation.
    static func timestamp(in body: UnsafeRawBufferPointer) -> Int64? {
        let scanner = Scanner(bytes: body)
        guard let aps = scanner.member(named: "aps", ofObjectAt: scanner.firstNonSpace()),
            let value = scanner.member(named: "timestamp", ofObjectAt: aps)
        else { return nil }
        var index = value
        let negative = body[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        var number: Int64 = 0
        var digits = 0
        while index < body.count, body[index] >= UInt8(ascii: "0"), body[index] <= UInt8(ascii: "9"), digits < 18 {
            number = number * 10 + Int64(body[index] - UInt8(ascii: "0"))
            index += 1
            digits += 1
        }
        guard digits > 0 else { return nil }
        return negative ? -number : number
    }

    /// Whether the key's bytes (between its quotes) are `text`.
    @inline(__always)
    private static func same(_ key: UnsafeRawBufferPointer, _ text: StaticString) -> Bool {
        APNsRequestCheck.sameBytes(key, text)
    }

    /// Whether the value at `index` is the string `"key"`.
    private static func same(key text: StaticString, quotedAt index: Int, in body: UnsafeRawBufferPointer) -> Bool {
        let count = text.utf8CodeUnitCount
        guard body[index] == UInt8(ascii: "\""), index + count + 1 < body.count,
            body[index + count + 1] == UInt8(ascii: "\"")
        else { return false }
        return APNsRequestCheck.sameBytes(
            UnsafeRawBufferPointer(rebasing: body[(index + 1)..<(index + 1 + count)]),
            text
        )
    }

    /// Walks valid JSON: skips values, visits an object's members.
    private struct Scanner {
        let bytes: UnsafeRawBufferPointer

        func firstNonSpace(from start: Int = 0) -> Int {
            var index = start
            while index < bytes.count, Self.isSpace(bytes[index]) { index += 1 }
            return index
        }

        static func isSpace(_ byte: UInt8) -> Bool {
            byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
        }

        /// The index just past the string starting at `index` (its opening quote).
        func endOfString(at index: Int) -> Int {
            var cursor = index + 1
            while cursor < bytes.count {
                switch bytes[cursor] {
                case UInt8(ascii: "\\"): cursor += 2
                case UInt8(ascii: "\""): return cursor + 1
                default: cursor += 1
                }
            }
            return cursor
        }

        /// The index just past the value starting at `index`.
        func endOfValue(at index: Int) -> Int {
            guard index < bytes.count else { return index }
            switch bytes[index] {
            case UInt8(ascii: "\""):
                return endOfString(at: index)
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                var depth = 0
                var cursor = index
                while cursor < bytes.count {
                    switch bytes[cursor] {
                    case UInt8(ascii: "\""):
                        cursor = endOfString(at: cursor)
                        continue
                    case UInt8(ascii: "{"), UInt8(ascii: "["):
                        depth += 1
                    case UInt8(ascii: "}"), UInt8(ascii: "]"):
                        depth -= 1
                        if depth == 0 { return cursor + 1 }
                    default: break
                    }
                    cursor += 1
                }
                return cursor
            default:
                var cursor = index
                while cursor < bytes.count, !Self.isDelimiter(bytes[cursor]) { cursor += 1 }
                return cursor
            }
        }

        static func isDelimiter(_ byte: UInt8) -> Bool {
            byte == UInt8(ascii: ",") || byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]") || isSpace(byte)
        }

        /// Calls `body` with each member's key bytes (unquoted) and its value's first index.
        func forEachMember(ofObjectAt start: Int, _ body: (UnsafeRawBufferPointer, Int) -> Void) {
            guard start < bytes.count, bytes[start] == UInt8(ascii: "{") else { return }
            var cursor = firstNonSpace(from: start + 1)
            while cursor < bytes.count, bytes[cursor] == UInt8(ascii: "\"") {
                let keyEnd = endOfString(at: cursor)
                let key = UnsafeRawBufferPointer(rebasing: bytes[(cursor + 1)..<max(cursor + 1, keyEnd - 1)])
                cursor = firstNonSpace(from: keyEnd)
                guard cursor < bytes.count, bytes[cursor] == UInt8(ascii: ":") else { return }
                let value = firstNonSpace(from: cursor + 1)
                guard value < bytes.count else { return }
                body(key, value)
                cursor = firstNonSpace(from: endOfValue(at: value))
                guard cursor < bytes.count, bytes[cursor] == UInt8(ascii: ",") else { return }
                cursor = firstNonSpace(from: cursor + 1)
            }
        }

        /// The index of the value of member `name` of the object at `start`.
        func member(named name: StaticString, ofObjectAt start: Int) -> Int? {
            var found: Int?
            forEachMember(ofObjectAt: start) { key, value in
                if found == nil && APNsRequestCheck.sameBytes(key, name) { found = value }
            }
            return found
        }
    }
}
