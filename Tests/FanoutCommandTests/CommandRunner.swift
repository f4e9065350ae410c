import FanoutResults
import FanoutTestSupport
import Foundation

/// Runs the `fanout` executable (or another of the package's programs) built beside the test
/// bundle, with a time bound.
struct CommandRunner {
    struct Result {
        var status: Int32
        var standardOutput: String
        var standardError: String
    }

    /// The repository's root, found from this file's place in it.
    static let repositoryRoot: String = {
        var path = #filePath
        for _ in 0..<3 { path = String(path[..<path.lastIndex(of: "/")!]) }
        return path
    }()

    /// `fanout` sits in the same build folder as the test bundle, and the package's other
    /// programs beside it; `FANOUT_EXECUTABLE` names another build of it (scripts/test.sh runs
    /// the ground-truth suite against the release build).
    static let executable: URL = {
        if let path = ProcessInfo.processInfo.environment["FANOUT_EXECUTABLE"], !path.isEmpty {
            return URL(fileURLWithPath: path).resolvingSymlinksInPath()
        }
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var folder = bundle.deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: folder.appendingPathComponent("fanout").path),
            folder.path != "/"
        {
            folder.deleteLastPathComponent()
        }
        return folder.appendingPathComponent("fanout")
    }()

    static func run(
        _ arguments: [String],
        program: String = "fanout",
        input: String? = nil,
        environment: [String: String] = [:],
        timeout: Duration = .seconds(30)
    ) throws -> Result {
        let process = Process()
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        if let input { process.standardInput = FileHandle(forReadingAtPath: input) }
        process.executableURL = executable.deletingLastPathComponent().appendingPathComponent(program)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: repositoryRoot)
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        // Read while it runs so a full pipe cannot block it.
        let group = DispatchGroup()
        nonisolated(unsafe) var outputData = Data()
        nonisolated(unsafe) var errorData = Data()
        DispatchQueue.global().async(group: group) { outputData = output.fileHandleForReading.readDataToEndOfFile() }
        DispatchQueue.global().async(group: group) { errorData = error.fileHandleForReading.readDataToEndOfFile() }
        poll(timeout: timeout) { !process.isRunning }
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
            throw TimedOut(arguments: arguments)
        }
        _ = group.wait(timeout: .now() + 10)
        return Result(
            status: process.terminationStatus,
            standardOutput: String(decoding: outputData, as: UTF8.self),
            standardError: String(decoding: errorData, as: UTF8.self)
        )
    }

    /// `fanout send` of the poll notification (fixtures/poll.json, topic com.example.app) to the
    /// sink on loopback `port`, with `arguments` (the tokens, the output, the shape).
    static func send(to port: Int, _ arguments: [String], timeout: Duration = .seconds(30)) throws -> Result {
        try run(sendArguments(to: port) + arguments, timeout: timeout)
    }

    /// `send`'s arguments for the poll notification to the sink on loopback `port` (for a test
    /// that starts the send as a process of its own).
    static func sendArguments(to port: Int) -> [String] {
        [
            "send", "--verbose", "--endpoint", "http://127.0.0.1:\(port)", "--template", "fixtures/poll.json",
            "--topic",
            "com.example.app",
        ]
    }

    /// `fanout sink --listen 127.0.0.1:0` with `arguments`, once it says where it listens; the
    /// caller stops it.
    static func sink(_ arguments: [String]) throws -> (sink: PeerProcess, port: Int) {
        let sink = try PeerProcess(executable.path, ["sink", "--listen", "127.0.0.1:0"] + arguments)
        do {
            return (sink, try sink.announcedPort())
        } catch {
            sink.stop()
            throw error
        }
    }

    /// The `accepted` count of a sink's `/stats` on its `--admin` port; `nil` when it cannot be
    /// read.
    static func sinkAccepted(admin: Int) -> Int? {
        struct Stats: Decodable { var accepted: Int }
        guard let result = try? PeerProcess.run("curl", ["-sf", "--max-time", "5", "http://127.0.0.1:\(admin)/stats"]),
            result.status == 0
        else { return nil }
        return (try? JSONDecoder().decode(Stats.self, from: Data(result.output.utf8)))?.accepted
    }

    /// A run folder's summary.json, read as `fanout` reads it.
    static func summary(in folder: String) throws -> SummaryDocument {
        try SummaryDocument.read(folder + "/summary.json")
    }

    /// A sink folder's summary.json as JSON, and its provider card: each rule's count, and the
    /// violations in all (`nil` when the folder has no card).
    static func providerCard(
        in folder: String
    ) throws -> (summary: [String: Any], counts: [String: Int], violations: Int?) {
        let data = try Data(contentsOf: URL(fileURLWithPath: folder + "/summary.json"))
        let summary = try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
        let card = (summary["provider"] as? [String: Any])?["card"] as? [String: Any]
        let checks = card?["checks"] as? [[String: Any]] ?? []
        let counts = Dictionary(
            uniqueKeysWithValues: checks.map { ($0["rule"] as? String ?? "", $0["count"] as? Int ?? -1) }
        )
        return (summary, counts, card?["violations"] as? Int)
    }

    /// A folder's plan.json, as `fanout plan --output` wrote it.
    static func plan(in folder: String) throws -> PlanDocument {
        try JSONDecoder().decode(PlanDocument.self, from: Data(contentsOf: URL(fileURLWithPath: folder + "/plan.json")))
    }

    /// The top-level key names of a run folder's summary.json.
    static func summaryKeys(in folder: String) throws -> JSONKeys {
        try JSONDecoder().decode(JSONKeys.self, from: Data(contentsOf: URL(fileURLWithPath: folder + "/summary.json")))
    }

    /// Whether a run folder's summary.json holds `null` at `path` (present, not absent).
    static func summaryHoldsNull(in folder: String, at path: [String]) throws -> Bool {
        try holdsNull(Data(contentsOf: URL(fileURLWithPath: folder + "/summary.json")), at: path)
    }

    struct TimedOut: Error, CustomStringConvertible {
        var arguments: [String]
        var description: String { "fanout \(arguments.joined(separator: " ")) did not finish in time" }
    }
}

/// What `Peers/compare_hlogs.py` prints: whether a merged interval log is the sum of its parts,
/// second by second.
struct HlogComparison: Decodable {
    var equal: Bool
    var total: Int
    var seconds: Int
    var problems: [String]

    init(output: String) throws {
        self = try JSONDecoder().decode(Self.self, from: Data(output.utf8))
    }
}
