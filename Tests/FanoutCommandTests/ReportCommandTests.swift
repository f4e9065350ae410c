import FanoutTestSupport
import Foundation
import Testing

/// `fanout report DIR` (issue #64): a run folder's summary printed again and its page drawn
/// again from its files alone — the same bytes the run wrote — and a folder that is not a run's
/// said so.
@Suite struct ReportCommandTests {
    @Test func aFoldersSummaryAndPageAreDrawnAgainFromItsFiles() throws {
        let folder = NSTemporaryDirectory() + "fanout-report-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let run = try CommandRunner.run(
            ["run", "--count", "3000", "--rate", "2000", "--output", folder + "/run"],
            timeout: .seconds(60)
        )
        #expect(run.status == 0, "\(run.standardError)")
        // The five lines the run printed, again from the folder alone.
        let printed = try CommandRunner.run(["report", folder + "/run"])
        #expect(printed.status == 0, "\(printed.standardError)")
        #expect(printed.standardOutput.split(separator: "\n").count == 5, "\(printed.standardOutput)")
        #expect(printed.standardOutput == run.standardOutput)
        let markdown = try CommandRunner.run(["report", folder + "/run", "--markdown"])
        #expect(markdown.standardOutput == (try String(contentsOfFile: folder + "/run/summary.md", encoding: .utf8)))
        let json = try CommandRunner.run(["report", folder + "/run", "--json"])
        #expect(json.standardOutput == (try String(contentsOfFile: folder + "/run/summary.json", encoding: .utf8)))
        let both = try CommandRunner.run(["report", folder + "/run", "--json", "--markdown"])
        #expect(both.status == 64, "\(both.standardError)")
        let page = folder + "/again.html"
        let drawn = try CommandRunner.run(["report", folder + "/run", "--html", page])
        #expect(drawn.status == 0, "\(drawn.standardError)")
        #expect(drawn.standardOutput.split(separator: "\n").last.map(String.init) == "wrote \(page)")
        // The latency charts from latency.hlog's seconds, the rest from summary.json: the page
        // the run wrote, byte for byte.
        #expect(
            try Data(contentsOf: URL(fileURLWithPath: page))
                == Data(contentsOf: URL(fileURLWithPath: folder + "/run/report.html"))
        )
    }

    @Test func whatIsNotARunsFolderIsSaid() throws {
        let folder = NSTemporaryDirectory() + "fanout-report-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder + "/repeat-1", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for (directory, line) in [
            (
                folder,
                "error: \(folder) is a folder of repeats: give one of them (\(folder)/repeat-1), or compare them with fanout compare"
            ),
            (folder + "/repeat-1", "error: \(folder)/repeat-1 holds no summary.json: it is not a run's folder"),
        ] {
            let refused = try CommandRunner.run(["report", directory])
            #expect(refused.status == 64 && refused.standardOutput.isEmpty)
            #expect(refused.standardError.split(separator: "\n").first.map(String.init) == line)
        }
        let missing = try CommandRunner.run(["report", folder + "/nowhere"])
        #expect(
            missing.status == 64
                && missing.standardError.split(separator: "\n").first.map(String.init)
                    == "error: \(folder)/nowhere is not a folder: give a run's folder (its --output)",
            "\(missing.standardError)"
        )
        try "{}".write(toFile: folder + "/repeat-1/summary.json", atomically: true, encoding: .utf8)
        let unreadable = try CommandRunner.run(["report", folder + "/repeat-1"])
        #expect(unreadable.status == 64 && unreadable.standardError.hasPrefix("error: "), "\(unreadable.standardError)")
    }
}
