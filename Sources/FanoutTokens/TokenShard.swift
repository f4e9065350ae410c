/// One of N disjoint parts of a token set, so several machines can split one fan-out.
///
/// The valid tokens of a set are numbered from 0 in order (their `sequence`); shard `i` of `N`
/// takes those whose number modulo N is `i - 1`. Every machine reading the same set therefore
/// agrees, the shards are disjoint, together they are exactly the set, and their sizes differ
/// by at most one.
public struct TokenShard: Sendable, Hashable, CustomStringConvertible {
    /// Which shard, from 1.
    public let index: Int
    /// How many shards.
    public let count: Int

    /// Shard `index` (1...count) of `count`.
    public init(_ index: Int, of count: Int) throws(TokenShardError) {
        guard count >= 1 else { throw TokenShardError("the shard count must be at least 1, not \(count)") }
        guard (1...count).contains(index) else {
            throw TokenShardError("shards are numbered from 1 to \(count), not \(index)")
        }
        self.index = index
        self.count = count
    }

    /// Parses `i/N`, as in `--shard 2/8`.
    public init(parsing text: String) throws(TokenShardError) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]) else {
            throw TokenShardError("a shard is written i/N, as in 2/8 for the second of eight; got \"\(text)\"")
        }
        try self.init(index, of: count)
    }

    /// The whole set: shard 1 of 1.
    public static let all = try! TokenShard(1, of: 1)

    /// Whether the token numbered `sequence` belongs to this shard.
    @inline(__always)
    public func contains(_ sequence: UInt64) -> Bool {
        count == 1 || sequence % UInt64(count) == UInt64(index - 1)
    }

    public var description: String { "\(index)/\(count)" }
}

/// A shard that cannot be.
public struct TokenShardError: Error, Sendable, Hashable, CustomStringConvertible {
    public var description: String

    init(_ description: String) {
        self.description = description
    }
}
