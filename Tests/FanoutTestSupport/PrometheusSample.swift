import Foundation

/// A sample as `Peers/prometheus_parse.py` prints it: prometheus_client's parser's reading of an
/// exposition, one line per sample.
public struct PrometheusSample: Decodable, Sendable, CustomStringConvertible {
    public var name: String
    /// The family's type: `counter`, `gauge`, `histogram`, …
    public var type: String
    public var labels: [String: String]
    public var value: Double

    public var description: String { "\(name)\(labels) \(value)" }
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
