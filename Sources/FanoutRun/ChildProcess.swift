import FanoutFiles
import FanoutNotation
import Foundation
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A program run as a child in a process group of its own, so that stopping it stops whatever
/// it started too: `ab`'s builds under test (a wrapper script and its `fanout`), a sink's
/// `--trigger` (a shell and the provider it runs).
///
/// Foundation's `Process` is not used: its `terminate()` signals the child alone, and on Linux
/// it learns of the child's end when every holder of a descriptor it handed the child closes
/// it, so a grandchild left running (`#!/bin/sh` then `sleep 1000`) kept `waitUntilExit()` from
/// returning for ever, the child a zombie.
///
/// ```
///   fanout ab ──posix_spawn──► [group 4711] sh w.sh ──► fanout run …     stop(): SIGTERM to
///                               (its own group,                           -4711, SIGKILL after
///                                default signals,                          the grace; a thread
///                                nothing blocked)                          in waitpid reaps it
/// ```
///
/// The child starts with SIGHUP, SIGINT and SIGTERM at their defaults and no signal blocked,
/// whatever its parent ignores or blocks (`StopSignals` ignores them in `fanout`; a test runner
/// may block SIGTERM), so a stop reaches it. Being in a group of its own, a terminal's Ctrl-C
/// does not: the parent passes stop signals on (`signal(_:)`).
public final class ChildProcess: Sendable {
    /// How a child ended.
    public enum Termination: Sendable, Hashable, CustomStringConvertible {
        case exited(Int32)
        case signaled(Int32)

        /// As a shell reports it: the exit status, or 128 + the signal's number.
        public var status: Int32 {
            switch self {
            case .exited(let status): status
            case .signaled(let signal): 128 + signal
            }
        }

        public var description: String {
            switch self {
            case .exited(let status): "status \(status)"
            case .signaled(let signal): "signal \(signal)"
            }
        }
    }

    /// The child's process id, which is also its group's.
    public let id: pid_t
    private let ended = NIOLockedValueBox<Termination?>(nil)
    private let endSignal = DispatchSemaphore(value: 0)

    /// Starts `executable` (a path; a relative one from the working directory) with
    /// `arguments`, standard output and error appended to the file at `output` (made if
    /// missing), standard input empty, and `environment` (`nil`: this process's). `ended` is
    /// told how it ended, once it has (on the thread that waits for it).
    public init(
        _ executable: String,
        _ arguments: [String],
        output: String,
        environment: [String: String]? = nil,
        ended whenEnded: (@Sendable (Termination) -> Void)? = nil
    ) throws(ChildProcessError) {
        let log = open(output, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard log >= 0 else { throw ChildProcessError(executable, "cannot open \(output): \(Self.errnoText())") }
        defer { close(log) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, log, 1)
        posix_spawn_file_actions_adddup2(&actions, log, 2)
        // Nothing else of this process's goes with it (its own are opened close-on-exec, as
        // NIO's sockets are; Foundation's files may not be). glibc skips a close of a
        // descriptor closed meanwhile.
        for open in Self.openDescriptors() where open > 2 { posix_spawn_file_actions_addclose(&actions, open) }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(
            &attributes,
            Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK)
        )
        posix_spawnattr_setpgroup(&attributes, 0)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for stop in [SIGHUP, SIGINT, SIGTERM, SIGPIPE] { sigaddset(&defaults, stop) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        posix_spawnattr_setsigmask(&attributes, &unblocked)

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        let envp = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer { for variable in envp ?? [] { free(variable) } }
        var id = pid_t()
        let failed =
            envp.map { posix_spawn(&id, executable, &actions, &attributes, argv, $0) }
            ?? posix_spawn(&id, executable, &actions, &attributes, argv, environ)
        guard failed == 0 else { throw ChildProcessError(executable, String(cString: strerror(failed))) }
        self.id = id

        let (ended, endSignal) = (ended, endSignal)
        Thread.detachNewThread { [id] in
            var status: Int32 = 0
            while waitpid(id, &status, 0) < 0 && errno == EINTR {}
            // The status word: the low 7 bits the signal that ended it (0: it exited), the next
            // byte its exit status.
            let signal = status & 0x7F
            let termination: Termination = signal == 0 ? .exited((status >> 8) & 0xFF) : .signaled(signal)
            ended.withLockedValue { $0 = termination }
            endSignal.signal()
            whenEnded?(termination)
        }
    }

    /// How it ended; `nil` while it runs.
    public var termination: Termination? { ended.withLockedValue { $0 } }

    /// Waits up to `bound` for it to end; how it ended, or `nil` if it still runs.
    @discardableResult
    public func wait(upTo bound: Duration) -> Termination? {
        if let termination { return termination }
        _ = endSignal.wait(timeout: .now() + .nanoseconds(Int(clamping: max(0, bound.wholeNanoseconds))))
        return termination
    }

    /// Sends `signal` to its group: the child and whatever it started that did not leave it.
    public func signal(_ signal: Int32) {
        _ = kill(-id, signal)
    }

    /// Stops its group: SIGTERM, then SIGKILL if the child still runs after `grace`; waits for
    /// the child's end (a SIGKILL'd one ends within a moment; bounded at 10 s all the same).
    /// What it left in the group is sent SIGKILL too.
    @discardableResult
    public func stop(grace: Duration) -> Termination? {
        signal(SIGTERM)
        var termination = wait(upTo: grace)
        if termination == nil {
            signal(SIGKILL)
            termination = wait(upTo: .seconds(10))
        }
        signal(SIGKILL)
        return termination
    }

    /// This process's open descriptors (`/proc/self/fd`).
    private static func openDescriptors() -> [Int32] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).compactMap { Int32($0) }
    }

    private static func errnoText() -> String { String(cString: strerror(errno)) }
}

/// A child process that could not start: the program and why.
public struct ChildProcessError: Error, Sendable, Hashable, CustomStringConvertible {
    public var executable: String
    public var reason: String

    init(_ executable: String, _ reason: String) {
        self.executable = executable
        self.reason = reason
    }

    public var description: String { "cannot start \(executable): \(reason)" }
}
