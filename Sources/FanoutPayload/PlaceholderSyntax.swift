/// Reads the `{{…}}` placeholders out of a template string (see `Placeholder` for the syntax).
struct PlaceholderSyntax {
    /// What a template string turned out to be.
    enum Parsed {
        /// Text, possibly with placeholders in it.
        case text(TemplateText)
        /// A whole value of the given type (`"{{field.1:int}}"`).
        case value(Placeholder, Placeholder.ValueType)
    }

    let fieldNames: [String]

    /// Parses `text`; `reportOffset` maps a byte offset within the text to one in the file,
    /// for error locations.
    func parse(
        _ text: String,
        reportOffset: (Int) -> Int,
        source: SourceText
    ) throws(PayloadTemplateError) -> Parsed {
        let bytes = Array(text.utf8)
        var parts: [TemplateText.Part] = []
        var literal: [UInt8] = []
        var index = 0
        var typed: (Placeholder, Placeholder.ValueType)?

        func flushLiteral() {
            if !literal.isEmpty {
                parts.append(.text(String(decoding: literal, as: UTF8.self)))
                literal.removeAll(keepingCapacity: true)
            }
        }

        while index < bytes.count {
            guard bytes[index] == UInt8(ascii: "{"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "{")
            else {
                literal.append(bytes[index])
                index += 1
                continue
            }
            let opening = index
            guard let closing = findClosing(bytes, from: index + 2) else {
                throw PayloadTemplateError(
                    .invalidPlaceholder,
                    "unterminated placeholder: '{{' without '}}'; write {{open}} for literal braces",
                    at: source.location(of: reportOffset(opening))
                )
            }
            let inside = String(decoding: bytes[(index + 2)..<closing], as: UTF8.self)
            index = closing + 2
            let (name, type) = split(inside)
            if name == "open" {
                if type != nil {
                    throw PayloadTemplateError(
                        .invalidPlaceholder,
                        "{{open}} stands for literal braces and takes no type",
                        at: source.location(of: reportOffset(opening))
                    )
                }
                literal.append(contentsOf: "{{".utf8)
                continue
            }
            let placeholder = try resolve(name, at: source.location(of: reportOffset(opening)))
            if let type {
                let location = source.location(of: reportOffset(opening))
                let whole = opening == 0 && index == bytes.count
                let valueType = try Self.valueType(type, of: placeholder, inside: inside, whole: whole, at: location)
                typed = (placeholder, valueType)
                continue
            }
            flushLiteral()
            parts.append(.placeholder(placeholder))
        }
        if let (placeholder, type) = typed {
            return type == .string ? .text(.placeholder(placeholder)) : .value(placeholder, type)
        }
        flushLiteral()
        return .text(TemplateText(parts))
    }

    /// The type of `{{inside}}` (`name:type`): a known type, one its source can be, and the
    /// whole string (`whole`), since a typed placeholder becomes a whole JSON value.
    private static func valueType(
        _ type: String,
        of placeholder: Placeholder,
        inside: String,
        whole: Bool,
        at location: TemplateLocation
    ) throws(PayloadTemplateError) -> Placeholder.ValueType {
        guard let valueType = Placeholder.ValueType(rawValue: type) else {
            throw PayloadTemplateError(
                .invalidPlaceholder,
                "unknown placeholder type '\(type)' in {{\(inside)}}; the types are "
                    + Placeholder.ValueType.allCases.map(\.rawValue).joined(separator: ", "),
                at: location
            )
        }
        if let mismatch = mismatch(placeholder.source, valueType) {
            throw PayloadTemplateError(.invalidPlaceholder, mismatch, at: location)
        }
        guard whole else {
            throw PayloadTemplateError(
                .invalidPlaceholder,
                "{{\(inside)}} has a type, so it must be the whole string: a typed placeholder "
                    + "becomes a whole JSON value",
                at: location
            )
        }
        return valueType
    }

    /// Why `source` cannot be a value of `type`, or `nil` when it can.
    static func mismatch(_ source: Placeholder.Source, _ type: Placeholder.ValueType) -> String? {
        switch (source, type) {
        case (.token, .int), (.token, .number), (.token, .bool):
            "{{token}} is hex text and cannot be \(type == .int ? "an int" : "a \(type.rawValue)")"
        case (.sequence, .bool):
            "{{seq}} is a number and cannot be a bool"
        default:
            nil
        }
    }

    private func findClosing(_ bytes: [UInt8], from start: Int) -> Int? {
        var index = start
        while index + 1 < bytes.count {
            if bytes[index] == UInt8(ascii: "}") && bytes[index + 1] == UInt8(ascii: "}") { return index }
            index += 1
        }
        return nil
    }

    private func split(_ inside: String) -> (name: String, type: String?) {
        let trimmed = inside.trimmingSpaces
        guard let colon = trimmed.firstIndex(of: ":") else { return (String(trimmed), nil) }
        return (
            String(trimmed[..<colon].trimmingSpaces),
            String(trimmed[trimmed.index(after: colon)...].trimmingSpaces)
        )
    }

    private func resolve(_ name: String, at location: TemplateLocation) throws(PayloadTemplateError) -> Placeholder {
        switch name {
        case "token": return .token
        case "seq": return .sequence
        default: break
        }
        if name.hasPrefix("field.") {
            let key = name.dropFirst("field.".count)
            if let number = Int(key), number >= 1 { return .field(number) }
            if let position = fieldNames.firstIndex(of: String(key)) { return .field(position + 1) }
            let named =
                fieldNames.isEmpty
                ? "no field names were given"
                : "the named fields are " + fieldNames.map { "field.\($0)" }.joined(separator: ", ")
            throw PayloadTemplateError(
                .invalidPlaceholder,
                "unknown field '\(key)' in {{\(name)}}: fields are numbered from 1 (field.1) and \(named)",
                at: location
            )
        }
        throw PayloadTemplateError(
            .invalidPlaceholder,
            "unknown placeholder {{\(name)}}; known are {{token}}, {{seq}}, {{field.N}}, {{field.NAME}} "
                + "and {{open}} for literal braces",
            at: location
        )
    }
}

extension StringProtocol {
    fileprivate var trimmingSpaces: Substring {
        var text = self[...]
        while text.first == " " { text = text.dropFirst() }
        while text.last == " " { text = text.dropLast() }
        return Substring(text)
    }
}
