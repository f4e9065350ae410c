import Foundation

/// A sample as `Peers/prometheus_parse.py` prints it: prometheus_client's parser's reading of an
/// exposition, one line per sample.
public struct PrometheusSample: Decodable, Sendable, CustomStringConvertible {
    public var name: String
    /// The family's type: `counter`, `gauge`, `histogram`, …
    public var type: String
    public var labels: [String: String]
    public var value: Double

    public init(name: String, type: String, labels: [String: String], value: Double) {
        self.name = name
        self.type = type
        self.labels = labels
        self.value = value
    }

    public var description: String { "\(name)\(labels) \(value)" }

    private enum CodingKeys: String, CodingKey { case name, type, labels, value }

    /// The value is a JSON number, or one of the strings `NaN`, `+Inf`, `-Inf` (JSON has no
    /// number for them; the script writes them so).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        type = try container.decode(String.self, forKey: .type)
        labels = try container.decode([String: String].self, forKey: .labels)
        if let number = try? container.decode(Double.self, forKey: .value) {
            value = number
            return
        }
        let text = try container.decode(String.self, forKey: .value)
        switch text {
        case "NaN": value = .nan
        case "+Inf": value = .infinity
        case "-Inf": value = -.infinity
        default:
            throw DecodingError.dataCorruptedError(
                forKey: .value,
                in: container,
                debugDescription: "\(name): \(text) is neither a number nor NaN, +Inf or -Inf"
            )
        }
    }
}

/// `promtool check metrics` (Prometheus's own linter) on an exposition: `nil` when it reads it
/// clean (status 0, nothing said), else what it said.
public func promtoolRemarks(_ exposition: String) throws -> String? {
    let check = try PeerProcess.run(
        "promtool",
        ["check", "metrics"],
        input: Data(exposition.utf8),
        timeout: .seconds(30)
    )
    let said = check.output + check.errors
    return check.status == 0 && said.isEmpty ? nil : "status \(check.status): \(said)"
}

/// An exposition in Prometheus's text format read into its families' types and its samples, for
/// a test to compare samples by name and labels. It reads what Fanout writes (one sample a line,
/// label values quoted with `\\`, `\"` and `\n` escaped); `prometheus_client`'s parser, through
/// `Peers/prometheus_parse.py`, is the independent reader.
public struct PrometheusExposition: Sendable, CustomStringConvertible {
    /// Each family's `# TYPE`, by the family's name.
    public var types: [String: String]
    public var samples: [PrometheusSample]

    /// Reads `text`; `nil` when a line is neither a comment nor a sample.
    public init?(_ text: String) {
        types = [:]
        samples = []
        var pending: [(name: String, labels: [String: String], value: Double)] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            if line.hasPrefix("#") {
                let words = line.split(separator: " ")
                if words.count >= 4, words[1] == "TYPE" { types[String(words[2])] = String(words[3]) }
                continue
            }
            guard let sample = Self.sample(line) else { return nil }
            pending.append(sample)
        }
        samples = pending.map { sample in
            PrometheusSample(
                name: sample.name,
                type: family(of: sample.name),
                labels: sample.labels,
                value: sample.value
            )
        }
    }

    /// The family a sample belongs to: its name, or its name less a histogram's or summary's suffix.
    func family(of name: String) -> String {
        if let type = types[name] { return type }
        for suffix in ["_bucket", "_count", "_sum", "_created"] where name.hasSuffix(suffix) {
            if let type = types[String(name.dropLast(suffix.count))] { return type }
        }
        return "untyped"
    }

    /// The value of the sample called `name` with exactly `labels`; `nil` when there is none.
    public func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        samples.first { $0.name == name && $0.labels == labels }?.value
    }

    public var description: String { samples.map(\.description).joined(separator: "\n") }

    static func sample(_ line: Substring) -> (name: String, labels: [String: String], value: Double)? {
        var rest = line[...]
        let name = rest.prefix { $0 != "{" && $0 != " " }
        rest = rest.dropFirst(name.count)
        var labels: [String: String] = [:]
        if rest.first == "{" {
            rest = rest.dropFirst()
            while let first = rest.first, first != "}" {
                if first == "," || first == " " {
                    rest = rest.dropFirst()
                    continue
                }
                let label = rest.prefix { $0 != "=" }
                rest = rest.dropFirst(label.count)
                guard rest.hasPrefix("=\"") else { return nil }
                rest = rest.dropFirst(2)
                var value = ""
                while let character = rest.first, character != "\"" {
                    rest = rest.dropFirst()
                    if character == "\\", let escaped = rest.first {
                        rest = rest.dropFirst()
                        value.append(escaped == "n" ? "\n" : escaped)
                    } else {
                        value.append(character)
                    }
                }
                guard rest.first == "\"" else { return nil }
                rest = rest.dropFirst()
                labels[String(label)] = value
            }
            guard rest.first == "}" else { return nil }
            rest = rest.dropFirst()
        }
        let fields = rest.split(separator: " ")
        guard !name.isEmpty, let text = fields.first else { return nil }
        let value: Double?
        switch text {
        case "+Inf": value = .infinity
        case "-Inf": value = -.infinity
        case "NaN": value = .nan
        default: value = Double(text)
        }
        guard let value else { return nil }
        return (String(name), labels, value)
    }
}
