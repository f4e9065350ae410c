extension TokenSet {
    /// The token stream of a run over `connections` connections: the one way `fanout run`,
    /// `send`, `search`, `plan --verify` and the cluster's shards open their tokens, so they
    /// cannot differ in batching. The set's format, shard and invalid-line policy are kept; the
    /// batches are the load engine's: 64 KiB (the longest line accepted) and at most
    /// `RunBatching.tokens` tokens, two for each connection and eight more in circulation.
    ///
    /// Fairness does not rest on the batch size (connections share a batch's tokens to the
    /// last: `FeedBatch`); the size bounds the reader's memory and how much a token's trip
    /// through the queue costs.
    public func openForRun(connections: Int) throws(TokenSetError) -> TokenStream {
        try TokenStream(source, configuration: RunBatching.configuration(reader, connections: connections))
    }
}

/// The batches a run's tokens are read in (`TokenSet.openForRun(connections:)`).
public enum RunBatching {
    /// Bytes a batch is read into: the longest token line any reader accepts.
    public static let bytes = TokenReaderConfiguration.longestLine
    /// Tokens a batch holds at most.
    public static let tokens = 1024

    /// `reader` with the run's batches for `connections` connections.
    public static func configuration(
        _ reader: TokenReaderConfiguration,
        connections: Int
    ) -> TokenReaderConfiguration {
        var configuration = reader
        configuration.batchBytes = bytes
        configuration.batchTokens = tokens
        configuration.batchCount = 2 * max(1, connections) + 8
        return configuration
    }
}
