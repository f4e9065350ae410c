import FanoutTestSupport
import Foundation
import Testing

/// A file an option names that is not there is one error in one form, whichever option and
/// command: `error: cannot read OPTION PATH: no such file`, exit 1 (`fanout --help`: 1 for "an
/// error (a template, a token, a file)"). Newcomer passes 4 and 5 met four wordings and exits
/// of 1 and 64 (a usage error, with the usage lines) for the same missing file.
@Suite struct MissingInputFileTests {
    static let send = ["send", "--endpoint", "http://127.0.0.1:1", "--topic", "com.example.app"]
    static let cluster = ["cluster", "render", "--shards", "2", "--image", "registry.example/fanout:1", "--name", "n"]

    @Test(arguments: [
        (send + ["--tokens", "/nonexistent/t.txt", "--template", "fixtures/poll.json"], "--tokens /nonexistent/t.txt"),
        (send + ["--generate", "1", "--template", "/nonexistent/p.json"], "--template /nonexistent/p.json"),
        (
            send + ["--generate", "1", "--template", "fixtures/poll.json", "--scenario", "/nonexistent/h.scenario"],
            "--scenario /nonexistent/h.scenario"
        ),
        (["run", "--template", "/nonexistent/p.json"], "--template /nonexistent/p.json"),
        (["run", "--sink-scenario", "/nonexistent/s.scenario"], "--sink-scenario /nonexistent/s.scenario"),
        (["sink", "--scenario", "/nonexistent/s.scenario"], "--scenario /nonexistent/s.scenario"),
        (
            ["sink", "--tls-cert", "/nonexistent/c.pem", "--tls-key", "/nonexistent/k.pem"],
            "--tls-cert /nonexistent/c.pem"
        ),
        (
            ["sink", "--key-file", "/nonexistent/k.p8", "--key-id", "ABCDE12345", "--team-id", "TEAM123456"],
            "--key-file /nonexistent/k.p8"
        ),
        (
            ["plan", "--devices", "1M", "--deadline", "5m", "--probe", "/nonexistent/probe.json"],
            "--probe /nonexistent/probe.json"
        ),
        (["search", "--slo", "p99 < 1s", "--template", "/nonexistent/p.json"], "--template /nonexistent/p.json"),
        (["tokens", "count", "--tokens", "/nonexistent/t.txt"], "--tokens /nonexistent/t.txt"),
        (
            ["payload", "render", "--template", "/nonexistent/p.json", "--token", "ab"],
            "--template /nonexistent/p.json"
        ),
        (["gate", "results/x", "--thresholds", "/nonexistent/g.txt"], "--thresholds /nonexistent/g.txt"),
        (
            cluster + [
                "--thresholds", "/nonexistent/g.txt", "--", "--endpoint", "https://push.example", "--generate", "10",
            ]
                + ["--template", "fixtures/poll.json", "--topic", "t"],
            "--thresholds /nonexistent/g.txt"
        ),
        (
            cluster + [
                "--", "--endpoint", "https://push.example", "--generate", "10", "--template", "fixtures/poll.json",
            ]
                + [
                    "--topic", "t", "--key-file", "/nonexistent/k.p8", "--key-id", "ABCDE12345", "--team-id",
                    "TEAM123456",
                ],
            "--key-file /nonexistent/k.p8"
        ),
    ])
    func aMissingFileIsOneErrorInOneForm(arguments: [String], place: String) throws {
        let result = try CommandRunner.run(arguments)
        #expect(result.status == 1, "\(arguments): \(result.standardError)")
        #expect(result.standardError == "error: cannot read \(place): no such file\n", "\(arguments)")
    }

    /// A folder where a file belongs says so; standard input (`-`) is no path to check.
    @Test func aFolderIsNoFileAndStandardInputIsNoPath() throws {
        let folder = try CommandRunner.run(["tokens", "count", "--tokens", "/tmp"])
        #expect(folder.status == 1 && folder.standardError == "error: cannot read --tokens /tmp: is a directory\n")
        let stdin = NSTemporaryDirectory() + "fanout-missing-\(UUID().uuidString).txt"
        try Data((String(repeating: "ab", count: 32) + "\n").utf8).write(to: URL(fileURLWithPath: stdin))
        defer { try? FileManager.default.removeItem(atPath: stdin) }
        let piped = try CommandRunner.run(["tokens", "count", "--tokens", "-"], input: stdin)
        #expect(
            piped.status == 0 && piped.standardOutput == "tokens: 1\nlines: 1\nskipped: 0\n",
            "\(piped.standardError)"
        )
    }
}
