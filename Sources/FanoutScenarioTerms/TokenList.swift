import FanoutTokens

/// A set of device tokens, held as 64-bit hashes of their lowercase hex so that a lookup needs
/// no allocation (a false match needs a 64-bit collision).
public struct TokenList: Sendable {
    @usableFromInline
    var hashes: Set<UInt64> = []

    /// An empty set.
    public init() {}

    /// Every token in a text file, in the lines `fanout send` reads (`TokenListFile`).
    public init(contentsOf path: String) throws(SinkScenarioError) {
        do {
            for token in try TokenListFile.tokens(at: path) { insert(token) }
        } catch {
            throw SinkScenarioError(
                error.line == nil ? "cannot read the token list \(path): \(error.message)" : error.description
            )
        }
    }

    /// Adds `token` (its hex, either case).
    public mutating func insert(_ token: String) {
        let hash = Array(token.utf8).withUnsafeBytes { Self.hash($0) }
        hashes.insert(hash)
    }

    /// Tokens held.
    public var count: Int { hashes.count }

    /// Whether `token` (its hex, either case) is in the list.
    @inlinable
    package func contains(_ token: UnsafeRawBufferPointer) -> Bool {
        !hashes.isEmpty && hashes.contains(Self.hash(token))
    }

    /// Whether the list holds no token (asked per request before a lookup).
    @inlinable
    package var isEmpty: Bool { hashes.isEmpty }

    /// Whether the token whose `hash(_:)` is `hash` is in the list.
    @inlinable
    package func contains(hash: UInt64) -> Bool { hashes.contains(hash) }

    /// FNV-1a over the lowercased hex digits: how the sink, its fleet and its instrument know a
    /// token (worked out per request, so inlinable).
    @inlinable
    package static func hash(_ token: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in token {
            hash = (hash ^ UInt64(byte | 0x20)) &* 0x0000_0100_0000_01B3
        }
        return hash
    }
}
