import FanoutAPNs

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a token set comes from.
public enum TokenSource: Sendable, Hashable {
    /// A token file, text or Fanout's binary format (told apart by the binary magic).
    case file(String)
    /// Text piped in on standard input: from another program or a database export.
    case standardInput
    /// A synthetic set, generated as it is read.
    case generated(TokenGenerator)
    /// Broadcast updates to channels (`ChannelRounds`): their ids stand where tokens do.
    case channels(ChannelRounds)

    /// Whether it can be read again from its start (`--repeat` reads it once a repeat): a
    /// regular file or a generator, not standard input, a pipe, a FIFO or a device (followed
    /// through links: /dev/stdin is a pipe or a terminal).
    public var isRereadable: Bool {
        switch self {
        case .standardInput: return false
        case .generated, .channels: return true
        case .file(let path):
            var status = stat()
            // A file that cannot be looked at is reported when it is opened.
            guard stat(path, &status) == 0 else { return true }
            return status.st_mode & S_IFMT == S_IFREG
        }
    }

    /// How error messages name it.
    public var name: String {
        switch self {
        case .file(let path): path
        case .standardInput: "<stdin>"
        case .generated: "<generated>"
        case .channels: "<channels>"
        }
    }
}

/// How a token set is read.
public struct TokenReaderConfiguration: Sendable, Hashable {
    /// Accepted token lengths.
    public var format: DeviceTokenFormat
    /// Which part of the set to read.
    public var shard: TokenShard
    /// What happens to a line that is not a valid token.
    public var invalidTokens: InvalidTokenPolicy
    /// Whose lines are read: one service's set (the default), or one half of a campaign's
    /// (`apns:`/`fcm:` lines, `TokenLabel`).
    public var lines: TokenLines
    /// Where lines turned down under `.skip` are written, one per line:
    /// `line<TAB>column<TAB>reason<TAB>the line as it was`.
    public var rejectsPath: String?
    /// Bytes per batch: the read size, and the longest line accepted when under
    /// `longestLine`.
    public var batchBytes: Int
    /// The longest token line any reader accepts (64 KiB, its newline included).
    public static let longestLine = TextTokenParser.longestLine
    /// Most tokens per batch.
    public var batchTokens: Int
    /// Batches in circulation between the reader and the consumers: with `batchBytes`, the
    /// bound on the reader's memory, whatever the set's size.
    public var batchCount: Int

    /// Creates a configuration; every parameter has a default.
    public init(
        format: DeviceTokenFormat = .default,
        shard: TokenShard = .all,
        invalidTokens: InvalidTokenPolicy = .fail,
        lines: TokenLines = .oneService,
        rejectsPath: String? = nil,
        batchBytes: Int = 256 * 1024,
        batchTokens: Int = 8192,
        batchCount: Int = 8
    ) {
        self.format = format
        self.shard = shard
        self.invalidTokens = invalidTokens
        self.lines = lines
        self.rejectsPath = rejectsPath
        self.batchBytes = batchBytes
        self.batchTokens = batchTokens
        self.batchCount = batchCount
    }
}

/// What a token set is read in (`TokenStreamSummary.lines`).
public enum ReadUnit: String, Sendable, Hashable {
    case lines
    case records
    case generated
}

/// What a finished read saw.
public struct TokenStreamSummary: Sendable, Hashable {
    /// Tokens handed out (this shard's).
    public var tokens: UInt64 = 0
    /// Valid tokens in the whole set, every shard counted.
    public var validTokens: UInt64 = 0
    /// Lines (text) or records (binary, generated) read.
    public var lines: Int = 0
    /// What `lines` counts: a text set's lines, a binary set's records, a generator's tokens.
    public var unit: ReadUnit = .lines
    /// Lines turned down under `.skip`.
    public var skipped: Int = 0
    /// The other service's lines a campaign half passed over (`TokenLines.campaignHalf`).
    public var otherService: UInt64 = 0
    /// Why reading stopped early, if it did.
    public var error: TokenSetError?
    /// Why the reject file (`rejectsPath`) could not be written, if it could not: every token
    /// was read, and the list of lines turned down is incomplete.
    public var lostRejects: TokenSetError?
    /// Whether it was cancelled.
    public var cancelled = false
}
