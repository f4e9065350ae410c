import Atomics
import FanoutAPNs
import FanoutFiles
import FanoutNotation

/// An opened token source, ready to be read. A file is opened once and read once, front to
/// back: the bytes read to tell text from binary are kept (`prefix`), so a pipe, a FIFO or a
/// process substitution (`<(…)`) reads exactly as a regular file does.
enum TokenInput: ~Copyable {
    /// Text; `prefix` holds the file's first bytes, already read; `ended` when they were all.
    case text(TokenFile, prefix: [UInt8], ended: Bool)
    case binary(TokenFile, BinaryTokenFormat.Header)
    /// A file whose first bytes may be long in coming (a pipe, a FIFO, a terminal): told text
    /// or binary by the reader, on its queue, where a cancel can end the wait (`TokenWake`),
    /// not by the caller of `open`, which would block.
    case waiting(TokenFile)
    case generated(TokenGenerator)
    case channels(ChannelRounds)

    /// Whether the reader waits for the file's first bytes (`waiting`).
    var waits: Bool {
        switch self {
        case .waiting: true
        case .text: false
        case .binary: false
        case .generated: false
        case .channels: false
        }
    }

    static func open(_ source: TokenSource, configuration: TokenReaderConfiguration) throws(TokenSetError) -> TokenInput
    {
        switch source {
        case .standardInput:
            let file = TokenFile.standardInput
            return file.waits ? .waiting(file) : try sniffed(file, configuration: configuration)
        case .generated(let generator):
            guard configuration.format.hexLengths.contains(2 * generator.length) else {
                throw TokenSetError(
                    "generated tokens of \(generator.length) bytes are outside the accepted "
                        + "\(configuration.format.hexLengths.lowerBound / 2) to \(configuration.format.hexLengths.upperBound / 2)",
                    source: source.name
                )
            }
            return .generated(generator)
        case .channels(let rounds):
            for (index, id) in rounds.channels.enumerated()
            where id.isEmpty || id.utf8.count > ChannelRounds.maxIDLength || id.utf8.contains(where: { $0 <= 0x20 }) {
                throw TokenSetError(
                    "channel \(index + 1) is not an APNs channel id (base64, 1 to \(ChannelRounds.maxIDLength) characters): \(id)",
                    source: source.name
                )
            }
            return .channels(rounds)
        case .file(let path):
            let file = try TokenFile.open(reading: path, waitForWriter: false)
            return file.waits ? .waiting(file) : try sniffed(file, configuration: configuration)
        }
    }

    /// `file` as text or binary, told by its first bytes (standard input too: `tokens convert`'s
    /// binary set piped into `fanout send --tokens -`).
    static func sniffed(
        _ file: consuming TokenFile,
        configuration: TokenReaderConfiguration,
        wake: TokenWake? = nil
    ) throws(TokenSetError) -> TokenInput {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: BinaryTokenFormat.headerSize, alignment: 8)
        defer { buffer.deallocate() }
        // What the writer has written, and more only while it could still be a header: a
        // writer that sends one token and waits is read as text at once.
        var (count, ended) = try file.readAvailable(into: buffer, wake: wake)
        func couldBeHeader() -> Bool {
            let prefix = buffer[0..<count]
            return BinaryTokenFormat.magic.starts(with: prefix) || BinaryTokenFormat.looksBinary(prefix)
        }
        while !ended && count < buffer.count && couldBeHeader() && wake?.hasWoken != true {
            let more = try file.readAvailable(
                into: UnsafeMutableRawBufferPointer(rebasing: buffer[count...]),
                wake: wake
            )
            count += more.count
            ended = more.ended
        }
        let prefix = Array(buffer[0..<count])
        // Cut short by a cancel: no header to judge (a binary one's first bytes would read as
        // truncated), and nothing more is read.
        if wake?.hasWoken == true { return .text(file, prefix: [], ended: true) }
        if BinaryTokenFormat.looksBinary(prefix) {
            guard configuration.lines == .oneService else {
                throw TokenSetError(
                    "a binary token set holds one service's tokens, with no apns: or fcm: labels: a campaign's set is text (fanout tokens convert --format text)",
                    source: file.name
                )
            }
            let header = try BinaryTokenFormat.header(
                prefix,
                fileSize: try file.regularSize(),
                format: configuration.format,
                source: file.name
            )
            return .binary(file, header)
        }
        // Text: the prefix is its first bytes (never opened again: a pipe cannot be).
        return .text(file, prefix: prefix, ended: ended)
    }
}

/// The loop that fills batches from a `TokenInput` and hands them on; runs on the stream's
/// Dispatch queue.
final class TokenReader: @unchecked Sendable {
    // Unchecked: `input` is used only by `run()`, which the stream calls once, on its queue.

    private var input: TokenInput?
    private let configuration: TokenReaderConfiguration
    private let ready: BatchQueue
    private let free: BatchQueue
    private let cancelled: ManagedAtomic<Bool>
    /// With a file that waits for its writer: what ends a wait when the stream is cancelled.
    private let wake: TokenWake?

    init(
        input: consuming TokenInput,
        configuration: TokenReaderConfiguration,
        ready: BatchQueue,
        free: BatchQueue,
        cancelled: ManagedAtomic<Bool>,
        wake: TokenWake?
    ) {
        self.input = consume input
        self.configuration = configuration
        self.ready = ready
        self.free = free
        self.cancelled = cancelled
        self.wake = wake
    }

    func run() -> TokenStreamSummary {
        var summary = TokenStreamSummary()
        guard let input = input.take() else { return summary }
        do {
            try read(input, &summary)
        } catch {
            summary.error = error
        }
        summary.cancelled = cancelled.load(ordering: .acquiring)
        return summary
    }

    private func read(_ input: consuming TokenInput, _ summary: inout TokenStreamSummary) throws(TokenSetError) {
        switch consume input {
        case .text(let file, let prefix, let ended): try readText(file, prefix: prefix, ended: ended, &summary)
        case .binary(let file, let header): try readBinary(file, header, &summary)
        case .generated(let generator): try readGenerated(generator, &summary)
        case .channels(let rounds): readChannels(rounds, &summary)
        case .waiting(let file): try read(TokenInput.sniffed(file, configuration: configuration, wake: wake), &summary)
        }
    }

    /// A free batch, or `nil` when the stream was cancelled.
    private func freeBatch() -> TokenBatch? {
        if cancelled.load(ordering: .acquiring) { return nil }
        return free.pop()
    }

    private func deliver(_ batch: TokenBatch, _ summary: inout TokenStreamSummary) {
        summary.tokens &+= UInt64(batch.count)
        if batch.isEmpty || !ready.push(batch) {
            batch.removeAll()
            _ = free.tryPush(batch)
        }
    }

    private func readText(
        _ file: borrowing TokenFile,
        prefix: [UInt8],
        ended: Bool,
        _ summary: inout TokenStreamSummary
    ) throws(TokenSetError) {
        let rejects = try RejectWriter(path: configuration.invalidTokens == .skip ? configuration.rejectsPath : nil)
        // Every way out writes the lines turned down so far, a line that stops the read among
        // them: `--rejects` came back empty when a later line stopped the run.
        defer {
            do { try rejects.finish() } catch { summary.lostRejects = error }
        }
        var parser = TextTokenParser(
            source: file.name,
            format: configuration.format,
            shard: configuration.shard,
            policy: configuration.invalidTokens,
            lines: configuration.lines,
            onReject: { rejects.add($0) }
        )
        defer {
            summary.lines = parser.line
            summary.validTokens = parser.sequence
            summary.skipped = parser.skipped
            summary.otherService = parser.otherService
        }
        guard var batch = freeBatch() else { return }
        // A batch holds at least a header's bytes (`TokenReaderConfiguration.batchBytes`).
        batch.bytes.copyBytes(from: prefix)
        var filled = prefix.count
        var atEnd = ended
        // Each turn parses what the file had (`readAvailable`), so a writer's lines go out as
        // they come, not once a batch is full; a partial line waits in the batch for its end.
        while true {
            if !atEnd {
                let read = try file.readAvailable(
                    into: UnsafeMutableRawBufferPointer(rebasing: batch.bytes[filled...]),
                    wake: wake
                )
                // Woken: the run is over; a partial line is not a line.
                if cancelled.load(ordering: .acquiring) { return }
                atEnd = read.ended
                filled += read.count
            }
            let parsed: Int
            do {
                parsed = try parser.parse(batch, from: 0, to: filled, isLast: atEnd)
            } catch {
                // The tokens parsed before the bad line go out: a run stops at it, not before.
                deliver(batch, &summary)
                throw error
            }
            let rest = filled - parsed
            if atEnd && rest == 0 {
                deliver(batch, &summary)
                return
            }
            // Only a partial line so far, with room for more of it: read on into this batch.
            if parsed == 0 && !atEnd && filled < batch.bytes.count { continue }
            if parsed == 0 && batch.hasRoom {
                throw TokenSetError(
                    "line \(parser.line + 1) is longer than \(batch.bytes.count.grouped) bytes; no token line is that long",
                    source: file.name,
                    line: parser.line + 1
                )
            }
            // The unparsed rest (a partial line, or lines for which the batch had no room)
            // starts the next batch.
            guard let next = freeBatch() else { return }
            next.bytes.baseAddress!.copyMemory(from: batch.bytes.baseAddress! + parsed, byteCount: rest)
            deliver(batch, &summary)
            batch = next
            filled = rest
        }
    }

    private func readBinary(
        _ file: borrowing TokenFile,
        _ header: BinaryTokenFormat.Header,
        _ summary: inout TokenStreamSummary
    ) throws(TokenSetError) {
        let length = header.tokenLength
        let recordsPerRead = max(1, min(configuration.batchTokens, configuration.batchBytes / (2 * length)))
        let raw = UnsafeMutableRawBufferPointer.allocate(byteCount: recordsPerRead * length, alignment: 16)
        defer { raw.deallocate() }
        var record: UInt64 = 0
        defer {
            summary.lines = Int(record)
            summary.unit = .records
            summary.validTokens = record
        }
        // The records a pipe has go out as they come (`readAvailable`), as text lines do: read
        // to a full 1,024, ten records from a slow writer were never sent, and the whole records
        // before a truncation were in no count (issue 61, session 37's pass). `carried` bytes of
        // a record not yet whole wait at the front of `raw`.
        var carried = 0
        while record < header.count {
            guard let batch = freeBatch() else { return }
            let wanted = Int(min(UInt64(recordsPerRead), header.count - record))
            let read = try file.readAvailable(
                into: UnsafeMutableRawBufferPointer(rebasing: raw[carried..<(wanted * length)]),
                wake: wake
            )
            let available = carried + read.count
            let whole = available / length
            var offset = 0
            for index in 0..<whole {
                let number = record &+ UInt64(index)
                guard configuration.shard.contains(number) else { continue }
                batch.appendHex(
                    of: UnsafeRawBufferPointer(rebasing: raw[(index * length)..<((index + 1) * length)]),
                    at: &offset,
                    sequence: number
                )
            }
            record &+= UInt64(whole)
            deliver(batch, &summary)
            carried = available - whole * length
            if carried > 0 { raw.baseAddress!.copyMemory(from: raw.baseAddress! + whole * length, byteCount: carried) }
            if cancelled.load(ordering: .acquiring) { return }
            if read.ended && record < header.count {
                throw TokenSetError(
                    "truncated while reading: record \(record + 1) ends early",
                    source: file.name
                )
            }
        }
        // A pipe's size was not known when the header was read: what follows the records is
        // found here (a regular file's size was checked against the header).
        let extra = UnsafeMutableRawBufferPointer.allocate(byteCount: 1, alignment: 1)
        defer { extra.deallocate() }
        if !cancelled.load(ordering: .acquiring), try file.read(into: extra, wake: wake) > 0,
            !cancelled.load(ordering: .acquiring)
        {
            throw TokenSetError(
                "the stream has bytes after the \(header.count) records its header promises",
                source: file.name
            )
        }
    }

    private func readGenerated(_ generator: TokenGenerator, _ summary: inout TokenStreamSummary) throws(TokenSetError) {
        let length = generator.length
        let perBatch = max(1, min(configuration.batchTokens, configuration.batchBytes / (3 * length)))
        let shard = configuration.shard
        // Only this shard's tokens are generated: token i belongs to shard (i mod N) + 1.
        var number = UInt64(shard.index - 1)
        let step = UInt64(shard.count)
        defer {
            summary.validTokens = generator.count
            summary.lines = Int(generator.count)
            summary.unit = .generated
        }
        while number < generator.count {
            guard let batch = freeBatch() else { return }
            // Raw bytes go after the hex region, then are expanded in front of it.
            let scratch = batch.bytes.baseAddress! + 2 * length * perBatch
            var offset = 0
            while batch.count < perBatch && number < generator.count {
                generator.writeToken(number, to: scratch)
                batch.appendHex(
                    of: UnsafeRawBufferPointer(start: scratch, count: length),
                    at: &offset,
                    sequence: number
                )
                number &+= step
            }
            deliver(batch, &summary)
        }
    }
}

extension TokenReader {
    /// Fills batches with `rounds`' records (`ChannelRounds`): the channel id's bytes, a tab and
    /// the round's timestamp in decimal; this shard's records only, as `readGenerated` does.
    func readChannels(_ rounds: ChannelRounds, _ summary: inout TokenStreamSummary) {
        let ids = rounds.channels.map { Array($0.utf8) }
        let recordBytes = ChannelRounds.maxIDLength + 1 + 20
        let perBatch = max(1, min(configuration.batchTokens, configuration.batchBytes / recordBytes))
        let shard = configuration.shard
        var number = UInt64(shard.index - 1)
        let step = UInt64(shard.count)
        defer {
            summary.validTokens = rounds.count
            summary.lines = Int(rounds.count)
            summary.unit = .generated
        }
        guard !ids.isEmpty else { return }
        while number < rounds.count {
            guard let batch = freeBatch() else { return }
            var offset = 0
            while batch.count < perBatch && number < rounds.count {
                let id = ids[Int(number % UInt64(ids.count))]
                let round = Int(number / UInt64(ids.count))
                let base = batch.bytes.baseAddress! + offset
                id.withUnsafeBytes { base.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
                let tokenEnd = offset + id.count
                base.storeBytes(of: UInt8(ascii: "\t"), toByteOffset: id.count, as: UInt8.self)
                let end = tokenEnd + 1 + Self.writeDecimal(rounds.firstTimestamp + round, to: base + id.count + 1)
                batch.append(token: offset..<tokenEnd, fields: tokenEnd..<end, line: Int(number) + 1, sequence: number)
                offset = end
                number &+= step
            }
            deliver(batch, &summary)
        }
    }

    /// Writes `value` (not negative) in decimal at `out`; returns the digits written.
    static func writeDecimal(_ value: Int, to out: UnsafeMutableRawPointer) -> Int {
        var count = 1
        var rest = value / 10
        while rest > 0 {
            count += 1
            rest /= 10
        }
        rest = value
        for place in stride(from: count - 1, through: 0, by: -1) {
            out.storeBytes(of: UInt8(ascii: "0") + UInt8(rest % 10), toByteOffset: place, as: UInt8.self)
            rest /= 10
        }
        return count
    }
}

/// Writes turned-down lines to the reject file, if there is one.
final class RejectWriter {
    private var file: TokenFile?
    private var pending: [UInt8] = []

    init(path: String?) throws(TokenSetError) {
        if let path { file = try TokenFile.open(writing: path) }
    }

    func add(_ rejected: RejectedToken) {
        guard file != nil else { return }
        pending += Array("\(rejected.line)\t\(rejected.column)\t\(rejected.reason)\t".utf8)
        pending += rejected.text.map { $0 == UInt8(ascii: "\t") ? UInt8(ascii: " ") : $0 }
        pending.append(UInt8(ascii: "\n"))
    }

    func finish() throws(TokenSetError) {
        guard let file = file.take() else { return }
        let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: pending.count, alignment: 1)
        defer { bytes.deallocate() }
        bytes.copyBytes(from: pending)
        try file.write(UnsafeRawBufferPointer(bytes))
        pending = []
    }
}
