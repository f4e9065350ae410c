import FanoutNotation

/// The `name = value` files Fanout reads (the sink's scenario files, `fanout send`'s), one
/// setting a line (LF, CRLF or CR, as `TextLines` reads them):
///
/// ```
///   # a comment line
///   topic = com.example.app
///   priority = 5
/// ```
///
/// Names are the long options without `--`. Problems are said as `FILE:LINE: what`.
public enum SettingsFile {
    public struct Setting: Sendable, Hashable {
        public var name: String
        public var value: String
        /// `FILE:LINE`, for messages about the value.
        public var place: String
    }

    /// The settings of `text`, checked against `known` names; a name outside `repeatable`
    /// may appear once.
    public static func settings(
        in text: String,
        source: String,
        known: [String],
        repeatable: Set<String> = []
    ) throws(SettingsFileError) -> [Setting] {
        var seen: Set<String> = []
        var settings: [Setting] = []
        for rawLine in TextLines(text) {
            let line = String(rawLine.text.trimmingBlanks)
            if line.isEmpty || line.hasPrefix("#") { continue }
            let place = "\(source):\(rawLine.number)"
            guard let equals = line.firstIndex(of: "=") else {
                throw SettingsFileError("\(place): expected NAME = VALUE, got \(TextLines.quoted(line))")
            }
            let name = String(line[..<equals].trimmingBlanks)
            let value = String(line[line.index(after: equals)...].trimmingBlanks)
            guard known.contains(name) else {
                throw SettingsFileError(
                    "\(place): \(name) is not a scenario setting; the settings are \(known.joined(separator: ", "))"
                )
            }
            guard repeatable.contains(name) || seen.insert(name).inserted else {
                throw SettingsFileError("\(place): \(name) is set twice")
            }
            guard !value.isEmpty else { throw SettingsFileError("\(place): \(name) has no value") }
            settings.append(Setting(name: name, value: value, place: place))
        }
        return settings
    }
}

public struct SettingsFileError: Error, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
