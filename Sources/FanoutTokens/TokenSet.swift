/// A token set as a run reads it: where the tokens come from, and how they are read (shard,
/// invalid lines, batches).
public struct TokenSet: Sendable, Hashable, CustomStringConvertible {
    public var source: TokenSource
    public var reader: TokenReaderConfiguration

    public init(_ source: TokenSource, reader: TokenReaderConfiguration = TokenReaderConfiguration()) {
        self.source = source
        self.reader = reader
    }

    /// Where the tokens come from, for the results: `file: tokens.txt, shard 2/4`.
    public var description: String {
        var text: String
        switch source {
        case .file(let path): text = "file: \(path)"
        case .standardInput: text = "file: -"
        case .generated(let generator): text = "generated: \(generator.count), seed \(generator.seed)"
        case .channels(let rounds): text = "channels: \(rounds.channels.count) × \(rounds.rounds) updates"
        }
        if reader.shard != .all { text += ", shard \(reader.shard)" }
        return text
    }

    /// How many notifications a run over these tokens makes, when that is known ahead: the
    /// generated count, or fewer if the run's schedule (`planned` notifications) ends first.
    public func expectedCount(planned: UInt64?) -> UInt64? {
        var known: UInt64?
        if case .generated(let generator) = source, reader.shard == .all { known = generator.count }
        if case .channels(let rounds) = source, reader.shard == .all { known = rounds.count }
        guard let planned else { return known }
        return known.map { min($0, planned) } ?? planned
    }
}
