import FanoutAPNs
import FanoutNotation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a reader does with a line that is not a valid token.
public enum InvalidTokenPolicy: Sendable, Hashable {
    /// Stop with an error naming the source, line and column (the default).
    case fail
    /// Count it, report it to the reject handler, and go on.
    case skip
}

/// Parses token-file text in place, line by line, into a `TokenBatch`.
///
/// ```
///  [BOM] token [\t field]* [\r] \n      a token, with fields that travel with it
///        # anything              \n      a comment
///                                \n      a blank line
/// ```
/// Tokens are hex of either case with an even length in the accepted range (or, in an FCM
/// format, registration tokens); the last line may lack its newline. A token may carry its push
/// service's label, `apns:` or `fcm:` (`TokenLabel`): a campaign's set, both services in one
/// file, each half's reader taking its own lines (`TokenLines`). The parser keeps its place (line number, sequence) across calls, so a reader
/// can feed it a file chunk by chunk.
struct TextTokenParser {
    /// The longest token line any reader accepts, its newline included: a run's batch
    /// (`RunBatching.bytes`), and so the limit of `fanout tokens` and every other reader too,
    /// whatever its batch (a reader whose batch is smaller has the batch's limit).
    static let longestLine = 64 * 1024

    let source: String
    let format: DeviceTokenFormat
    let shard: TokenShard
    let policy: InvalidTokenPolicy
    /// Whose lines these are: one service's set, or one half of a campaign's.
    let lines: TokenLines
    /// Receives every line turned down under `.skip`.
    let onReject: (RejectedToken) -> Void
    /// `format`'s alphabet, read once: hex (APNs), or FCM's.
    private let scansHex: Bool

    /// Lines seen so far.
    private(set) var line = 0
    /// Valid tokens seen so far, in every shard.
    private(set) var sequence: UInt64 = 0
    /// Lines turned down so far.
    private(set) var skipped = 0
    /// The other service's lines a campaign half passed over.
    private(set) var otherService: UInt64 = 0
    private var atStart = true

    init(
        source: String,
        format: DeviceTokenFormat,
        shard: TokenShard,
        policy: InvalidTokenPolicy,
        lines: TokenLines = .oneService,
        onReject: @escaping (RejectedToken) -> Void = { _ in }
    ) {
        self.source = source
        self.format = format
        self.shard = shard
        self.policy = policy
        self.lines = lines
        self.onReject = onReject
        scansHex = format.alphabet == .hex
    }

    /// Parses the complete lines in `batch.bytes[start..<end]` and returns where the unparsed
    /// rest begins: a partial last line (unless `isLast`), or whatever did not fit once the
    /// batch is full.
    mutating func parse(
        _ batch: TokenBatch,
        from start: Int,
        to end: Int,
        isLast: Bool
    ) throws(TokenSetError) -> Int {
        // The alphabet is chosen once a call: each loop below is specialised for its own, so the
        // hex loop is the one it was before FCM's tokens (scripts/cost.sh, `tokens`).
        if scansHex { return try parse(batch, from: start, to: end, isLast: isLast, HexAlphabet.self) }
        return try parse(batch, from: start, to: end, isLast: isLast, FCMAlphabet.self)
    }

    private mutating func parse<Alphabet: TokenAlphabet>(
        _ batch: TokenBatch,
        from start: Int,
        to end: Int,
        isLast: Bool,
        _ alphabet: Alphabet.Type
    ) throws(TokenSetError) -> Int {
        let base = batch.bytes.baseAddress!
        var position = start
        if atStart {
            // A byte order mark may open the file; a chunk too short to tell waits for more.
            if end - position < 3 && !isLast { return position }
            atStart = false
            if end - position >= 3 && base.load(fromByteOffset: position, as: UInt8.self) == 0xEF
                && base.load(fromByteOffset: position &+ 1, as: UInt8.self) == 0xBB
                && base.load(fromByteOffset: position &+ 2, as: UInt8.self) == 0xBF
            {
                position &+= 3
            }
        }
        while position < end {
            guard batch.hasRoom else { return position }
            let lineStart = position
            // The hex scan stops where the token ends; on most lines that is the newline itself,
            // so the line's end is known without searching for it.
            let rest = UnsafeRawBufferPointer(start: base + lineStart, count: end &- lineStart)
            let hexLength = Alphabet.prefixLength(rest)
            let stop = lineStart &+ hexLength
            var contentEnd: Int
            var next: Int
            if stop < end && base.load(fromByteOffset: stop, as: UInt8.self) == UInt8(ascii: "\n") {
                contentEnd = stop
                next = stop &+ 1
            } else if let newline = memchr(base + stop, Int32(UInt8(ascii: "\n")), end &- stop) {
                contentEnd = newline - base
                next = contentEnd &+ 1
                // Off the common path (a line that is its token): the limit costs that one nothing.
                if next &- lineStart > Self.longestLine { throw tooLong(line &+ 1) }
            } else if isLast {
                contentEnd = end
                next = end
                if next &- lineStart >= Self.longestLine { throw tooLong(line &+ 1) }
            } else {
                return position
            }
            line &+= 1
            position = next
            if contentEnd > lineStart
                && base.load(fromByteOffset: contentEnd &- 1, as: UInt8.self) == UInt8(ascii: "\r")
            {
                contentEnd &-= 1
            }
            if contentEnd == lineStart || base.load(fromByteOffset: lineStart, as: UInt8.self) == UInt8(ascii: "#") {
                continue
            }
            // A label's colon is in FCM's alphabet, so an FCM reader looks for one on each line;
            // a hex scan stops inside one (`apns:`'s p, `fcm:`'s m), so an APNs reader finds it
            // where it turns a line down, off a plain line's path (the loop still measured 2
            // instructions a token dearer for it: docs/tokens.md).
            if !Alphabet.isHex {
                if try labelled(batch, base, lineStart, contentEnd, alphabet) { continue }
                if lines == .campaignHalf {
                    // An unlabelled line is APNs's: the other half's.
                    otherService &+= 1
                    continue
                }
            }
            let tokenEnd = min(stop, contentEnd)
            if tokenEnd < contentEnd && base.load(fromByteOffset: tokenEnd, as: UInt8.self) != UInt8(ascii: "\t") {
                if try labelled(batch, base, lineStart, contentEnd, alphabet) { continue }
                let content = UnsafeRawBufferPointer(start: base + lineStart, count: contentEnd &- lineStart)
                try reject(
                    content,
                    column: hexLength + 1,
                    scansHex
                        ? "\(ByteDescription.describe(content[hexLength])) is not a hex digit"
                        : "\(ByteDescription.describe(content[hexLength])) is not in an FCM registration token (A-Z a-z 0-9 - _ :)"
                )
                continue
            }
            let length = tokenEnd &- lineStart
            if (Alphabet.isHex && length & 1 != 0) || !format.hexLengths.contains(length) {
                let content = UnsafeRawBufferPointer(start: base + lineStart, count: contentEnd &- lineStart)
                try reject(content, column: 1, lengthProblem(length))
                continue
            }
            let number = sequence
            sequence &+= 1
            if shard.contains(number) {
                batch.append(token: lineStart..<tokenEnd, fields: tokenEnd..<contentEnd, line: line, sequence: number)
            }
        }
        return position
    }

    /// Whether the line begins with a service's label, handled here if it does: this reader's
    /// token after it, or the other service's line, passed over by a campaign's half and turned
    /// down by a one-service set. Out of the parsing loop: a hex line never comes here.
    @inline(never)
    private mutating func labelled<Alphabet: TokenAlphabet>(
        _ batch: TokenBatch,
        _ base: UnsafeMutableRawPointer,
        _ lineStart: Int,
        _ contentEnd: Int,
        _ alphabet: Alphabet.Type
    ) throws(TokenSetError) -> Bool {
        let content = UnsafeRawBufferPointer(start: base + lineStart, count: contentEnd &- lineStart)
        guard let label = TokenLabel.starts(base + lineStart, count: content.count) else { return false }
        // The service this reader's tokens belong to: its alphabet's (hex: APNs).
        let service = scansHex ? TokenLabel.apns : .fcm
        guard label == service else {
            if lines == .campaignHalf {
                otherService &+= 1
                return true
            }
            try reject(
                content,
                column: 1,
                "the line is \(label.serviceName)'s (\(label.prefix)), and these tokens are \(service.serviceName)'s: "
                    + "a set of both services is a campaign's (fanout send --fcm-endpoint sends each half to its own service)"
            )
            return true
        }
        let tokenStart = lineStart &+ label.prefix.utf8.count
        let rest = UnsafeRawBufferPointer(start: base + tokenStart, count: contentEnd &- tokenStart)
        let scanned = Alphabet.prefixLength(rest)
        let tokenEnd = tokenStart &+ scanned
        if tokenEnd < contentEnd && base.load(fromByteOffset: tokenEnd, as: UInt8.self) != UInt8(ascii: "\t") {
            try reject(
                content,
                column: tokenEnd &- lineStart &+ 1,
                scansHex
                    ? "\(ByteDescription.describe(rest[scanned])) is not a hex digit"
                    : "\(ByteDescription.describe(rest[scanned])) is not in an FCM registration token (A-Z a-z 0-9 - _ :)"
            )
            return true
        }
        if (Alphabet.isHex && scanned & 1 != 0) || !format.hexLengths.contains(scanned) {
            try reject(
                content,
                column: tokenStart &- lineStart &+ 1,
                scanned == 0 ? "no token after the label \(label.prefix)" : lengthProblem(scanned)
            )
            return true
        }
        let number = sequence
        sequence &+= 1
        if shard.contains(number) {
            batch.append(token: tokenStart..<tokenEnd, fields: tokenEnd..<contentEnd, line: line, sequence: number)
        }
        return true
    }

    /// A line over `longestLine`, whatever the policy: no token line is that long.
    @inline(never)
    private func tooLong(_ line: Int) -> TokenSetError {
        TokenSetError(
            "line \(line) is longer than \(Self.longestLine.grouped) bytes; no token line is that long",
            source: source,
            line: line
        )
    }

    @inline(never)
    private mutating func reject(
        _ content: UnsafeRawBufferPointer,
        column: Int,
        _ reason: String
    ) throws(TokenSetError) {
        // A line that is all token (no newline found apart from the hex scan's stop) and over
        // the limit is turned down here, off the parsing loop, as every reader's limit says.
        if content.count >= Self.longestLine { throw tooLong(line) }
        // A CR where the token stops, not followed by LF: a file with old Mac line ends, read
        // as one line. Said here, off the parsing loop (a test there cost 6 instructions a token).
        var reason =
            column >= 1 && column <= content.count && content[column - 1] == UInt8(ascii: "\r")
            ? "a carriage return (CR) without a line feed after it: token lists end lines with LF or CRLF (tr '\\r' '\\n' converts the file)"
            : reason
        // In a campaign's file the likeliest slip is an FCM token without its label.
        if lines == .campaignHalf && scansHex && TokenLabel.starts(content.baseAddress!, count: content.count) == nil {
            reason += " (in a campaign's file an unlabelled line is an APNs token: an FCM token's line begins fcm:)"
        }
        switch policy {
        case .fail:
            throw TokenSetError(reason, source: source, line: line, column: column)
        case .skip:
            skipped += 1
            onReject(RejectedToken(line: line, column: column, reason: reason, text: Array(content)))
        }
    }

    private func lengthProblem(_ length: Int) -> String {
        if length == 0 { return "the line has no token before its first tab" }
        if format.alphabet == .fcmRegistration {
            return
                "the FCM registration token has \(length) characters; accepted are \(format.hexLengths.lowerBound) to \(format.hexLengths.upperBound)"
        }
        if length % 2 != 0 { return "the token has \(length) hex digits; hex needs an even number" }
        return
            "the token has \(length) hex digits; accepted are \(format.hexLengths.lowerBound) to \(format.hexLengths.upperBound)"
    }
}

/// What a token line's first characters may be, for the parser's loop to be specialised by.
private protocol TokenAlphabet {
    /// Whether tokens are hex, whose length is even.
    static var isHex: Bool { get }
    /// The length of the run of the alphabet's characters at the start of `bytes`.
    static func prefixLength(_ bytes: UnsafeRawBufferPointer) -> Int
}

/// APNs device tokens: the SIMD hex scan.
private enum HexAlphabet: TokenAlphabet {
    static var isHex: Bool { true }
    @inline(__always)
    static func prefixLength(_ bytes: UnsafeRawBufferPointer) -> Int { HexScanner.hexPrefixLength(bytes) }
}

/// FCM registration tokens (`DeviceTokenFormat.isFCMTokenByte`), byte by byte.
private enum FCMAlphabet: TokenAlphabet {
    static var isHex: Bool { false }
    static func prefixLength(_ bytes: UnsafeRawBufferPointer) -> Int {
        var length = 0
        while length < bytes.count && DeviceTokenFormat.isFCMTokenByte(bytes[length]) { length &+= 1 }
        return length
    }
}
