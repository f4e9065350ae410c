/// A delay's distribution in brief as the files give it, milliseconds:
///
/// ```
/// {"p50": 0.02, "p99": 0.31, "max": 1.2, "count": 6000}
/// ```
///
/// `summary.json`'s harness delays and the sink's `/stats` `own_delays` are made of it.
public struct DelayFigures: Codable, Sendable, Hashable {
    public var p50: Double
    public var p99: Double
    public var max: Double
    public var count: Int

    public init(p50: Double, p99: Double, max: Double, count: Int) {
        self.p50 = p50
        self.p99 = p99
        self.max = max
        self.count = count
    }

    public init(_ delay: DelayPercentiles) {
        self.init(
            p50: Double(delay.p50) / 1000,
            p99: Double(delay.p99) / 1000,
            max: Double(delay.max) / 1000,
            count: Int(delay.count)
        )
    }
}

extension SinkOwnDelays {
    /// The sink's own delays as the files give them (milliseconds) with each loop's CPU share:
    /// `summary.json`'s `harness.sink` and the sink's `/stats` `own_delays`.
    public struct Figures: Codable, Sendable, Hashable {
        public var lateness: DelayFigures
        public var fromSend: DelayFigures
        public var injected: DelayFigures
        public var loopLag: DelayFigures
        /// Each loop's CPU time over the run ÷ the run's length (1 = a whole core).
        public var loopUtilisation: [Double]

        public init(
            lateness: DelayFigures,
            fromSend: DelayFigures,
            injected: DelayFigures,
            loopLag: DelayFigures,
            loopUtilisation: [Double]
        ) {
            self.lateness = lateness
            self.fromSend = fromSend
            self.injected = injected
            self.loopLag = loopLag
            self.loopUtilisation = loopUtilisation
        }

        enum CodingKeys: String, CodingKey {
            case lateness = "lateness_ms"
            case fromSend = "from_send_ms"
            case injected = "injected_ms"
            case loopLag = "loop_lag_ms"
            case loopUtilisation = "loop_utilisation"
        }
    }

    public var figures: Figures {
        Figures(
            lateness: DelayFigures(lateness),
            fromSend: DelayFigures(fromSend),
            injected: DelayFigures(injected),
            loopLag: DelayFigures(loopLag),
            loopUtilisation: loopUtilisation
        )
    }
}

/// An optional that a document writes as `null` when it is `nil` (Swift's coders leave the key
/// out), and reads as `nil` when the key is `null` or missing (a field newer than the file):
///
/// ```
/// @Nullable var reconciled: Bool?    // "reconciled": null
/// ```
@propertyWrapper
public struct Nullable<Value: Codable & Sendable>: Codable, Sendable {
    public var wrappedValue: Value?

    public init(wrappedValue: Value?) { self.wrappedValue = wrappedValue }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        wrappedValue = container.decodeNil() ? nil : try container.decode(Value.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue { try container.encode(wrappedValue) } else { try container.encodeNil() }
    }
}

extension Nullable: Equatable where Value: Equatable {}
extension Nullable: Hashable where Value: Hashable {}

extension KeyedDecodingContainer {
    /// A `@Nullable` field whose key is missing reads as `nil`.
    public func decode<Value>(_ type: Nullable<Value>.Type, forKey key: Key) throws -> Nullable<Value> {
        try decodeIfPresent(type, forKey: key) ?? Nullable(wrappedValue: nil)
    }
}

extension DelayFigures {
    /// Several processes' figures of one delay as one, when only their figures were kept (not
    /// their histograms): each percentile the largest, the counts added. What `fanout merge`
    /// says of shards' and sinks' own delays.
    public static func largest(_ delays: [DelayFigures]) -> DelayFigures {
        DelayFigures(
            p50: delays.map(\.p50).max() ?? 0,
            p99: delays.map(\.p99).max() ?? 0,
            max: delays.map(\.max).max() ?? 0,
            count: delays.map(\.count).reduce(0, +)
        )
    }
}
