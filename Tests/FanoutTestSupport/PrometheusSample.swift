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
