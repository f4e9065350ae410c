import FanoutAPNs

/// Parses token-file text from memory on the calling thread: the reader's parser without its
/// thread and queues, for tools and for measuring the parser alone.
///
/// ```swift
/// var parser = TokenTextParser()
/// var rest = text[...]
/// while !rest.isEmpty {
///     let used = try parser.parse(rest, into: batch, isLast: true)   // fills the batch
///     … use batch[0..<batch.count] …
///     parser.recycle(batch)
///     rest = rest[used...]
/// }
/// ```
public struct TokenTextParser {
    private var parser: TextTokenParser

    /// Creates a parser; the options mean what they mean for a `TokenStream`.
    public init(
        format: DeviceTokenFormat = .default,
        shard: TokenShard = .all,
        invalidTokens: InvalidTokenPolicy = .fail,
        lines: TokenLines = .oneService,
        source: String = "<memory>"
    ) {
        parser = TextTokenParser(source: source, format: format, shard: shard, policy: invalidTokens, lines: lines)
    }

    /// Copies as much of `text` as fits into `batch` (which must be empty) and parses the
    /// complete lines; returns how many bytes of `text` were used. `isLast` says `text` ends the
    /// input, so a last line without a newline counts.
    public mutating func parse(
        _ text: UnsafeRawBufferPointer,
        into batch: TokenBatch,
        isLast: Bool
    ) throws(TokenSetError) -> Int {
        precondition(batch.isEmpty, "parse into an empty batch")
        let count = min(text.count, batch.bytes.count)
        guard count > 0 else { return 0 }
        batch.bytes.baseAddress!.copyMemory(from: text.baseAddress!, byteCount: count)
        let used = try parser.parse(batch, from: 0, to: count, isLast: isLast && count == text.count)
        if used == 0 && count < text.count && batch.hasRoom {
            throw TokenSetError(
                "line \(parser.line + 1) is longer than \(batch.bytes.count) bytes",
                source: parser.source,
                line: parser.line + 1
            )
        }
        return used
    }

    /// Empties `batch` for the next `parse`.
    public func recycle(_ batch: TokenBatch) {
        batch.removeAll()
    }

    /// Lines seen so far.
    public var lines: Int { parser.line }
    /// Valid tokens seen so far, in every shard.
    public var validTokens: UInt64 { parser.sequence }
    /// Lines turned down so far.
    public var skipped: Int { parser.skipped }
    /// The other service's lines passed over so far (`TokenLines.campaignHalf`).
    public var otherService: UInt64 { parser.otherService }
}
