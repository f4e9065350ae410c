import FanoutNotation
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What this machine lets a process hold, and the ranges of Fanout's count and size options
/// that follow from it and from the protocols.
///
/// Every socket and every event loop holds file descriptors: a connection one (two when the
/// embedded sink takes the other end in the same process), an event loop three (its epoll,
/// eventfd and timerfd). A value past the open-file limit fails with EMFILE in the middle of a
/// run, or retries forever; it is refused when the options are read instead. The limits are
/// values, so a test or a fuzzer gives its own.
public struct MachineLimits: Sendable, Hashable {
    /// The soft `RLIMIT_NOFILE`: file descriptors this process may hold.
    public var openFiles: Int
    /// Physical memory in bytes.
    public var memoryBytes: UInt64

    public init(openFiles: Int, memoryBytes: UInt64) {
        self.openFiles = openFiles
        self.memoryBytes = memoryBytes
    }

    /// This machine's limits: `getrlimit(RLIMIT_NOFILE)` and the physical memory.
    public static func current() -> MachineLimits {
        var limit = rlimit()
        let openFiles: Int
        #if canImport(Glibc)
        let status = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        #else
        let status = getrlimit(RLIMIT_NOFILE, &limit)
        #endif
        if status == 0 {
            openFiles = limit.rlim_cur >= UInt64(Int.max) ? Int.max : Int(limit.rlim_cur)
        } else {
            openFiles = 1024
        }
        return MachineLimits(openFiles: openFiles, memoryBytes: ProcessInfo.processInfo.physicalMemory)
    }

    /// Descriptors kept for what is not a connection or a loop: standard streams, files
    /// written, the listening socket, the metrics endpoint, libraries' own.
    public static let reservedFiles = 64
    /// An event loop's descriptors: its epoll, eventfd and timerfd.
    public static let filesPerEventLoop = 3
    /// The most event loops one command starts: many times the cores of any machine this
    /// runs on; more only adds threads that wait.
    public static let mostEventLoops = 1024
    /// HTTP/2 stream identifiers are 31 bits (RFC 9113 §5.1.1): no connection has more
    /// streams open than 2^31−1.
    public static let mostStreams = Int(Int32.max)
    /// What a stream a connection may have costs the sender up front: its slot in the
    /// connection's table and its free-list entry, allocated when the connection opens. Measured
    /// at about 84 bytes (`fanout run --connections 1 --streams 2000000`: 164 MB more peak RSS
    /// than 1000 streams); 256 leaves room for what a stream in flight adds.
    public static let bytesPerStream = 256
    /// A payload size limit above APNs' 4096 (5120 for VoIP) exercises a server's 413; each
    /// connection holds a buffer of the limit, so it stops at 1 MiB.
    public static let largestPayloadLimit = 1 << 20
    /// Tries per notification: a retry policy doubles its delay each try, capped; beyond this
    /// a run never ends on a failing server.
    public static let mostAttempts = 1000
    /// Repeats of one run (`--repeat`): each writes a folder.
    public static let mostRepeats = 1000

    /// Descriptors left for connections after the reserve and `eventLoops` loops.
    func filesForConnections(eventLoops: Int) -> Int {
        let loops = min(max(eventLoops, 0), Self.mostEventLoops * 2) * Self.filesPerEventLoop
        return max(0, max(openFiles, 0) - Self.reservedFiles - loops)
    }

    /// `option`'s event loops, with `others` loops of the same process (the embedded sink's)
    /// and at least one connection beside them.
    public func eventLoops(_ option: String, others: Int = 0) -> OptionRange {
        let others = min(max(others, 0), Self.mostEventLoops)
        let byFiles = (max(openFiles, 0) - Self.reservedFiles - 1) / Self.filesPerEventLoop - others
        if byFiles < Self.mostEventLoops {
            let reason =
                others > 0
                ? "this machine's open-file limit, \(openFiles.grouped), allows \(max(1, byFiles).grouped) beside the other \(others.grouped)"
                : "this machine's open-file limit, \(openFiles.grouped), allows \(max(1, byFiles).grouped)"
            return OptionRange(option, 1, byFiles, reason: reason)
        }
        return OptionRange(
            option,
            1,
            Self.mostEventLoops,
            reason: "Fanout starts at most \(Self.mostEventLoops.grouped)"
        )
    }

    /// `option`'s connections, each holding `filesEach` descriptors, beside `eventLoops` loops.
    public func connections(_ option: String, filesEach: Int = 1, eventLoops: Int) -> OptionRange {
        let most = filesForConnections(eventLoops: eventLoops) / max(1, filesEach)
        let loops = eventLoops == 1 ? "1 event loop" : "\(eventLoops.grouped) event loops"
        let each = filesEach > 1 ? ", \(filesEach) descriptors a connection" : ""
        return OptionRange(
            option,
            1,
            most,
            reason:
                "this machine's open-file limit, \(openFiles.grouped), allows \(max(1, most).grouped) beside \(loops)\(each)"
        )
    }

    /// `option`'s streams a connection over `connections` connections: HTTP/2's bound, and
    /// the quarter of the memory all connections' stream tables may take together.
    public func streams(_ option: String, connections: Int) -> OptionRange {
        let budget = memoryBytes / 4 / UInt64(Self.bytesPerStream)
        let byMemory = budget / UInt64(max(1, connections))
        if byMemory < UInt64(Self.mostStreams) {
            let gigabytes = Double(memoryBytes) / 1e9
            let memory = gigabytes >= 1 ? "\((gigabytes * 10).rounded() / 10) GB" : "\(memoryBytes / 1_000_000) MB"
            let over = connections == 1 ? "1 connection" : "\(connections.grouped) connections"
            return OptionRange(
                option,
                1,
                Int(byMemory),
                reason: "this machine's memory, \(memory), holds \(max(1, byMemory).grouped) a connection over \(over)"
            )
        }
        return OptionRange(option, 1, Self.mostStreams, reason: "HTTP/2's stream identifiers are 31 bits")
    }

    /// `--streams` of a plan, which describes other machines: HTTP/2's bound only.
    public static func plannedStreams(_ option: String) -> OptionRange {
        OptionRange(option, 1, mostStreams, reason: "HTTP/2's stream identifiers are 31 bits")
    }

    /// `--cores` of a plan: a sending machine's cores (the largest servers have a few hundred).
    public static func plannedCores(_ option: String) -> OptionRange {
        OptionRange(option, 1, 65_536)
    }

    /// `--size-limit`: a payload's bytes.
    public static func payloadLimit(_ option: String) -> OptionRange {
        // `PayloadBuffer(byteCount: limit + 64)` per connection and a `ByteBuffer` (UInt32
        // capacity) in `payload render` are sized by it.
        OptionRange(
            option,
            1,
            largestPayloadLimit,
            unit: "bytes",
            reason: "APNs takes 4,096, 5,120 for VoIP; up to 1 MiB exercises a server's 413"
        )
    }

    /// `--connection-window` of a plan: from `smallest` (RFC 9113 §6.9.2's initial 65,535 for
    /// a connection, 1 for a stream) to HTTP/2's largest window, 2^31−1.
    public static func plannedWindow(_ option: String, smallest: Int) -> OptionRange {
        OptionRange(option, smallest, Int(Int32.max), unit: "bytes", reason: "HTTP/2's largest window")
    }

    /// `--body-bytes` of a plan: 20 is the smallest JSON body a rehearsal sends
    /// (`{"aps":{"alert":""}}`), 5,120 the largest APNs takes (VoIP).
    public static func plannedBodyBytes(_ option: String) -> OptionRange {
        OptionRange(option, 20, 5120, unit: "bytes", reason: "APNs takes at most 5,120")
    }

    /// The most tokens a run sends or a set holds: `plan --devices`' largest, 10^15 (31 years at
    /// a million a second); a token stream counts its lines as `Int`, which 2^64−1 overflows.
    public static let mostTokens = 1_000_000_000_000_000

    /// `--count`, `--generate`: tokens.
    public static func tokenCount(_ option: String) -> OptionRange {
        OptionRange(option, 1, mostTokens, reason: "at most 10^15 tokens")
    }

    /// The largest `--first-sequence` for `tokens` tokens: the last one's number within 64 bits.
    public static func largestFirstSequence(tokens: Int) -> UInt64 {
        UInt64.max - UInt64(max(tokens, 1) - 1)
    }

    /// `--attempts`: tries per notification.
    public static func attempts(_ option: String) -> OptionRange {
        OptionRange(option, 1, mostAttempts)
    }

    /// `--repeat`: runs of one command.
    public static func repeats(_ option: String) -> OptionRange {
        OptionRange(option, 1, mostRepeats)
    }

    /// A sender's options checked together, each range from the ones before: `eventLoops`
    /// beside `otherEventLoops` (the embedded sink's), then `connections` of `filesEach`
    /// descriptors beside every loop, then `streams` a connection over the connections.
    public func checkSender(
        eventLoops: (option: String, value: Int),
        otherEventLoops: Int = 0,
        connections: (option: String, value: Int),
        filesEach: Int = 1,
        streams: (option: String, value: Int)
    ) throws(OptionRangeError) {
        try self.eventLoops(eventLoops.option, others: otherEventLoops).check(eventLoops.value)
        let loops = eventLoops.value + min(max(otherEventLoops, 0), Self.mostEventLoops)
        try self.connections(connections.option, filesEach: filesEach, eventLoops: loops).check(connections.value)
        try self.streams(streams.option, connections: connections.value).check(streams.value)
    }
}
