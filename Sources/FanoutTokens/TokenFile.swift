#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file descriptor read or written in whole chunks, with errors that name the file.
struct TokenFile: ~Copyable {
    let descriptor: Int32
    let name: String
    private let owned: Bool

    /// Opens `path` for reading. `waitForWriter: false` opens a FIFO without waiting for its
    /// writer (O_NONBLOCK, cleared once open): the wait for bytes is then the reader's, which a
    /// cancel can end (`TokenWake`), not `open`'s, which nothing can — and every read must wait
    /// in `TokenWake.waitReadable` first, since a FIFO no writer has opened reads as empty.
    static func open(reading path: String, waitForWriter: Bool = true) throws(TokenSetError) -> TokenFile {
        let descriptor = systemOpen(path, O_RDONLY | (waitForWriter ? 0 : O_NONBLOCK), 0)
        guard descriptor >= 0 else {
            throw TokenSetError("cannot open: \(String(cString: strerror(errno)))", source: path)
        }
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
        var status = stat()
        if fstat(descriptor, &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR {
            systemClose(descriptor)
            throw TokenSetError("cannot read: it is a directory", source: path)
        }
        return TokenFile(descriptor: descriptor, name: path, owned: true)
    }

    static func open(writing path: String) throws(TokenSetError) -> TokenFile {
        let descriptor = systemOpen(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard descriptor >= 0 else {
            throw TokenSetError("cannot create: \(String(cString: strerror(errno)))", source: path)
        }
        return TokenFile(descriptor: descriptor, name: path, owned: true)
    }

    static var standardInput: TokenFile { TokenFile(descriptor: 0, name: "<stdin>", owned: false) }

    private init(descriptor: Int32, name: String, owned: Bool) {
        self.descriptor = descriptor
        self.name = name
        self.owned = owned
    }

    deinit {
        if owned { systemClose(descriptor) }
    }

    /// The size in bytes of a regular file; `nil` for a pipe, a FIFO, a socket or a device,
    /// which are read as a stream whose end is found by reading.
    func regularSize() throws(TokenSetError) -> Int? {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw TokenSetError("cannot stat: \(String(cString: strerror(errno)))", source: name)
        }
        guard (status.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int(status.st_size)
    }

    /// Whether a read may wait for a writer: anything but a regular file (a pipe, a FIFO, a
    /// terminal, a socket).
    var waits: Bool { (try? regularSize()) == nil }

    /// Reads until `buffer` is full or the file ends; returns the bytes read (0 at the end).
    /// With `wake`, each read waits for bytes in `TokenWake.waitReadable` first, and a wake
    /// ends the reading early: what was read so far is returned (the caller, cancelled, stops).
    func read(into buffer: UnsafeMutableRawBufferPointer, wake: TokenWake? = nil) throws(TokenSetError) -> Int {
        var filled = 0
        while filled < buffer.count {
            let part = try readAvailable(into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]), wake: wake)
            filled += part.count
            // The end, or a wake (nothing read and no end).
            if part.ended || part.count == 0 { break }
        }
        return filled
    }

    /// Reads what the file has now, waiting only for its first bytes: until `buffer` is full,
    /// the file ends, or a pipe, FIFO or terminal has nothing more at once. A regular file
    /// always has its next bytes, so it fills `buffer` as `read` does. (Issue 61, review: read
    /// to a full 64 KiB, five tokens from a writer that stays open were never sent.)
    ///
    /// ```
    ///   wait (TokenWake) ─► read ─► full? ──────────────► (filled, ended: false)
    ///                         │      └─ more at once? ─ no ─► (filled, ended: false)
    ///                         │                       └ yes ─► read again
    ///                         └─ 0 bytes ─► (filled, ended: true)
    /// ```
    /// A wake returns what was read (`ended: false`; the caller, cancelled, stops).
    func readAvailable(
        into buffer: UnsafeMutableRawBufferPointer,
        wake: TokenWake? = nil
    ) throws(TokenSetError) -> (count: Int, ended: Bool) {
        var filled = 0
        while filled < buffer.count {
            if filled > 0 && !hasBytesNow { break }
            if let wake, !wake.waitReadable(descriptor) { break }
            let count = systemRead(descriptor, buffer.baseAddress! + filled, buffer.count - filled)
            if count == 0 { return (filled, true) }
            if count < 0 {
                if errno == EINTR { continue }
                throw TokenSetError("cannot read: \(String(cString: strerror(errno)))", source: name)
            }
            filled += count
        }
        return (filled, false)
    }

    /// Whether a read would return at once: bytes, or the end (poll with no wait).
    private var hasBytesNow: Bool {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        while true {
            let ready = poll(&entry, 1, 0)
            if ready < 0 && errno == EINTR { continue }
            // An error of poll itself: let the read say what is wrong.
            return ready != 0
        }
    }

    /// Writes all of `bytes`.
    func write(_ bytes: UnsafeRawBufferPointer) throws(TokenSetError) {
        var written = 0
        while written < bytes.count {
            let count = systemWrite(descriptor, bytes.baseAddress! + written, bytes.count - written)
            if count < 0 {
                if errno == EINTR { continue }
                throw TokenSetError("cannot write: \(String(cString: strerror(errno)))", source: name)
            }
            written += count
        }
    }
}

// The C calls, at file scope where their names are not shadowed by TokenFile's methods.
private func systemOpen(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 { open(path, flags, mode) }
private func systemClose(_ descriptor: Int32) { _ = close(descriptor) }
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}
private func systemWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, buffer, count)
}
