import FanoutNotation
import FanoutTestSupport
import Foundation
import Testing

/// A real Prometheus (Debian's `prometheus`) scraping a sink and three `fanout send --shard K/3`
/// every second during a run: the fleet's p99 from the summed histogram buckets agrees with
/// `fanout merge`'s p99 of the same shards within one bucket, the counts agree exactly with the
/// merged summary, and every panel of dashboards/fanout.json returns data.
@Suite(.serialized) struct PrometheusFleetTests {
    /// The HTTP API's answer to an instant query: `{"status":"success","data":{"resultType":
    /// "vector","result":[{"metric":{…},"value":[1732680000.123,"42"]}]}}`.
    struct QueryAnswer: Decodable {
        struct Series: Decodable {
            var metric: [String: String]
            var value: Double

            enum CodingKeys: String, CodingKey { case metric, value }

            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                metric = try container.decode([String: String].self, forKey: .metric)
                // [timestamp, "value as text"]
                var pair = try container.nestedUnkeyedContainer(forKey: .value)
                _ = try pair.decode(Double.self)
                let text = try pair.decode(String.self)
                value = Double(text) ?? .nan
            }
        }
        struct Body: Decodable { var result: [Series] }
        var status: String
        var data: Body?
        var error: String?
    }

    struct NotAnAnswer: Error, CustomStringConvertible {
        var query: String
        var said: String
        var description: String { "Prometheus's /api/v1/query of \(query) did not answer in JSON: \(said)" }
    }

    /// The panels' queries as dashboards/fanout.json holds them.
    struct Dashboard: Decodable {
        struct Panel: Decodable {
            struct Target: Decodable { var expr: String }
            var title: String
            var targets: [Target]
        }
        var panels: [Panel]
    }

    /// A `prometheus` process listening on a loopback port it chose; stopped by `stop()`.
    final class PrometheusServer {
        let process: PeerProcess
        let port: Int

        /// Starts Prometheus scraping `targets` (`HOST:PORT`, their `/metrics`) every second,
        /// with its configuration and storage in `folder`.
        init(targets: [String], folder: String) throws {
            let config = """
                global:
                  scrape_interval: 1s
                  scrape_timeout: 1s
                scrape_configs:
                  - job_name: fanout
                    static_configs:
                      - targets: [\(targets.map { "'\($0)'" }.joined(separator: ", "))]

                """
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try config.write(toFile: folder + "/prometheus.yml", atomically: true, encoding: .utf8)
            let process = try PeerProcess(
                "prometheus",
                [
                    "--config.file", folder + "/prometheus.yml", "--storage.tsdb.path", folder + "/data",
                    "--web.listen-address", "127.0.0.1:0",
                ]
            )
            // Port 0: the port it bound is read from the kernel's table of its listening sockets.
            var found: Int?
            poll(timeout: .seconds(20), every: .milliseconds(50)) {
                found = PrometheusServer.listeningPort(of: process.processIdentifier)
                return found != nil || !process.isRunning
            }
            guard let found else {
                let said = process.stop()
                throw PeerProcess.TimedOut(command: "prometheus, waiting for it to listen: \(said.errors)")
            }
            // Listening is not ready: until its storage is open the API answers 503 in words.
            let ready = try poll(timeout: .seconds(20), every: .milliseconds(100)) {
                try PeerProcess.run("curl", ["-sf", "--max-time", "2", "http://127.0.0.1:\(found)/-/ready"]).status == 0
            }
            guard ready else {
                let said = process.stop()
                throw PeerProcess.TimedOut(command: "prometheus, waiting for /-/ready: \(said.errors)")
            }
            self.process = process
            port = found
        }

        /// The TCP port process `pid` listens on: a socket of its (`/proc/PID/fd`) in state
        /// LISTEN (`0A`) in `/proc/PID/net/tcp`, whose `local_address` is `HEXIP:HEXPORT`.
        static func listeningPort(of pid: Int32) -> Int? {
            guard let fds = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd"),
                let table = try? String(contentsOfFile: "/proc/\(pid)/net/tcp", encoding: .utf8)
            else { return nil }
            let inodes = Set(
                fds.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\($0)") }
                    .filter { $0.hasPrefix("socket:[") }.map { String($0.dropFirst(8).dropLast()) }
            )
            for line in table.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ")
                guard fields.count > 9, fields[3] == "0A", inodes.contains(String(fields[9])) else { continue }
                return fields[1].split(separator: ":").last.flatMap { Int($0, radix: 16) }
            }
            return nil
        }

        /// `expr` evaluated now (an instant query on the HTTP API).
        func query(_ expr: String) throws -> [QueryAnswer.Series] {
            let result = try PeerProcess.run(
                "curl",
                [
                    "-s", "--max-time", "5", "http://127.0.0.1:\(port)/api/v1/query", "--data-urlencode",
                    "query=\(expr)",
                ]
            )
            guard let answer = try? JSONDecoder().decode(QueryAnswer.self, from: Data(result.output.utf8)) else {
                throw NotAnAnswer(query: expr, said: result.output + result.errors)
            }
            try #require(answer.status == "success", "\(expr): \(answer.error ?? result.output)")
            return answer.data?.result ?? []
        }

        func stop() { process.stop() }
    }

    @Test(arguments: [
        (["run", "--count", "10", "--metrics-linger", "30s"], "--metrics-linger needs --metrics"),
        (
            ["run", "--count", "10", "--metrics", "127.0.0.1:0", "--metrics-linger", "soon"],
            "--metrics-linger soon: not a duration"
        ),
    ])
    func metricsLingerIsAUsageErrorAlone(arguments: [String], message: String) throws {
        let result = try CommandRunner.run(arguments, timeout: .seconds(20))
        #expect(result.status == 64, "\(arguments): exit \(result.status)")
        #expect(result.standardError.contains(message), "\(arguments): \(result.standardError)")
    }

    /// The linger comes after the folder is written, and a stop signal ends it: a run with an
    /// hour's linger once held SIGTERM off for the hour and, cut short, left its folder empty.
    @Test func aLingerWaitsWithTheFolderWrittenAndASignalEndsIt() throws {
        let folder = NSTemporaryDirectory() + "fanout-linger-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let run = try PeerProcess(
            CommandRunner.executable.path,
            ["run", "--count", "2000", "--metrics", "127.0.0.1:0", "--metrics-linger", "1h", "--output", folder]
        )
        defer { run.stop() }
        _ = try run.announcedPort(after: "metrics on ")
        let written = poll(timeout: .seconds(60), every: .milliseconds(100)) {
            FileManager.default.fileExists(atPath: folder + "/summary.json")
        }
        try #require(written, "no summary.json while the metrics linger")
        let signalled = ContinuousClock.now
        run.signal(SIGTERM)
        let finished = try run.wait(timeout: .seconds(20))
        #expect(ContinuousClock.now - signalled < .seconds(5))
        // The run had ended clean before the signal: its status, and its folder as written.
        #expect(finished.status == 0, "\(finished.output)\(finished.errors)")
        #expect(try CommandRunner.summary(in: folder).sent == 2000)
    }

    @Test(.requires(.prometheus, .curl)) func prometheusSumsTheShardsHistogramsToTheMergedP99AndCounts() throws {
        let folder = NSTemporaryDirectory() + "fanout-prometheus-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (sink, port) = try CommandRunner.sink(["--latency", "fixed:20ms", "--admin", "127.0.0.1:0"])
        defer { sink.stop() }
        let admin = try sink.announcedPort(after: "admin on ")
        // The shards start together in 6 s: time for Prometheus to start and scrape them once.
        // They send 9,000 at 500/s for 18 s: the panels are checked while the run goes (each
        // shard's endpoint closes at the first scrape after its end), which on a loaded runner
        // took longer than the 6 s at 1,500/s it once was (CI saw every panel empty).
        let start = TimeNotation.format(Date().addingTimeInterval(6))
        var shards: [PeerProcess] = []
        defer { for shard in shards { shard.stop() } }
        for index in 1...3 {
            shards.append(
                try PeerProcess(
                    CommandRunner.executable.path,
                    CommandRunner.sendArguments(to: port) + [
                        "--generate", "9000", "--rate", "500", "--duration", "18s", "--warm-up", "0s",
                        "--shard", "\(index)/3", "--start-at", start, "--metrics", "127.0.0.1:0",
                        "--metrics-linger", "30s", "--output", "\(folder)/shard-\(index)",
                    ],
                    directory: CommandRunner.repositoryRoot
                )
            )
        }
        var targets = ["127.0.0.1:\(admin)"]
        for shard in shards { targets.append("127.0.0.1:\(try shard.announcedPort(after: "metrics on "))") }
        let prometheus = try PrometheusServer(targets: targets, folder: folder + "/prometheus")
        defer { prometheus.stop() }

        // All four targets up, then each panel's every query answered, and at least one series
        // a panel, while the run goes (the dashboard's $__rate_interval read as 1m).
        let upTargets = try poll(timeout: .seconds(20), every: .milliseconds(250)) {
            try prometheus.query("up == 1").count == 4
        }
        let up = try prometheus.query("up").map { "\($0.metric["instance"] ?? "?") \($0.value)" }
        try #require(upTargets, "targets up: \(up)")
        let dashboard = try JSONDecoder().decode(
            Dashboard.self,
            from: Data(contentsOf: URL(fileURLWithPath: CommandRunner.repositoryRoot + "/dashboards/fanout.json"))
        )
        #expect(dashboard.panels.count >= 5)
        var empty: [String] = dashboard.panels.map(\.title)
        try poll(timeout: .seconds(20), every: .milliseconds(500)) {
            empty = try dashboard.panels.filter { panel in
                try panel.targets.allSatisfy { target in
                    try prometheus.query(target.expr.replacing("$__rate_interval", with: "1m")).isEmpty
                }
            }.map(\.title)
            return empty.isEmpty
        }
        #expect(empty.isEmpty, "panels without data: \(empty)")

        // The sums are the subject, not the pace: each shard exits 0, or 4 when a loaded machine
        // held its generator back, and the merge of such shards is invalid for that alone (2).
        for (index, shard) in shards.enumerated() {
            let finished = try shard.wait(timeout: .seconds(60))
            try expectValidOrLagged(
                status: finished.status,
                folder: "\(folder)/shard-\(index + 1)",
                "shard \(index + 1): \(finished.output)\(finished.errors)"
            )
        }
        let merged = try CommandRunner.run(
            ["merge"] + (1...3).map { "\(folder)/shard-\($0)" } + ["--output", folder + "/merged", "--max-skew", "1h"]
        )
        let summary = try CommandRunner.summary(in: folder + "/merged")
        if summary.valid {
            #expect(merged.status == 0, "\(merged.standardOutput)\(merged.standardError)")
        } else {
            #expect(summary.isInvalidOnlyByGeneratorLag, "\(summary.invalidity)")
            #expect(merged.status == 2, "\(merged.standardOutput)\(merged.standardError)")
        }
        let p99 = try #require(summary.latency?.p99)

        // The shards' last figures (each served one scrape after its run before it closed):
        // taken over the last 10 minutes, because a target gone is stale at once.
        func total(_ expr: String) throws -> Double? { try prometheus.query(expr).first?.value }
        let sent = "sum(max_over_time(fanout_sender_sent_total[10m]))"
        let counted = "sum(max_over_time(fanout_sender_notification_latency_seconds_count[10m]))"
        try poll(timeout: .seconds(10), every: .milliseconds(250)) {
            let (sentNow, countedNow) = (try total(sent), try total(counted))
            return sentNow == Double(summary.sent) && countedNow == Double(summary.sent)
        }
        #expect(summary.sent == 9000, "\(summary.sent) of 9,000 sent")
        #expect(try total(sent) == Double(summary.sent))
        #expect(try total("sum(max_over_time(fanout_sender_accepted_total[10m]))") == Double(summary.accepted))
        #expect(try total(counted) == Double(summary.sent))
        let quantile = try #require(
            try total(
                "histogram_quantile(0.99, sum by (le) (max_over_time(fanout_sender_notification_latency_seconds_bucket[10m])))"
            )
        )
        // Within one bucket (2^(1/8) − 1 = 9.05%) of HdrHistogram's figure, and that one within
        // its own 0.1%.
        let relative = abs(quantile * 1000 - p99) / p99
        #expect(relative <= 0.0905 + 0.001, "Prometheus p99 \(quantile * 1000) ms, merged \(p99) ms")
    }
}
