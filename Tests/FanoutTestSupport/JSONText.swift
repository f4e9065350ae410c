import Foundation

/// Whether the JSON object in `data` holds `null` at `path` (keys, outermost first): the key
/// present with `null`, which a document's optional field cannot tell from an absent key.
public func holdsNull(_ data: Data, at path: [String]) throws -> Bool {
    let decoder = JSONDecoder()
    decoder.userInfo[NullProbe.path] = path
    return try decoder.decode(NullProbe.self, from: data).isNull
}

private struct NullProbe: Decodable {
    static let path = CodingUserInfoKey(rawValue: "FanoutTestSupport.NullProbe.path")!

    var isNull: Bool

    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: any Decoder) throws {
        let path = decoder.userInfo[Self.path] as? [String] ?? []
        guard let last = path.last else {
            isNull = try decoder.singleValueContainer().decodeNil()
            return
        }
        var container = try decoder.container(keyedBy: Key.self)
        for key in path.dropLast() {
            container = try container.nestedContainer(keyedBy: Key.self, forKey: Key(stringValue: key))
        }
        let key = Key(stringValue: last)
        isNull = container.contains(key) ? try container.decodeNil(forKey: key) : false
    }
}

/// The key names of a JSON object, whatever its values: for a test whose subject is the names a
/// document writes, which decoding into the document's type does not show.
public struct JSONKeys: Decodable, Sendable, CustomStringConvertible {
    public var names: Set<String>

    public init(from decoder: any Decoder) throws {
        names = Set(try decoder.container(keyedBy: NullProbe.Key.self).allKeys.map(\.stringValue))
    }

    public var description: String { names.sorted().joined(separator: ", ") }
}
