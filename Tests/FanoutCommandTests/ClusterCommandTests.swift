import FanoutTestSupport
import Foundation
import Testing

/// `fanout cluster render`'s manifests, validated offline against Kubernetes 1.33's schemas by
/// PyPI's kubernetes-validate (--strict: no unknown field), their fields checked by PyYAML; and
/// `--metrics`, which the shards' pods are scraped at, read by prometheus_client's parser.
@Suite(.serialized) struct ClusterCommandTests {
    static let send = [
        "--", "--generate", "50000000", "--template", "fixtures/poll.json", "--topic", "com.example.app", "--rate",
        "167000", "--duration", "5m",
    ]

    /// What `Peers/check_manifests.py` found in the manifests (PyYAML's reading): each key only
    /// when the manifests hold what it comes from.
    struct Found: Decodable {
        var kinds: [String]
        var files: [String: String]?
        var secret: [String]?
        var sinkArgs: [String]?
        var shards: Shards?
        var merge: Merge?

        struct Shards: Decodable {
            var completionMode: String
            var completions: Int
            var parallelism: Int
            var backoffLimitPerIndex: Int
            var podReplacementPolicy: String
            /// The exit statuses that fail the whole Job (its other pods ended).
            var failJobOnExitCodes: [Int]
            var restartPolicy: String
            var spreadKey: String
            /// The limits, when the requests are the same (`null` otherwise).
            var resources: [String: String]?
            var scrape: [String: String]
            var claim: String
            var firstPod: [String]
            var lastPod: [String]
        }

        struct Merge: Decodable {
            var backoffLimit: Int
            var script: String
        }
    }

    /// Renders, validates and checks the manifests; returns the checker's findings.
    static func renderAndCheck(_ options: [String], shards: Int) throws -> Found {
        let folder = NSTemporaryDirectory() + "fanout-cluster-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let rendered = try CommandRunner.run(["cluster", "render", "--shards", "\(shards)"] + options)
        try #require(rendered.status == 0, "\(rendered.standardError)")
        let file = folder + "/manifests.yaml"
        try Data(rendered.standardOutput.utf8).write(to: URL(fileURLWithPath: file))
        let validated = try PeerProcess.run("kubernetes-validate", ["--strict", "-k", "1.33.0", file])
        #expect(validated.status == 0, "\(validated.output)\(validated.errors)")
        // A line a resource, each passed (none "ERROR"), whole.
        let verdicts = validated.output.split(separator: "\n")
        #expect(
            !verdicts.isEmpty
                && verdicts.allSatisfy {
                    $0.wholeMatch(of: #/INFO \S+ passed for resource [a-z]+\/[a-z0-9-]+ against version 1\.33/#) != nil
                },
            "\(validated.output)"
        )
        let checked = try PeerProcess.run(
            "python3",
            [CommandRunner.repositoryRoot + "/Tests/FanoutCommandTests/Peers/check_manifests.py", file]
        )
        try #require(checked.status == 0, "\(checked.errors)")
        return try JSONDecoder().decode(Found.self, from: Data(checked.output.utf8))
    }

    @Test(.requires(.kubernetesValidate, .yaml), arguments: [1, 8, 1000])
    func theManifestsAreValidKubernetesAndRunEachShardOnce(shards: Int) throws {
        let found = try Self.renderAndCheck(
            [
                "--image", "registry.example/fanout:0.2.0", "--name", "fanout-50m", "--start-at",
                "2030-01-01T00:00:00Z", "--cpu", "3", "--memory", "2Gi",
            ] + Self.send + ["--endpoint", "https://push-gateway.example.com"],
            shards: shards
        )
        #expect(found.kinds == ["ConfigMap", "Job", "Job"])
        let job = try #require(found.shards)
        #expect(job.completionMode == "Indexed")
        #expect(job.completions == shards)
        #expect(job.parallelism == shards)
        #expect(job.backoffLimitPerIndex == 0)
        #expect(job.podReplacementPolicy == "Failed")
        // A shard its --abort-on stopped (exit status 6) ends the others.
        #expect(job.failJobOnExitCodes == [6])
        #expect(job.restartPolicy == "Never")
        #expect(job.spreadKey == "kubernetes.io/hostname")
        #expect(job.resources == ["cpu": "3", "memory": "2Gi"])
        #expect(job.scrape == ["scrape": "true", "port": "9464", "path": "/metrics"])
        #expect(job.claim == "fanout-results")
        // What pod 0 and the last pod run, through the shell the script is given to.
        let first = job.firstPod
        #expect(
            first.starts(with: ["fanout", "send", "--generate", "50000000", "--template", "/etc/fanout/files/template"])
        )
        #expect(Self.value(after: "--shard", in: first) == "1/\(shards)")
        #expect(Self.value(after: "--start-at", in: first) == "2030-01-01T00:00:00.000Z")
        #expect(Self.value(after: "--output", in: first) == "/results/fanout-50m/shard-1")
        #expect(Self.value(after: "--metrics", in: first) == "0.0.0.0:9464")
        let last = job.lastPod
        #expect(Self.value(after: "--shard", in: last) == "\(shards)/\(shards)")
        #expect(Self.value(after: "--output", in: last) == "/results/fanout-50m/shard-\(shards)")
        // The files travel in the ConfigMap.
        let files = try #require(found.files)
        let template = try String(contentsOfFile: CommandRunner.repositoryRoot + "/fixtures/poll.json", encoding: .utf8)
        #expect(files["template"] == template)
        #expect(files["thresholds"] == "failed == 0\n")
        let merge = try #require(found.merge)
        #expect(merge.backoffLimit == 0)
        // The script's lines, each whole (indentation aside).
        let script = merge.script.split(separator: "\n").map { $0.drop { $0 == " " } }.joined(separator: "\n")
        #expect(
            lines(of: script, keyed: "fanout ")
                == [
                    "fanout merge $(ls -d $dir/shard-*/ 2>/dev/null | sed 's:/$::') --output $dir/merged",
                    "fanout gate $dir/merged --thresholds /etc/fanout/files/thresholds --junit $dir/merged/junit.xml",
                ],
            "\(merge.script)"
        )
        #expect(lines(of: script, keyed: "while [ $i") == ["while [ $i -le \(shards) ]; do"], "\(merge.script)")
    }

    @Test(.requires(.kubernetesValidate, .yaml)) func withASinkTheShardsSendToItsServiceAndKeysGoInASecret() throws {
        let folder = NSTemporaryDirectory() + "fanout-cluster-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Data("p99 < 250ms\nerrors < 0.1%\n".utf8).write(to: URL(fileURLWithPath: folder + "/gate.txt"))
        try Data("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n".utf8)
            .write(to: URL(fileURLWithPath: folder + "/key.p8"))
        let found = try Self.renderAndCheck(
            [
                "--image", "fanout:test", "--namespace", "load", "--with-sink", "--sink-option", "--latency",
                "--sink-option", "fixed:80ms", "--thresholds", folder + "/gate.txt", "--claim-size", "20Gi",
                "--", "--generate", "1000", "--template", "fixtures/poll.json", "--topic", "com.example.app",
                "--key-file", folder + "/key.p8", "--key-id", "ABCDE12345", "--team-id", "TEAM123456",
            ],
            shards: 3
        )
        #expect(
            found.kinds
                == ["PersistentVolumeClaim", "ConfigMap", "Secret", "Deployment", "Service", "Job", "Job"]
        )
        let job = try #require(found.shards)
        let first = job.firstPod
        #expect(Self.value(after: "--endpoint", in: first) == "http://fanout-sink.load.svc:2197")
        #expect(Self.value(after: "--key-file", in: first) == "/etc/fanout/keys/key-file")
        #expect(
            found.sinkArgs == [
                "sink", "--listen", "0.0.0.0:2197", "--admin", "0.0.0.0:9090", "--latency", "fixed:80ms",
            ]
        )
        #expect(found.files?["thresholds"] == "p99 < 250ms\nerrors < 0.1%\n")
        #expect(found.secret?.contains("key-file") == true)
    }

    @Test func optionsTheManifestsSetOrThatCannotWorkAreRefused() throws {
        let base = ["cluster", "render", "--shards", "4", "--image", "fanout:1"]
        let shard = try CommandRunner.run(base + Self.send + ["--endpoint", "http://x:1", "--shard", "1/2"])
        #expect(shard.status == 64)
        #expect(
            errorLine(of: shard.standardError)
                == "error: --shard: set for each shard by the manifests: leave it out of the send options",
            "\(shard.standardError)"
        )
        let noEndpoint = try CommandRunner.run(base + Self.send)
        #expect(noEndpoint.status == 64)
        #expect(
            errorLine(of: noEndpoint.standardError)
                == "error: the send options need --endpoint URL (or --with-sink, to send to a sink in the cluster).",
            "\(noEndpoint.standardError)"
        )
        let badSend = try CommandRunner.run(base + ["--", "--endpoint", "http://x:1", "--topic", "t"])
        #expect(badSend.status == 64)
        #expect(
            errorLine(of: badSend.standardError)
                == "error: the send options after --: Missing expected argument '--template <file>'",
            "\(badSend.standardError)"
        )
        let badName = try CommandRunner.run(base + ["--name", "Fan_Out"] + Self.send + ["--endpoint", "http://x:1"])
        #expect(badName.status == 64)
        #expect(
            errorLine(of: badName.standardError)
                == "error: --name Fan_Out: lowercase letters, digits and '-', starting and ending with a letter or digit, at most 40",
            "\(badName.standardError)"
        )
        let missingFile = try CommandRunner.run(
            base + [
                "--", "--endpoint", "http://x:1", "--generate", "10", "--template", "/nonexistent.json", "--topic", "t",
            ]
        )
        // The send's missing template, as every command says a missing file (exit 1).
        #expect(missingFile.status == 1)
        #expect(
            errorLine(of: missingFile.standardError) == "error: cannot read --template /nonexistent.json: no such file",
            "\(missingFile.standardError)"
        )
        // The in-cluster sink's options are parsed as its pod will: one rendered argument
        // "--latency fixed:80ms" (the sink refuses it) and an unknown option are refused here.
        let joined = try CommandRunner.run(
            base + ["--with-sink", "--sink-option", "--latency fixed:80ms"] + Self.send
        )
        #expect(joined.status == 64)
        #expect(
            joined.standardError.contains(
                "give each its own --sink-option, like --sink-option=--latency --sink-option=fixed:80ms"
            ),
            "\(joined.standardError)"
        )
        let unknown = try CommandRunner.run(base + ["--with-sink", "--sink-option=--bogus"] + Self.send)
        #expect(unknown.status == 64)
        #expect(
            errorLine(of: unknown.standardError) == "error: the --sink-option values: Unknown option '--bogus'",
            "\(unknown.standardError)"
        )
        // A loopback endpoint renders, with a word: in a pod it is the pod.
        let loopback = try CommandRunner.run(base + Self.send + ["--endpoint", "http://127.0.0.1:2197"])
        #expect(loopback.status == 0, "\(loopback.standardError)")
        #expect(
            loopback.standardError
                == "warning: --endpoint http://127.0.0.1:2197 is each pod's own loopback, not a service in the cluster\n",
            "\(loopback.standardError)"
        )
    }

    static func value(after option: String, in words: [String]) -> String? {
        guard let index = words.firstIndex(of: option), index + 1 < words.count else { return nil }
        return words[index + 1]
    }

    /// `--metrics`: while a run lasts its counts are served in Prometheus' format, labelled
    /// with the shard, and prometheus_client parses them.
    @Test(.requires(.curl, .prometheusClient)) func aRunServesItsCountsToPrometheusWhileItLasts() throws {
        let output = NSTemporaryDirectory() + "fanout-metrics-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: output) }
        let run = try PeerProcess(
            CommandRunner.executable.path,
            [
                "run", "--rate", "2000", "--duration", "4s", "--shard", "2/3", "--metrics", "127.0.0.1:0", "--output",
                output,
            ]
        )
        defer { run.stop() }
        let port = try run.announcedPort(after: "metrics on ")
        // Scraped until the counts show accepted notifications and a second has closed (counts
        // reach the statistics every 256 outcomes, latencies as each second closes: before, the
        // summary's quantiles are NaN), while the run still lasts.
        var scrape = PeerProcess.Result(status: -1, output: "", errors: "")
        let counting = try poll(timeout: .seconds(30), every: .milliseconds(200)) {
            scrape = try PeerProcess.run("curl", ["-sf", "http://127.0.0.1:\(port)/metrics"])
            let lines = scrape.output.split(separator: "\n")
            return scrape.status == 0
                && lines.contains { $0.hasPrefix("fanout_sender_accepted_total") && !$0.hasSuffix(" 0") }
                && lines.contains { $0.hasPrefix("fanout_sender_latency_seconds_count") && !$0.hasSuffix(" 0") }
        }
        try #require(counting, "\(scrape.output)\(scrape.errors)")
        let parsed = try PeerProcess.run(
            "python3",
            [CommandRunner.repositoryRoot + "/Tests/FanoutSinkTests/Peers/prometheus_parse.py"],
            input: Data(scrape.output.utf8)
        )
        try #require(parsed.status == 0, "\(parsed.errors)\n\(scrape.output)")
        let samples = try JSONDecoder().decode([PrometheusSample].self, from: Data(parsed.output.utf8))
        func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
            samples.first { $0.name == name && $0.labels.filter { $0.key != "shard" } == labels }?.value
        }
        #expect(samples.allSatisfy { $0.labels["shard"] == "2/3" })
        let sent = try #require(value("fanout_sender_sent_total"))
        #expect(sent > 0 && sent < 8000, "\(scrape.output)")
        #expect(value("fanout_sender_accepted_total") == sent)
        #expect(value("fanout_sender_in_flight") != nil)
        #expect(value("fanout_sender_latency_seconds", ["quantile": "0.99"])?.isFinite == true, "\(scrape.output)")
        #expect(value("fanout_sender_latency_seconds_count") != nil)
        // The metrics are the subject, not the pace: 0, or 4 for a generator that a loaded
        // machine held back.
        let finished = try run.wait(timeout: .seconds(60))
        try expectValidOrLagged(status: finished.status, folder: output, "\(finished.output)\(finished.errors)")
    }
}
