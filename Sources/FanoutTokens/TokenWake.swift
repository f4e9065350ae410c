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

    init() throws(TokenSetError) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            throw TokenSetError(
                "cannot make a pipe to wake the reader: \(String(cString: strerror(errno)))",
                source: "<tokens>"
            )
        }
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
        readEnd = ends[0]
        writeEnd = ends[1]
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }

    /// Ends every wait, now and later (the byte is never read back).
    func wake() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    /// Waits until `descriptor` has bytes (or its end) to read: `true`; or until `wake()`: `false`.
    func waitReadable(_ descriptor: Int32) -> Bool {
        var descriptors = [
            pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            let ready = poll(&descriptors, 2, -1)
            if ready < 0 && errno == EINTR { continue }
            // An error of poll itself: let the read say what is wrong.
            if ready < 0 { return true }
            if descriptors[1].revents != 0 { return false }
            if descriptors[0].revents != 0 { return true }
        }
    }
}
