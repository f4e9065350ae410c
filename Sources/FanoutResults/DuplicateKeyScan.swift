import Foundation

/// Finds a key written twice in one JSON object. RFC 8259 leaves such an object's meaning to
/// the reader (§4: "the behavior of software that receives such an object is unpredictable"):
/// Foundation keeps the first `"valid"`, Python the last, so a summary with
/// `"valid": true, "valid": false` passes one reader and fails another. Fanout's readers refuse
/// it instead.
///
/// A scan of the text's structure only: it does not validate what JSONDecoder validates after
/// it (numbers, literals), and it stops quietly at text it cannot follow, leaving the error to
/// the decoder.
enum DuplicateKeyScan {
    /// Where the first repeated key is, as a path (`sink.requests`, `intervals[3].second`);
    /// `nil` when every object's keys are distinct.
    static func firstDuplicate(in data: Data) -> String? {
        var scanner = Scanner(bytes: [UInt8](data))
        do {
            try scanner.value(path: "", depth: 0)
            return nil
        } catch .duplicate(let path) {
            return path
        } catch {
            return nil
        }
    }

    /// Throws `.malformed` naming `path` and the key when `data` writes a key twice in one
    /// object: what every reader of Fanout's documents calls before decoding.
    static func refuse(_ data: Data, at path: String) throws(ResultsError) {
        guard let key = firstDuplicate(in: data) else { return }
        throw ResultsError(
            .malformed,
            "\(path): the key \(key) is written twice in one object: readers disagree on which stands (Foundation keeps the first, Python the last), so the file is refused"
        )
    }

    private enum Stop: Error {
        case duplicate(String)
        /// Text the scan does not follow (malformed, or nested deeper than it goes).
        case unfollowed
    }

    private struct Scanner {
        let bytes: [UInt8]
        var index = 0
        /// Deeper than this the scan stops; no Fanout document nests beyond a dozen levels.
        static let maxDepth = 256

        init(bytes: [UInt8]) { self.bytes = bytes }

        mutating func value(path: String, depth: Int) throws(Stop) {
            guard depth < Self.maxDepth else { throw .unfollowed }
            skipSpace()
            guard index < bytes.count else { throw .unfollowed }
            switch bytes[index] {
            case UInt8(ascii: "{"): try object(path: path, depth: depth)
            case UInt8(ascii: "["): try array(path: path, depth: depth)
            case UInt8(ascii: "\""): _ = try string()
            default:
                // A number or a literal: up to the next delimiter.
                while index < bytes.count, !Self.delimiters.contains(bytes[index]) { index += 1 }
            }
        }

        private static let delimiters: Set<UInt8> = Set(",]} \t\r\n".utf8)

        private mutating func object(path: String, depth: Int) throws(Stop) {
            index += 1
            var keys: Set<String> = []
            skipSpace()
            if peek(UInt8(ascii: "}")) {
                index += 1
                return
            }
            while true {
                skipSpace()
                guard peek(UInt8(ascii: "\"")) else { throw .unfollowed }
                let key = try string()
                let keyPath = path.isEmpty ? key : path + "." + key
                guard keys.insert(key).inserted else { throw .duplicate(keyPath) }
                skipSpace()
                guard peek(UInt8(ascii: ":")) else { throw .unfollowed }
                index += 1
                try value(path: keyPath, depth: depth + 1)
                skipSpace()
                if peek(UInt8(ascii: ",")) {
                    index += 1
                } else if peek(UInt8(ascii: "}")) {
                    index += 1
                    return
                } else {
                    throw .unfollowed
                }
            }
        }

        private mutating func array(path: String, depth: Int) throws(Stop) {
            index += 1
            skipSpace()
            if peek(UInt8(ascii: "]")) {
                index += 1
                return
            }
            var element = 0
            while true {
                try value(path: "\(path)[\(element)]", depth: depth + 1)
                element += 1
                skipSpace()
                if peek(UInt8(ascii: ",")) {
                    index += 1
                } else if peek(UInt8(ascii: "]")) {
                    index += 1
                    return
                } else {
                    throw .unfollowed
                }
            }
        }

        /// A string at `index` (its opening quote), decoded: escapes matter, since `"valid"` and
        /// `"\u0076alid"` are one key.
        private mutating func string() throws(Stop) -> String {
            let start = index
            index += 1
            var escaped = false
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\\"):
                    escaped = true
                    index += 2
                case UInt8(ascii: "\""):
                    index += 1
                    let raw = bytes[start..<index]
                    guard escaped else { return String(decoding: raw.dropFirst().dropLast(), as: UTF8.self) }
                    guard let decoded = try? JSONDecoder().decode(String.self, from: Data(raw)) else {
                        throw .unfollowed
                    }
                    return decoded
                default:
                    index += 1
                }
            }
            throw .unfollowed
        }

        private func peek(_ byte: UInt8) -> Bool { index < bytes.count && bytes[index] == byte }

        private mutating func skipSpace() {
            while index < bytes.count,
                bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09
            {
                index += 1
            }
        }
    }
}
