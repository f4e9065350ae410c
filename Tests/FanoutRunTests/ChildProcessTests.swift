import FanoutTestSupport
import Foundation
import Testing

@testable import FanoutRun

/// `ChildProcess`: a child in a process group of its own, stopped whole, its end learned from
/// `waitpid` alone.
@Suite struct ChildProcessTests {
    /// A scratch folder with a script `name` holding `body` after `#!/bin/sh`. The tests run it
    /// as `/bin/sh SCRIPT`, not by its own path: a file just written cannot be executed while
    /// any process holds it open for writing, and a child forked meanwhile by another test (the
    /// suites run side by side) may hold the descriptor (`Text file busy`, seen once in the
    /// suite). The shell is then the wrapper, with the same children.
    static func script(_ body: String, in folder: String, name: String = "w.sh") throws -> String {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/" + name
        try Data("#!/bin/sh\n\(body)\n".utf8).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o755)
        return path
    }

    /// Review of issue 61: `ab --run-timeout` stopped a wrapper script and not the `sleep` it
    /// started, and never learned the script had ended (the `sleep` held the descriptor
    /// Foundation's Process watches), so ab hung. Both end now, within the grace.
    @Test func aWrapperAndWhatItStartedStopTogether() throws {
        let folder = NSTemporaryDirectory() + "fanout-child-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let wrapper = try Self.script("sleep 1000 &\necho $! > \(folder)/sleep.pid\nwait", in: folder)
        let child = try ChildProcess("/bin/sh", [wrapper], output: folder + "/log")
        let pidFile = folder + "/sleep.pid"
        poll(timeout: .seconds(20)) { processID(writtenTo: pidFile) != nil }
        let grandchild = try #require(processID(writtenTo: pidFile))
        #expect(child.wait(upTo: .milliseconds(50)) == nil)
        let clock = ContinuousClock()
        let started = clock.now
        let termination = child.stop(grace: .seconds(5))
        #expect(termination == .signaled(SIGTERM))
        #expect(clock.now - started < .seconds(5), "SIGTERM, not the SIGKILL after the grace")
        poll(timeout: .seconds(10)) { processEnded(grandchild) }
        #expect(processEnded(grandchild), "the wrapper's sleep \(grandchild) outlived it")
    }

    /// A child that ignores SIGTERM is killed after the grace.
    @Test func aChildThatIgnoresSIGTERMIsKilledAfterTheGrace() throws {
        let folder = NSTemporaryDirectory() + "fanout-child-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let stubborn = try Self.script("trap '' TERM\necho ready\nwhile :; do sleep 1; done", in: folder)
        let child = try ChildProcess("/bin/sh", [stubborn], output: folder + "/log")
        // Its trap is set once it says so.
        let log = folder + "/log"
        poll(timeout: .seconds(20)) { (try? String(contentsOfFile: log, encoding: .utf8)) == "ready\n" }
        #expect(child.stop(grace: .milliseconds(300)) == .signaled(SIGKILL))
    }

    /// The child starts with SIGTERM unblocked whatever its parent's thread blocks (a test
    /// runner's may), and at its default (`fanout` ignores it while it watches stop signals).
    @Test func aStopReachesAChildWhoseParentBlocksSIGTERM() throws {
        var blocked = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGTERM)
        var before = sigset_t()
        pthread_sigmask(SIG_BLOCK, &blocked, &before)
        defer { pthread_sigmask(SIG_SETMASK, &before, nil) }
        let folder = NSTemporaryDirectory() + "fanout-child-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let child = try ChildProcess("/bin/sleep", ["1000"], output: folder + ".log")
        defer { try? FileManager.default.removeItem(atPath: folder + ".log") }
        #expect(child.stop(grace: .seconds(10)) == .signaled(SIGTERM))
    }

    @Test func itsOutputAndStatusAreKept() throws {
        let log = NSTemporaryDirectory() + "fanout-child-\(UUID().uuidString).log"
        defer { try? FileManager.default.removeItem(atPath: log) }
        let child = try ChildProcess(
            "/bin/sh",
            ["-c", "echo out; echo err >&2; echo \"$FANOUT_CHILD\"; read line || exit 3"],
            output: log,
            environment: ["FANOUT_CHILD": "here"]
        )
        #expect(child.wait(upTo: .seconds(30)) == .exited(3), "standard input is empty")
        #expect(child.termination?.status == 3)
        #expect(try String(contentsOfFile: log, encoding: .utf8) == "out\nerr\nhere\n")
    }

    @Test func aProgramThatCannotStartIsSaid() throws {
        let log = NSTemporaryDirectory() + "fanout-child-\(UUID().uuidString).log"
        defer { try? FileManager.default.removeItem(atPath: log) }
        #expect(throws: ChildProcessError("/nonexistent/fanout", "No such file or directory")) {
            try ChildProcess("/nonexistent/fanout", [], output: log)
        }
        #expect(
            ChildProcessError("/nonexistent/fanout", "No such file or directory").description
                == "cannot start /nonexistent/fanout: No such file or directory"
        )
        #expect(throws: ChildProcessError("/bin/true", "cannot open /nonexistent/log: No such file or directory")) {
            try ChildProcess("/bin/true", [], output: "/nonexistent/log")
        }
    }
}
