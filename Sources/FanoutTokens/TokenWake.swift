import Atomics

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Wakes a reader waiting on a pipe, a FIFO or a terminal that gives no bytes: the reader waits
/// in `poll` on its file and on this pipe together, and `wake()` ends the wait. A stream
/// cancelled at a run's end (its `--duration`, a signal) so stops a reader whose writer went
/// quiet, instead of leaving it blocked in `read`:
///
/// ```
///   reader:  poll(file POLLIN, wake POLLIN) ──► file readable ──► read what is there
///                                           └─► wake readable ──► stop: cancelled
///   cancel():  write(wake, 1 byte)
/// ```
///
/// No timer and no polling loop: the wait ends only when one of the two has something.
final class TokenWake: Sendable {
    private let readEnd: Int32
    private let writeEnd: Int32
    private let rung = ManagedAtomic(false)

    init() throws(TokenSetError) {
        var ends: (Int32, Int32) = (-1, -1)
        let made = withUnsafeMutableBytes(of: &ends) { Self.pipe($0.baseAddress!.assumingMemoryBound(to: Int32.self)) }
        guard made == 0 else {
            throw TokenSetError(
                "cannot make a pipe to wake the reader: \(String(cString: strerror(errno)))",
                source: "<tokens>"
            )
        }
        (readEnd, writeEnd) = ends
    }

    /// A pipe, both ends non-blocking and close-on-exec. (Glibc's module does not carry
    /// `pipe2`, so the flags come a moment after: a child spawned in between would inherit the
    /// ends, and hold nothing of the reader's but a pipe it never writes.)
    private static func pipe(_ ends: UnsafeMutablePointer<Int32>) -> Int32 {
        #if canImport(Glibc)
        guard Glibc.pipe(ends) == 0 else { return -1 }
        #else
        guard Darwin.pipe(ends) == 0 else { return -1 }
        #endif
        for end in [ends[0], ends[1]] {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
        return 0
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }

    /// Ends every wait, now and later (the byte is never read back).
    func wake() {
        rung.store(true, ordering: .releasing)
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    /// Whether `wake()` was called: a read it cut short holds no whole answer.
    var hasWoken: Bool { rung.load(ordering: .acquiring) }

    /// Waits until `descriptor` has bytes (or its end) to read: `true`; or until `wake()`: `false`.
    func waitReadable(_ descriptor: Int32) -> Bool {
        var descriptors = (
            pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
        )
        while true {
            let ready = withUnsafeMutableBytes(of: &descriptors) {
                poll($0.baseAddress!.assumingMemoryBound(to: pollfd.self), 2, -1)
            }
            if ready < 0 && errno == EINTR { continue }
            // An error of poll itself: let the read say what is wrong.
            if ready < 0 { return true }
            if descriptors.1.revents != 0 { return false }
            if descriptors.0.revents != 0 { return true }
        }
    }
}
