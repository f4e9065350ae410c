import FanoutNotation
import FanoutTestSupport
import Foundation
import Testing

@testable import FanoutRun

/// `ClusterManifests` alone: what it refuses before rendering, where the files the send options
/// name go, and the shard's shell line.
@Suite struct ClusterManifestsTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    static func folder() throws -> String {
        let folder = NSTemporaryDirectory() + "fanout-manifests-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    static func manifests(_ options: [String]) -> ClusterManifests {
        ClusterManifests(shards: 3, image: "fanout:test", startAt: start, sendOptions: options)
    }

    static func refusal(_ manifests: ClusterManifests) -> String? { failure(manifests)?.description }

    static func failure(_ manifests: ClusterManifests) -> JobError? {
        do {
            _ = try manifests.render()
            return nil
        } catch {
            return error
        }
    }

    @Test func optionsTheManifestsSetOrCannotCarryAreRefused() {
        let endpoint = ["--endpoint", "https://push.example.com"]
        // Each refusal is placed at its option; the words are the rule.
        #expect(
            Self.failure(Self.manifests(endpoint + ["--shard=1/2"]))
                == .option(.option("--shard"), "set for each shard by the manifests: leave it out of the send options")
        )
        #expect(Self.failure(Self.manifests(endpoint + ["--output", "x"]))?.place == .option("--output"))
        #expect(
            Self.refusal(Self.manifests(["--generate", "10"]))
                == "the send options need --endpoint URL (or render --with-sink to send to a sink in the cluster)"
        )
        var many = Self.manifests(endpoint)
        many.shards = 10_001
        #expect(Self.failure(many) == .option(.option("--shards"), "from 1 to 10000, not 10001"))
        var named = Self.manifests(endpoint)
        named.name = "Fanout_Run"
        #expect(Self.refusal(named)?.hasPrefix("--name Fanout_Run: lowercase letters") == true)
        #expect(
            Self.failure(Self.manifests(endpoint + ["--template", "/nonexistent/poll.json"]))
                == .cannotRead(
                    .optionValue("--template", "/nonexistent/poll.json"),
                    "the manifests carry its contents, so it must be readable here"
                )
        )
        #expect(Self.refusal(Self.manifests(endpoint)) == nil)
        // What a caller matches on: the command line to change, or a file to fix.
        #expect(Self.failure(many)?.kind == .option)
        #expect(Self.failure(Self.manifests(endpoint + ["--template", "/nonexistent/poll.json"]))?.kind == .input)
    }

    /// `--output` refusals are the command line's to fix (a file where a folder goes, a folder
    /// that is also an input); a folder that cannot be made is the output's.
    @Test func outputRefusalsSayWhatToChange() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = folder + "/summary.json"
        try "{}".write(toFile: file, atomically: true, encoding: .utf8)
        do {
            _ = try RunOutput(preparing: file)
            Issue.record("a file was taken for a folder")
        } catch {
            #expect(error.kind == .option)
            #expect(error.place == .optionValue("--output", file))
            #expect(error.problem == .said("a file, not a folder: give a folder for the results"))
        }
        do {
            _ = try RunOutput(preparing: folder + "/new", inputs: [folder + "/new"])
            Issue.record("an output that is also an input was taken")
        } catch {
            #expect(error.kind == .option)
        }
        do {
            _ = try RunOutput(preparing: file + "/under-a-file")
            Issue.record("a folder under a file was taken")
        } catch {
            #expect(error.kind == .output, "\(error)")
        }
    }

    /// A template's text goes in the ConfigMap and a key in the Secret; the shard's options
    /// point at their mounts, never at the paths on this machine.
    @Test func filesTheOptionsNameTravelInTheManifests() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let template = folder + "/poll.json"
        try #"{"aps":{"alert":"from the config map"}}"#.write(toFile: template, atomically: true, encoding: .utf8)
        let key = folder + "/AuthKey.p8"
        try "not really a key\n".write(toFile: key, atomically: true, encoding: .utf8)
        let yaml = try Self.manifests([
            "--endpoint", "https://push.example.com", "--template=\(template)", "--key-file", key,
        ]).render()
        // The template's text in the config map, whole.
        #expect(
            lines(of: yaml, keyed: "  template: ") == [#"  template: "{\"aps\":{\"alert\":\"from the config map\"}}""#],
            "\(yaml)"
        )
        #expect(yaml.contains(#"kind: "Secret""#))
        #expect(yaml.contains(Data("not really a key\n".utf8).base64EncodedString()), "\(yaml)")
        // The shard's command, whole: the files by their paths in the pod.
        let start = TimeNotation.format(Self.start)
        #expect(
            lines(of: yaml, keyed: #"        - "set -u\ni=$((JOB_COMPLETION_INDEX"#)
                == [
                    #"        - "set -u\ni=$((JOB_COMPLETION_INDEX + 1))\nmkdir -p /results/fanout\n"#
                        + #"(while :; do touch /results/fanout/shard-$i.alive; sleep 5; done) &\nbeat=$!\n"#
                        + #"'fanout' 'send' '--endpoint' 'https://push.example.com' "#
                        + #"'--template' '/etc/fanout/files/template' '--key-file' '/etc/fanout/keys/key-file' "#
                        + #"--shard \"$i/3\" --start-at \#(start) --output /results/fanout/shard-$i "#
                        + #"--metrics 0.0.0.0:9464 &\npid=$!\ntrap 'kill -TERM $pid 2>/dev/null' TERM INT\nstatus=0\n"#
                        + #"while kill -0 $pid 2>/dev/null; do wait $pid; status=$?; done\nkill $beat\n"#
                        + #"echo $status > /results/fanout/shard-$i.exit\nexit $status""#
                ],
            "\(yaml)"
        )
        #expect(!yaml.contains(folder), "a path on this machine reached the manifests")
        // No thresholds file: the gate asks that nothing failed.
        #expect(lines(of: yaml, keyed: "  thresholds: ") == [#"  thresholds: "failed == 0\n""#], "\(yaml)")
        #expect(
            lines(of: yaml, keyed: "# fanout cluster render: ")
                == [
                    "# fanout cluster render: 3 shards of `fanout send`, starting at \(start); "
                        + "apply with `kubectl apply -f -`."
                ],
            "\(yaml)"
        )
    }

    /// With a sink in the cluster and no endpoint given, the shards send to the sink's service.
    @Test func withASinkTheShardsSendToItsService() throws {
        var manifests = Self.manifests(["--generate", "1000"])
        manifests.withSink = true
        manifests.name = "load"
        manifests.namespace = "bench"
        let yaml = try manifests.render()
        #expect(
            lines(of: yaml, keyed: #"        - "set -u\ni=$((JOB_COMPLETION_INDEX"#)
                == [
                    #"        - "set -u\ni=$((JOB_COMPLETION_INDEX + 1))\nmkdir -p /results/load\n"#
                        + #"(while :; do touch /results/load/shard-$i.alive; sleep 5; done) &\nbeat=$!\n"#
                        + #"'fanout' 'send' '--generate' '1000' "#
                        + #"'--endpoint' 'http://load-sink.bench.svc:\#(ClusterManifests.sinkPort)' "#
                        + #"--shard \"$i/3\" --start-at \#(TimeNotation.format(Self.start)) --output /results/load/shard-$i "#
                        + #"--metrics 0.0.0.0:9464 &\npid=$!\ntrap 'kill -TERM $pid 2>/dev/null' TERM INT\nstatus=0\n"#
                        + #"while kill -0 $pid 2>/dev/null; do wait $pid; status=$?; done\nkill $beat\n"#
                        + #"echo $status > /results/load/shard-$i.exit\nexit $status""#
                ],
            "\(yaml)"
        )
        #expect(yaml.contains(#"kind: "Deployment""#) && yaml.contains(#"kind: "Service""#))
    }

    @Test func loopbackEndpointsAreFound() {
        #expect(
            ClusterManifests.loopbackEndpoint(in: ["--endpoint", "http://127.0.0.1:2197"]) == "http://127.0.0.1:2197"
        )
        #expect(ClusterManifests.loopbackEndpoint(in: ["--endpoint=https://localhost"]) == "https://localhost")
        #expect(ClusterManifests.loopbackEndpoint(in: ["--endpoint", "https://[::1]:443"]) == "https://[::1]:443")
        #expect(ClusterManifests.loopbackEndpoint(in: ["--endpoint", "https://api.push.apple.com"]) == nil)
        #expect(ClusterManifests.loopbackEndpoint(in: ["--generate", "10"]) == nil)
        #expect(ClusterManifests.namesEndpoint(["--endpoint=https://h"]))
        #expect(!ClusterManifests.namesEndpoint(["--endpoints", "https://h"]))
    }

    /// A word quoted for the shard's shell comes out of `sh` as it went in.
    @Test func shellQuotingSurvivesTheShell() throws {
        for word in ["plain", "it's", "a b", "$HOME", "'", "\"quoted\"", "back\\slash", "*"] {
            let result = try PeerProcess.run(
                "sh",
                ["-c", "printf %s " + ClusterManifests.shellQuoted(word)],
                timeout: .seconds(10)
            )
            #expect(result.status == 0 && result.output == word, "\(word): \(result.output)")
        }
    }
}
