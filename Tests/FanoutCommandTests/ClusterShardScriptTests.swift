import FanoutResults
import FanoutTestSupport
import Foundation
import Testing

/// The shards' pod script as `fanout cluster render` writes it, run by a real shell with the
/// real `fanout` (its results folder moved into a temporary one, its metrics port to an
/// ephemeral one): the shell is the pod's first process, to which Kubernetes sends SIGTERM when
/// the Job fails (another shard's `--abort-on`) or the pod is deleted.
@Suite struct ClusterShardScriptTests {
    /// The shard script of a two-shard render sending to the sink on `port`.
    static func shardScript(port: Int, folder: String) throws -> String {
        let rendered = try CommandRunner.run([
            "cluster", "render", "--shards", "2", "--image", "fanout:test", "--name", "abort", "--start-at",
            "2020-01-01T00:00:00Z", "--", "--endpoint", "http://127.0.0.1:\(port)", "--generate", "200000",
            "--template", "fixtures/poll.json", "--topic", "com.example.app", "--rate", "1000", "--duration", "60s",
        ])
        try #require(rendered.status == 0, "\(rendered.standardError)")
        let file = folder + "/manifests.yaml"
        try Data(rendered.standardOutput.utf8).write(to: URL(fileURLWithPath: file))
        let extracted = try PeerProcess.run(
            "python3",
            [
                "-c",
                "import sys, yaml\nfor d in yaml.safe_load_all(open(sys.argv[1])):\n"
                    + "    if d and d['kind'] == 'Job' and d['metadata']['name'].endswith('-shards'):\n"
                    + "        print(d['spec']['template']['spec']['containers'][0]['args'][0])",
                file,
            ]
        )
        try #require(extracted.status == 0, "\(extracted.errors)")
        return extracted.output.replacing("/results/", with: folder + "/")
            .replacing("0.0.0.0:9464", with: "127.0.0.1:0")
            .replacing("/etc/fanout/files/template", with: CommandRunner.repositoryRoot + "/fixtures/poll.json")
    }

    /// SIGTERM to the shell reaches `fanout send`: it writes its folder marked interrupted, and
    /// the shell leaves 143 as the shard's exit status and exits with it — not killed 30 s later
    /// with no folder, as a shell that is a pod's first process and ignores SIGTERM would be.
    @Test(.requires(.yaml)) func sigtermToTheShardsShellStopsFanoutSendCleanly() throws {
        let folder = NSTemporaryDirectory() + "fanout-shard-script-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder + "/bin", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createSymbolicLink(
            atPath: folder + "/bin/fanout",
            withDestinationPath: CommandRunner.executable.path
        )
        let (sink, port) = try CommandRunner.sink(["--no-auth"])
        defer { sink.stop() }
        let script = try Self.shardScript(port: port, folder: folder)
        let shell = try PeerProcess(
            "/usr/bin/env",
            ["JOB_COMPLETION_INDEX=0", "PATH=\(folder)/bin:/usr/bin:/bin", "/bin/sh", "-c", script],
            directory: CommandRunner.repositoryRoot
        )
        defer { shell.stop() }
        let run = folder + "/abort/shard-1"
        // The lock is taken once its signal handlers are in place; then the sink answers it
        // (some 50 answers written, at ~40 bytes and more each, besides its start-up lines).
        try #require(poll(timeout: .seconds(30)) { FileManager.default.fileExists(atPath: run + "/.lock") })
        let before = sink.bytesWritten
        try #require(poll(timeout: .seconds(30)) { sink.bytesWritten > before + 2_000 })
        shell.signal(SIGTERM)
        let result = try shell.wait(timeout: .seconds(20))
        #expect(result.status == 143, "\(result.output)\(result.errors)")
        let exit = try String(contentsOfFile: folder + "/abort/shard-1.exit", encoding: .utf8)
        #expect(exit.trimmingCharacters(in: .whitespacesAndNewlines) == "143")
        let summary = try CommandRunner.summary(in: run)
        #expect(summary.shard == "1/2")
        #expect(summary.wasInterrupted(by: "SIGTERM"), "\(summary.invalidity)")
    }
}
