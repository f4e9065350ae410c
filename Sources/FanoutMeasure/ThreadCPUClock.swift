import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// CPU time by thread: what a run's sender and sink cost in CPU, told apart even when both run
/// in one process, by reading each event loop's own thread clock (`CLOCK_THREAD_CPUTIME_ID`).
public enum ThreadCPUClock {
    /// The CPU time the calling thread has used, in nanoseconds.
    public static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// The CPU time the threads of `group`'s event loops have used, summed, in nanoseconds:
    /// each loop reads its own clock between two of its tasks (a loop shut down counts 0).
    public static func total(of group: any EventLoopGroup) -> UInt64 {
        perLoop(of: group).reduce(0, +)
    }

    /// The CPU time each of `group`'s event-loop threads has used, in the group's order.
    public static func perLoop(of group: any EventLoopGroup) -> [UInt64] {
        group.makeIterator().map { loop in (try? loop.submit { now() }.wait()) ?? 0 }
    }
}
