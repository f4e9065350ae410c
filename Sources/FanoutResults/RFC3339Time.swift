import FanoutNotation
import Foundation

/// A date as the documents write it: RFC 3339 in UTC to the millisecond (`TimeNotation`), like
/// `"2026-11-22T07:00:00.000Z"`. Read back as a `Date`; a text that is not such a time is an
/// error naming the field (`SummaryDocument.read` says where).
@propertyWrapper
public struct RFC3339Time: Codable, Sendable, Hashable {
    public var wrappedValue: Date

    public init(wrappedValue: Date) {
        self.wrappedValue = wrappedValue
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let date = TimeNotation.parse(text) else {
            throw DecodingError.dataCorruptedError(
                in: container,
                debugDescription: "\(text) is not a time: \(TimeNotation.hint)"
            )
        }
        wrappedValue = date
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(TimeNotation.format(wrappedValue))
    }
}
