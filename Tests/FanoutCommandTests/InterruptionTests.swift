import FanoutAPNs
import FanoutReport
import FanoutResults
import FanoutTestSupport
import Foundation
import Testing

/// Runs stopped by real signals (SIGINT, SIGTERM, SIGHUP) sent to the `fanout` process: each
/// writes its folder marked interrupted with what was really sent, exits 128 + the signal, and
/// `fanout gate` refuses it; a repeat set cut short says how far it came.
@Suite(.serialized) struct InterruptionTests {
    static func folder() throws -> String {
        let folder = NSTemporaryDirectory() + "fanout-interrupt-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    /// `fanout` with `arguments`, started from the repository's root; the caller stops it.
    static func start(_ arguments: [String]) throws -> PeerProcess {
        try PeerProcess(CommandRunner.executable.path, arguments, directory: CommandRunner.repositoryRoot)
    }

    /// `fanout run --repeat <repeats>` (1,000/s for 1 s each) into `folder/set`, sent `signal`
    /// once repeat `done`'s summary is written; how it ended.
    static func interruptRepeats(
        _ repeats: Int,
        in folder: String,
        after done: Int,
        with signal: Int32
    ) throws -> PeerProcess.Result {
        let run = try start([
            "run", "--verbose", "--repeat", String(repeats), "--rate", "1000", "--duration", "1s", "--output",
            folder + "/set",
        ])
        defer { run.stop() }
        try waitUntil("repeat \(done)'s summary") {
            FileManager.default.fileExists(atPath: folder + "/set/repeat-\(done)/summary.json")
        }
        run.signal(signal)
        return try run.wait(timeout: .seconds(20))
    }

    /// `fanout send` of the poll notification to the sink on `port` with `arguments`, into
    /// `folder/run`, once it holds that folder and its requests are going out; the caller stops it.
    static func startSending(to port: Int, _ arguments: [String], into folder: String) throws -> PeerProcess {
        let send = try start(CommandRunner.sendArguments(to: port) + arguments + ["--output", folder + "/run"])
        do {
            try waitUntil("the send holding its folder") { holdsLock(send, in: folder + "/run") }
            try waitUntilSending(send)
        } catch {
            send.stop()
            throw error
        }
        return send
    }

    /// A FIFO in `folder` that the test itself holds open as its writer (O_RDWR: Linux never
    /// blocks that open): its path and the descriptor to write to and close. (A `sleep 60`
    /// writer process cost the suite a minute in its stop: the runner's SIGTERM reached neither
    /// it nor its shell.)
    static func heldFIFO(in folder: String) throws -> (path: String, writer: Int32) {
        let path = folder + "/tokens.fifo"
        try #require(mkfifo(path, 0o600) == 0)
        let writer = open(path, O_RDWR)
        try #require(writer >= 0)
        return (path, writer)
    }

    /// Polls `condition` (`poll`) for at most `timeout`; throws saying `what` was not seen.
    static func waitUntil(_ what: String, timeout: Duration = .seconds(30), _ condition: () -> Bool) throws {
        guard poll(timeout: timeout, until: condition) else { throw NotSeen(what: what) }
    }

    struct NotSeen: Error, CustomStringConvertible {
        var what: String
        var description: String { "not seen in time: \(what)" }
    }

    /// The run holds its --output folder's lock: its signal handlers are in place and it has
    /// checked the folder (`RunOutput`).
    static func holdsLock(_ process: PeerProcess, in folder: String) -> Bool {
        let holder = try? String(contentsOfFile: folder + "/.lock", encoding: .utf8)
        return holder?.trimmingCharacters(in: .whitespacesAndNewlines) == "\(process.processIdentifier)"
    }

    /// Waits (bounded) until `process` has sent requests: some 50 of them, at ~400 bytes each.
    static func waitUntilSending(_ process: PeerProcess) throws {
        try waitUntil("requests going out") { process.bytesWritten > 20_000 }
    }

    /// Case 9 of issue #48: an open-model send at 1,000/s stopped by SIGINT counted the tokens
    /// it had read ahead as sent and failed (10,912 "sent", 5,517/s). Now only what went out is
    /// sent, the rest is `unsent`, and the rate is the offered one at most.
    @Test func sigintDuringASendCountsOnlyWhatWasSent() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (sink, port) = try CommandRunner.sink(["--no-auth"])
        defer { sink.stop() }
        let send = try Self.startSending(
            to: port,
            ["--generate", "100000", "--rate", "1000", "--duration", "10s"],
            into: folder
        )
        defer { send.stop() }
        send.interrupt()
        let result = try send.wait(timeout: .seconds(20))
        #expect(result.status == 130, "\(result.errors)")
        let summary = try CommandRunner.summary(in: folder + "/run")
        let sent = summary.sent
        let requests = summary.requests
        let unsent = summary.unsent ?? 0
        #expect(sent > 0 && sent <= requests, "sent \(sent), requests \(requests)")
        #expect(unsent > 0, "tokens read ahead are counted as never sent")
        #expect(summary.failed[.cancelled] ?? 0 < 50, "\(summary.failed)")
        // At most the offered rate (1% for the first ticket, due at the start).
        #expect((summary.throughputPerSecond ?? .infinity) <= 1010)
        #expect(summary.valid == false)
        #expect(summary.wasInterrupted(by: "SIGINT"), "\(summary.invalidity)")
        #expect(
            lines(of: result.output, keyed: "never sent ")
                == ["never sent (interrupted): \(unsent.formatted()) tokens read ahead, neither sent nor failed"],
            "\(result.output)"
        )
        #expect(
            lines(of: result.output, keyed: "INVALID: ") == summary.invalidity.map { "INVALID: \($0)" },
            "\(result.output)"
        )
        let gate = try CommandRunner.run(["gate", folder + "/run", "--threshold", "errors == 0"])
        #expect(gate.status == 2, "\(gate.standardOutput)")
    }

    /// Case 13: SIGTERM (a CI runner's cancel) and SIGHUP ended `run` and `send` with no folder
    /// at all. Each now writes it, marked with the signal, and exits 128 + its number.
    @Test(arguments: [("SIGTERM", SIGTERM, Int32(143)), ("SIGHUP", SIGHUP, 129)])
    func sigtermAndSighupWriteTheFolderOfARun(name: String, signal: Int32, status: Int32) throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let run = try Self.start([
            "run", "--verbose", "--rate", "2000", "--duration", "30s", "--output", folder + "/run",
        ])
        defer { run.stop() }
        try Self.waitUntil("the run holding its folder") { Self.holdsLock(run, in: folder + "/run") }
        try Self.waitUntilSending(run)
        run.signal(signal)
        let result = try run.wait(timeout: .seconds(20))
        #expect(result.status == status, "\(result.errors)")
        let summary = try CommandRunner.summary(in: folder + "/run")
        #expect(summary.valid == false)
        #expect(summary.wasInterrupted(by: name), "\(summary.invalidity)")
        // What was in flight was answered: sender and sink still agree.
        #expect(summary.reconciled == true, "\(String(describing: summary.sink))")
        #expect((summary.throughputPerSecond ?? .infinity) <= 2020)
        // Each reason a list item under the verdict, the interruption among them.
        let markdown = MarkdownDocument(try String(contentsOfFile: folder + "/run/summary.md", encoding: .utf8))
        #expect(
            Array(markdown.items.prefix(summary.invalidity.count)) == summary.invalidity.map(\.description),
            "\(markdown)"
        )
    }

    @Test func sigtermWritesTheFolderOfASend() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (sink, port) = try CommandRunner.sink(["--no-auth", "--latency", "fixed:100ms"])
        defer { sink.stop() }
        let send = try Self.startSending(
            to: port,
            ["--generate", "1000000", "--connections", "1", "--streams", "10"],
            into: folder
        )
        defer { send.stop() }
        send.signal(SIGTERM)
        let result = try send.wait(timeout: .seconds(20))
        #expect(result.status == 143, "\(result.errors)")
        let summary = try CommandRunner.summary(in: folder + "/run")
        #expect(summary.wasInterrupted(by: "SIGTERM"), "\(summary.invalidity)")
        // The ten in flight were answered within the grace: none failed, none counted twice.
        #expect(summary.failed == [:], "\(summary.failed)")
        #expect(summary.sent == summary.accepted)
    }

    /// Case 13: SIGHUP to `fanout sink --output` left no folder (exit 129); it drains and
    /// writes it as SIGINT and SIGTERM do.
    @Test func sighupStopsASinkWithItsFolderWritten() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (sink, port) = try CommandRunner.sink(["--no-auth", "--output", folder + "/provider"])
        defer { sink.stop() }
        let send = try CommandRunner.send(to: port, ["--generate", "100", "--output", folder + "/send"])
        #expect(send.status == 0, "\(send.standardError)")
        sink.signal(SIGHUP)
        let result = try sink.wait(timeout: .seconds(20))
        #expect(result.status == 0, "\(result.errors)")
        let summary = try CommandRunner.summary(in: folder + "/provider")
        #expect(summary.accepted == 100)
    }

    /// A second signal ends the process at once: here the first has the send drain what is in
    /// flight for `LoadEngine.interruptionGrace` (500 ms) from a sink that holds every answer
    /// 30 s, and the second comes within it.
    @Test func aSecondSignalExitsAtOnce() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // 100 streams from the start (not one until a first answer): some 40 KB go out at once.
        let (sink, port) = try CommandRunner.sink(["--no-auth", "--latency", "fixed:30s", "--initial-streams", "100"])
        defer { sink.stop() }
        let send = try Self.startSending(to: port, ["--generate", "1000", "--connections", "1"], into: folder)
        defer { send.stop() }
        send.interrupt()
        // Staying alive for a moment is the behaviour under test: it ends the wait early if it fails.
        let ended = poll(timeout: .milliseconds(100)) { !send.isRunning }
        #expect(!ended, "the first signal asks the run to drain; the sink holds every answer")
        send.interrupt()
        let result = try send.wait(timeout: .seconds(10))
        #expect(result.status == 130, "\(result.errors)")
        #expect(
            lines(of: result.errors, keyed: "fanout: ") == [
                "fanout: a second SIGINT: stopped at once, nothing more written"
            ],
            "\(result.errors)"
        )
    }

    /// Issue #61, case 9: a token FIFO whose writer writes nothing held `send` past its
    /// `--duration` (it waited for the first bytes before the run began, where neither the
    /// duration nor a signal reached it). The wait is the reader's now: the duration ends the
    /// run, and the reader is woken and stops.
    @Test func aSilentTokenFIFOEndsWithTheDuration() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // A writer that holds the FIFO open and writes nothing.
        let (fifo, writer) = try Self.heldFIFO(in: folder)
        defer { close(writer) }
        let (sink, port) = try CommandRunner.sink(["--no-auth"])
        defer { sink.stop() }
        let started = ContinuousClock.now
        let send = try CommandRunner.send(
            to: port,
            ["--tokens", fifo, "--duration", "2s", "--output", folder + "/run"],
            timeout: .seconds(40)
        )
        #expect(ContinuousClock.now - started < .seconds(30), "the silent writer held the send")
        // Nothing was sent: no answers, so the run is invalid (exit 4) and says so.
        #expect(send.status == 4, "\(send.standardOutput)\(send.standardError)")
        let summary = try CommandRunner.summary(in: folder + "/run")
        #expect(summary.sent == 0)
        #expect(summary.invalidity.contains(.noAnswers), "\(summary.invalidity)")
    }

    /// A FIFO with no writer at all: the send no longer blocks in open(2); SIGTERM stops it
    /// and its folder is written.
    @Test func aTokenFIFONobodyOpensYieldsToASignal() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let fifo = folder + "/tokens.fifo"
        try #require(mkfifo(fifo, 0o600) == 0)
        let (sink, port) = try CommandRunner.sink(["--no-auth"])
        defer { sink.stop() }
        let send = try Self.start(
            CommandRunner.sendArguments(to: port) + ["--tokens", fifo, "--output", folder + "/run"]
        )
        defer { send.stop() }
        try Self.waitUntil("the send holding its folder") { Self.holdsLock(send, in: folder + "/run") }
        send.signal(SIGTERM)
        let result = try send.wait(timeout: .seconds(20))
        #expect(result.status == 143, "\(result.errors)")
        let summary = try CommandRunner.summary(in: folder + "/run")
        #expect(summary.wasInterrupted(by: "SIGTERM"), "\(summary.invalidity)")
    }

    /// Issue 61, review: `send --tokens -` from a writer that wrote five tokens and stayed open
    /// sent none of them (the reader waited for a full 64 KiB), and its summary said "tokens
    /// read 0". The five go out as they come; the duration ends the run.
    @Test func tokensFromAStandardInputThatStaysOpenAreSent() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // Five lines written, the FIFO held open until the test ends.
        let (fifo, writer) = try Self.heldFIFO(in: folder)
        defer { close(writer) }
        let tokens = Array(((1...5).map { String(format: "%064x", $0) }.joined(separator: "\n") + "\n").utf8)
        #expect(tokens.withUnsafeBytes { write(writer, $0.baseAddress, $0.count) } == tokens.count)
        let (sink, port) = try CommandRunner.sink(["--no-auth"])
        defer { sink.stop() }
        // The FIFO is the send's standard input (`exec`: the signal and status are fanout's).
        let arguments =
            CommandRunner.sendArguments(to: port) + [
                "--tokens", "-", "--duration", "3s", "--min-measured", "1", "--output", folder + "/run",
            ]
        let command =
            "exec '\(CommandRunner.executable.path)' \(arguments.map { "'\($0)'" }.joined(separator: " ")) <'\(fifo)'"
        let send = try PeerProcess("sh", ["-c", command], directory: CommandRunner.repositoryRoot)
        defer { send.stop() }
        let result = try send.wait(timeout: .seconds(40))
        #expect(result.status == 0, "\(result.output)\(result.errors)")
        let summary = try CommandRunner.summary(in: folder + "/run")
        #expect(summary.sent == 5 && summary.accepted == 5, "sent \(summary.sent), accepted \(summary.accepted)")
    }

    /// Issue 61, review: `sink --expect-tokens FIFO` with no writer waited in open(2) with
    /// SIGINT and SIGTERM caught by its drain and never answered. The list is read before the
    /// drain takes the signals now: SIGTERM ends the wait as it ends any command.
    @Test func aSinkExpectingTokensFromAFIFONobodyOpensYieldsToASignal() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let fifo = folder + "/expected.fifo"
        try #require(mkfifo(fifo, 0o600) == 0)
        let sink = try Self.start([
            "sink", "--listen", "127.0.0.1:0", "--expect-tokens", fifo, "--output", folder + "/sink",
        ])
        defer { sink.stop() }
        // Signalled once one of its threads waits in the FIFO's open (the kernel's
        // `wait_for_partner`): a signal before that would prove nothing.
        let pid = sink.processIdentifier
        let waiting = poll(timeout: .seconds(20)) {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
            return tasks.contains {
                (try? String(contentsOfFile: "/proc/\(pid)/task/\($0)/wchan", encoding: .utf8)) == "wait_for_partner"
            }
        }
        try #require(waiting, "the sink never waited in the FIFO's open")
        sink.signal(SIGTERM)
        let result = try sink.wait(timeout: .seconds(10))
        #expect(result.status == 15 || result.status == 143, "\(result.errors)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/sink"))
    }

    /// Case 4 and the 'done when' check of issue #48: SIGINT during `--repeat` was ignored and
    /// SIGTERM left `repeat-1/` alone, which `fanout gate` passed as if one repeat were asked.
    /// Now the set stops, says how far it came, and the gate refuses it.
    @Test(arguments: [("SIGTERM", SIGTERM, Int32(143)), ("SIGINT", SIGINT, 130)])
    func aSignalAfterTheSecondRepeatLeavesASetTheGateRefuses(name: String, signal: Int32, status: Int32) throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try Self.interruptRepeats(5, in: folder, after: 2, with: signal)
        #expect(result.status == status, "\(result.errors)")
        let manifest = try #require(try RepeatManifest.read(in: folder + "/set"), "\(result.output)")
        #expect(manifest.interrupted == name && manifest.finished == 2 && manifest.asked == 5, "\(manifest)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/set/repeat-4"))
        let reasons = try RunSet.load(folder + "/set").setReasons
        try #require(reasons == [.repeatsInterrupted(finished: 2, asked: 5)])
        let gate = try CommandRunner.run(["gate", folder + "/set", "--threshold", "errors == 0"])
        #expect(gate.status == 2, "\(gate.standardOutput)\(gate.standardError)")
        let said = gate.standardOutput.split(separator: "\n").map(String.init)
        #expect(said.count { $0 == "INVALID run: \(reasons[0])" } == 1, "\(gate.standardOutput)")
    }

    /// A set whose process was killed (SIGKILL: nothing can be written) has fewer repeats than
    /// asked, and `repeats.json` says how many were: the gate refuses it as partial.
    @Test func aKilledRepeatSetIsPartialAndTheGateRefusesIt() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        _ = try Self.interruptRepeats(4, in: folder, after: 1, with: SIGKILL)
        let gate = try CommandRunner.run(["gate", folder + "/set", "--threshold", "errors == 0"])
        #expect(gate.status == 2, "\(gate.standardOutput)\(gate.standardError)")
        let reasons = try RunSet.load(folder + "/set").setReasons
        let partial =
            reasons.count == 1 && { if case .repeatsPartial(_, asked: 4) = reasons[0] { true } else { false } }()
        #expect(partial, "\(reasons)")
        let said = gate.standardOutput.split(separator: "\n").map(String.init)
        #expect(
            said.count { $0 == "INVALID run: \(reasons.first.map { "\($0)" } ?? "")" } == 1,
            "\(gate.standardOutput)"
        )
        // Issue #61, case 4: with repeats.json removed, the one repeat passed as the whole set.
        try FileManager.default.removeItem(atPath: folder + "/set/" + RepeatManifest.fileName)
        let without = try CommandRunner.run(["gate", folder + "/set", "--threshold", "errors == 0"])
        #expect(without.status == 2, "\(without.standardOutput)\(without.standardError)")
        #expect(try RunSet.load(folder + "/set").setReasons == [.repeatsWithoutManifest(found: 1)])
    }

    /// Issue #61, case 9: `plan --verify` ignored the stop signals, and a plan.json whose
    /// rehearsal was killed never said it had not run. plan.json now says `running` before the
    /// rehearsal sends anything; SIGTERM or SIGHUP stops the rehearsal, whose folder is written
    /// marked interrupted, and plan.json says by which signal; the exit status is 128 + n.
    @Test(arguments: [("SIGTERM", SIGTERM, Int32(143)), ("SIGHUP", SIGHUP, 129)])
    func aStoppedRehearsalSaysSoInItsPlan(name: String, signal: Int32, status: Int32) throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // One connection of 20 streams 50 ms away: some 360 a second, 100,000 devices take minutes.
        let plan = try Self.start([
            "plan", "--devices", "100000", "--deadline", "600s", "--rtt", "50ms", "--streams", "20", "--verify",
            "--output", folder + "/plan",
        ])
        defer { plan.stop() }
        try Self.waitUntil("plan.json written") { FileManager.default.fileExists(atPath: folder + "/plan/plan.json") }
        #expect(try CommandRunner.plan(in: folder + "/plan").verification?.status == .running)
        try Self.waitUntilSending(plan)
        plan.signal(signal)
        let result = try plan.wait(timeout: .seconds(30))
        #expect(result.status == status, "\(result.errors)")
        let verification = try #require(try CommandRunner.plan(in: folder + "/plan").verification)
        #expect(verification == .init(status: .interrupted, signal: name, folder: "verify"), "\(verification)")
        let rehearsal = try CommandRunner.summary(in: folder + "/plan/verify")
        #expect(rehearsal.wasInterrupted(by: name), "\(rehearsal.invalidity)")
        #expect(rehearsal.accepted > 0 && rehearsal.accepted < 100_000)
    }
}
