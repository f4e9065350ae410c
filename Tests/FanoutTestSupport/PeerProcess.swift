import Foundation

/// A program nobody here wrote (h2load, nghttpd, nghttp, curl, python3), run with a bound on
/// every wait and stopped by the test that started it.
public final class PeerProcess: @unchecked Sendable {
    public struct Result: Sendable {
        public var status: Int32
        public var output: String
        public var errors: String

        public init(status: Int32, output: String, errors: String) {
            self.status = status
            self.output = output
            self.errors = errors
        }
    }

    public struct TimedOut: Error, CustomStringConvertible {
        public var command: String
        public init(command: String) { self.command = command }
        public var description: String { "\(command) did not finish in time" }
    }

    public let command: String
    private let process = Process()
    private let group = DispatchGroup()
    private let lock = NSLock()
    private var outputData = Data()
    private var errorData = Data()

    /// Starts `executable` (a name looked up on PATH, or a path) with `arguments`.
    public init(_ executable: String, _ arguments: [String], input: Data? = nil, directory: String? = nil) throws {
        command = ([executable] + arguments).joined(separator: " ")
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [executable] + arguments
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        let stdin = Pipe()
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        // Read while it runs so a full pipe cannot block it.
        // Standard output in pieces as they come, so a test can wait for a line it prints
        // ("listening on HOST:PORT") while it runs.
        DispatchQueue.global().async(group: group) {
            while true {
                let data = stdout.fileHandleForReading.availableData
                if data.isEmpty { break }
                self.lock.withLock { self.outputData.append(data) }
            }
        }
        // Standard error the same way, so a test can wait for a line it says ("waiting for the
        // return wave") while it runs.
        DispatchQueue.global().async(group: group) {
            while true {
                let data = stderr.fileHandleForReading.availableData
                if data.isEmpty { break }
                self.lock.withLock { self.errorData.append(data) }
            }
        }
        if let input { stdin.fileHandleForWriting.write(input) }
        try? stdin.fileHandleForWriting.close()
    }

    /// Runs a program to its end, within `timeout`.
    public static func run(
        _ executable: String,
        _ arguments: [String],
        input: Data? = nil,
        timeout: Duration = .seconds(60)
    ) throws -> Result {
        let peer = try PeerProcess(executable, arguments, input: input)
        return try peer.wait(timeout: timeout)
    }

    /// Waits for the program to end on its own, within `timeout`; stops it otherwise.
    public func wait(timeout: Duration) throws -> Result {
        poll(timeout: timeout, every: .milliseconds(5)) { !process.isRunning }
        if process.isRunning {
            stop()
            throw TimedOut(command: command)
        }
        return collect()
    }

    /// The program's process id (`env` replaces itself with the program).
    public var processIdentifier: Int32 { process.processIdentifier }

    /// A `kB` figure of `/proc/PID/status` (`VmRSS`, the resident set; `VmHWM`, its peak), in
    /// bytes; `nil` when the process is gone or the system has no such file.
    public func memory(_ field: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(processIdentifier)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }),
            let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else { return nil }
        return kilobytes * 1024
    }

    /// What the program has written to standard output so far.
    public var outputSoFar: String {
        lock.withLock { String(decoding: outputData, as: UTF8.self) }
    }

    /// What the program has written to standard error so far.
    public var errorsSoFar: String {
        lock.withLock { String(decoding: errorData, as: UTF8.self) }
    }

    /// The port in the first line of standard output that reads `prefix` then `HOST:PORT`, once
    /// the program has printed it, within `timeout` (`fanout sink --listen 127.0.0.1:0` prints
    /// "listening on 127.0.0.1:PORT" once it listens, and `--admin` "admin on HOST:PORT"). The
    /// server picks its port as it binds, so no other test can take it first.
    public func announcedPort(after prefix: String = "listening on ", timeout: Duration = .seconds(10)) throws -> Int {
        var port: Int?
        poll(timeout: timeout) {
            port = Self.port(after: prefix, in: outputSoFar)
            return port != nil || !process.isRunning
        }
        if let port { return port }
        if process.isRunning { stop() }
        throw TimedOut(command: "\(command), waiting for a line \"\(prefix)HOST:PORT\"")
    }

    static func port(after prefix: String, in output: String) -> Int? {
        for line in output.split(separator: "\n") where line.hasPrefix(prefix) {
            if let colon = line.lastIndex(of: ":"), let port = Int(line[line.index(after: colon)...]) { return port }
        }
        return nil
    }

    /// The bytes the program has written (`wchar` of /proc/PID/io: to its sockets, files and
    /// pipes); 0 when it cannot be read. Evidence that a sender is under way.
    public var bytesWritten: Int {
        guard let io = try? String(contentsOfFile: "/proc/\(processIdentifier)/io", encoding: .utf8),
            let line = io.split(separator: "\n").first(where: { $0.hasPrefix("wchar:") })
        else { return 0 }
        return Int(line.dropFirst("wchar:".count).trimmingCharacters(in: .whitespaces)) ?? 0
    }

    /// Whether the program is still running.
    public var isRunning: Bool { process.isRunning }

    /// The processor time the program has used, user and system (`utime` and `stime` of
    /// /proc/PID/stat), in seconds; `nil` when it cannot be read.
    public var processorSeconds: Double? {
        // After the name: state, then 10 fields, then utime and stime (fields 14 and 15).
        guard let fields = statFields, fields.count > 12, let user = Double(fields[11]),
            let system = Double(fields[12])
        else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Whether the program is stopped by a signal (SIGSTOP): state `T` in `/proc/PID/stat`.
    public var isStopped: Bool {
        statFields?.first == "T"
    }

    /// The fields of /proc/PID/stat after the program's name (its state first); `nil` when the
    /// process is gone. The name is in parentheses and may hold spaces: it ends at the last ") ".
    private var statFields: [Substring]? {
        guard let stat = try? String(contentsOfFile: "/proc/\(processIdentifier)/stat", encoding: .utf8),
            let afterName = stat.range(of: ") ", options: .backwards)
        else { return nil }
        return stat[afterName.upperBound...].split(separator: " ")
    }

    /// Sends SIGINT, as Ctrl-C in a terminal does.
    public func interrupt() {
        if process.isRunning { kill(process.processIdentifier, SIGINT) }
    }

    /// Sends `signal` (SIGKILL to crash it, SIGSTOP and SIGCONT to freeze and thaw it).
    public func signal(_ signal: Int32) {
        if process.isRunning { kill(process.processIdentifier, signal) }
    }

    /// Stops the program (SIGTERM, then SIGKILL after 5 s) and returns what it wrote.
    @discardableResult
    public func stop() -> Result {
        if process.isRunning {
            process.terminate()
            poll(timeout: .seconds(5), every: .milliseconds(5)) { !process.isRunning }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        return collect()
    }

    private func collect() -> Result {
        _ = group.wait(timeout: .now() + 10)
        return lock.withLock {
            Result(
                status: process.terminationStatus,
                output: String(decoding: outputData, as: UTF8.self),
                errors: String(decoding: errorData, as: UTF8.self)
            )
        }
    }

    /// Whether `executable` is on PATH.
    public static func exists(_ executable: String) -> Bool {
        (try? run("sh", ["-c", "command -v \(executable)"], timeout: .seconds(10)).status) == 0
    }
}

/// The repository's root, found from this file's place in it.
public let repositoryRoot: String = {
    var path = #filePath
    for _ in 0..<3 { path = String(path[..<path.lastIndex(of: "/")!]) }
    return path
}()

/// Runs `body` with a loopback port that refuses connections: a socket bound to port 0 and held,
/// never listening, so a connection to it is refused (RST) and no other test can bind the port
/// while `body` runs. The socket is closed when `body` returns.
public func withRefusingPort<T>(_ body: (Int) throws -> T) throws -> T {
    try withBoundPort(listening: false, body)
}

/// Runs `body` with a loopback port whose listener never says a word: the socket listens and
/// never accepts, so the kernel completes each TCP connect into its backlog and nothing is ever
/// read or written (a stalled server, or a TLS server waiting for a ClientHello). Closed when
/// `body` returns.
public func withSilentListener<T>(_ body: (Int) throws -> T) throws -> T {
    try withBoundPort(listening: true, body)
}

private func withBoundPort<T>(listening: Bool, _ body: (Int) throws -> T) throws -> T {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw RefusingPortError(call: "socket", code: errno) }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
    }
    guard bound == 0 else { throw RefusingPortError(call: "bind", code: errno) }
    let named = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    guard named == 0 else { throw RefusingPortError(call: "getsockname", code: errno) }
    if listening, listen(fd, 64) != 0 { throw RefusingPortError(call: "listen", code: errno) }
    return try body(Int(UInt16(bigEndian: address.sin_port)))
}

extension PeerProcess {
    /// nghttpd over cleartext serving `folder`, `options` before it, and the port it chose (it
    /// is told port 0: `listeningPort(of:)` reads which). The caller stops it.
    public static func cleartextNghttpd(serving folder: String, _ options: [String] = []) throws -> (PeerProcess, Int) {
        let server = try PeerProcess("nghttpd", ["--no-tls"] + options + ["-d", folder, "0"])
        do {
            return (server, try listeningPort(of: server.processIdentifier))
        } catch {
            server.stop()
            throw error
        }
    }
}

/// Why `withRefusingPort` could not hold a port.
public struct RefusingPortError: Error, CustomStringConvertible {
    public var call: String
    public var code: Int32
    public var description: String { "\(call) failed for a refusing port: \(String(cString: strerror(code)))" }
}

/// A TCP socket connected to `port` on 127.0.0.1 from `source` (any 127.0.0.0/8 address: a
/// client the server tells apart by address), or `nil`; the caller closes it.
public func connectLoopback(port: Int, from source: String? = nil) -> Int32? {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return nil }
    func address(_ host: String, _ port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr(host)
        address.sin_port = UInt16(port).bigEndian
        return address
    }
    if let source {
        var local = address(source, 0)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else {
            close(fd)
            return nil
        }
    }
    var remote = address("127.0.0.1", port)
    let connected = withUnsafePointer(to: &remote) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    guard connected == 0 else {
        close(fd)
        return nil
    }
    return fd
}

/// The IPv4 TCP port a process listens on, for a server told to bind port 0 that does not say
/// which port it got (nghttpd): its listening sockets in /proc/net/tcp matched to its own file
/// descriptors' inodes, polled until one appears, within `timeout`. No port is picked before
/// the server binds it, so none can be taken from under it.
public func listeningPort(of process: Int32, timeout: Duration = .seconds(10)) throws -> Int {
    var port: Int?
    poll(timeout: timeout, every: .milliseconds(20)) {
        port = listeningPort(of: process)
        return port != nil
    }
    guard let port else { throw PeerProcess.TimedOut(command: "waiting for process \(process) to listen") }
    return port
}

/// One look: the port of the first listening IPv4 socket `process` holds, if any.
///
/// ```
///   /proc/net/tcp:  sl  local_address  rem_address  st  …  uid  timeout  inode
///                   0:  0100007F:9146  00000000:0000 0A  …                12345
///                       (address:port in hex)        (0A: LISTEN)
///   /proc/PID/fd/N -> socket:[12345]
/// ```
func listeningPort(of process: Int32) -> Int? {
    let fds = "/proc/\(process)/fd"
    guard let entries = try? FileManager.default.contentsOfDirectory(atPath: fds) else { return nil }
    let inodes = Set(
        entries.compactMap { entry -> Substring? in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: fds + "/" + entry),
                target.hasPrefix("socket:[")
            else { return nil }
            return target.dropFirst("socket:[".count).dropLast()
        }
    )
    guard let table = try? String(contentsOfFile: "/proc/net/tcp", encoding: .utf8) else { return nil }
    for line in table.split(separator: "\n").dropFirst() {
        let fields = line.split(separator: " ")
        guard fields.count > 9, fields[3] == "0A", inodes.contains(fields[9]),
            let port = fields[1].split(separator: ":").last.flatMap({ Int($0, radix: 16) })
        else { continue }
        return port
    }
    return nil
}
