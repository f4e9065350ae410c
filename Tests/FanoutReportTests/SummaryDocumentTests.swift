import FanoutResults
import FanoutTestSupport
import Foundation
import Testing

@testable import FanoutReport

/// `summary.json` read through its type: what Fanout writes reads back to the same bytes, a
/// folder of an older schema this Fanout reads still reads, and a file it cannot read says
/// which file, where in it and what.
struct SummaryDocumentTests {
    static let golden = GoldenFilesTests.golden + "/summary.json"

    /// `object` in a file of its own; its path.
    static func write(_ object: JSONValue) throws -> String {
        let path = NSTemporaryDirectory() + "fanout-document-\(UUID().uuidString).json"
        try object.data().write(to: URL(fileURLWithPath: path))
        return path
    }

    /// The golden summary as JSON, to break on purpose: what no `SummaryDocument` can hold.
    static func goldenObject() throws -> JSONValue {
        try JSONValue(Data(contentsOf: URL(fileURLWithPath: golden)))
    }

    static func readError(_ path: String) -> String { readFailure(path)?.description ?? "read" }

    static func readFailure(_ path: String) -> ResultsError? {
        do {
            _ = try SummaryDocument.read(path)
            return nil
        } catch {
            return error
        }
    }

    @Test func theGoldenSummaryReadsBackToTheSameBytes() throws {
        let document = try SummaryDocument.read(Self.golden)
        #expect(document.schemaVersion == SummaryDocument.schemaVersion)
        #expect(document.reconciled == nil && document.shard == nil)
        #expect(document.harness?.sink?.injected.p99 == 10)
        let written = try document.data()
        #expect(written == (try Data(contentsOf: URL(fileURLWithPath: Self.golden))))
    }

    /// The committed baselines were written at schema 2, before `cpu`, `start`, `shard` and
    /// `harness`: they read, with those absent.
    /// The open model's lines: the stream waits name the limit met once the connections had
    /// their allowance (the first answer's one stream only when it was all), and sends that
    /// ended well after the schedule say what rate went out against what was offered.
    @Test func theOpenModelsLinesNameTheLimitAndTheRateThatWentOut() throws {
        func waits(_ fewest: Int, _ most: Int?) -> SummaryDocument.OpenModel {
            .init(
                coalesce: "auto",
                largestWindowMs: 0.2,
                streamWaits: .init(count: 1600, share: 0.016, longestMs: 80, fewestStreams: fewest, mostStreams: most)
            )
        }
        #expect(waits(1, 1).streamWaits.limitMet == .firstAnswer)
        #expect(waits(1, nil).streamWaits.limitMet == .firstAnswer)
        #expect(waits(1, 1000).streamWaits.limitMet == .serverLimitAfterFirstAnswer(1000))
        #expect(waits(500, 1000).streamWaits.limitMet == .serverLimit(1000))
        #expect(waits(500, nil).streamWaits.limitMet == .serverLimit(500))
        #expect(waits(0, 0).streamWaits.limitMet == nil)
        #expect(
            waits(1, 1000).streamWaitLine
                == "1,600 notifications (1.6%) waited up to 80.0 ms for a stream (all 1000 streams a connection busy, the server's limit; 1 before the first answer: APNs allows one until a connection's first request is accepted): part of their latency"
        )

        var open = waits(1, 1000)
        open.arrivals = 1_000_001
        open.scheduleSeconds = 1
        open.arrivalsSent = 1_000_001
        open.sendsSeconds = 2.5
        #expect(
            open.keptUpLine
                == "the sends took 2.50 s for a 1.00 s schedule: 400,000/s of the 1,000,000/s offered went out; the notifications queued for streams meanwhile, and their latency counts it"
        )
        // Within 5% and 100 ms of the schedule: kept up.
        open.sendsSeconds = 1.1
        #expect(open.keptUpLine == nil)
        // A folder without the figures says nothing.
        open.sendsSeconds = nil
        #expect(open.keptUpLine == nil)
    }

    @Test func aSchemaTwoBaselineReads() throws {
        let root = GoldenFilesTests.repositoryRootFromHere
        let document = try SummaryDocument.read(root + "/results/baselines/default/repeat-1/summary.json")
        #expect(document.schemaVersion == 2)
        #expect(document.cpu == nil && document.harness == nil && document.start == nil)
        let p99 = try #require(document.latency?.p99)
        #expect(document.sent > 0 && p99 > 0)
        let record = try RunRecord.load(root + "/results/baselines/default/repeat-1")
        #expect(record.metrics[.p99] == p99)
        #expect(record.metrics[.harness] == 0)
    }

    @Test(arguments: [(1, "written by an older fanout (schema 1)"), (9, "written by a newer fanout (schema 9)")])
    func anotherSchemaIsRefusedByItsNumber(version: Int, said: String) throws {
        var object = try Self.goldenObject()
        object["schema_version"] = .number(Double(version))
        let path = try Self.write(object)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let error = Self.readError(path)
        #expect(
            error == path + ": " + said + "; this one reads schemas 2 to \(SummaryDocument.schemaVersion)",
            "\(error)"
        )
        #expect(Self.readFailure(path)?.kind == .version)
    }

    @Test func aMissingOrMistypedKeyIsNamedByItsPath() throws {
        var missing = try Self.goldenObject()
        try #require(missing["latency_ms"]?["p99"] != nil)
        missing["latency_ms"]?["p99"] = nil
        var mistyped = try Self.goldenObject()
        try #require(mistyped["intervals"]?[1]?["p99_ms"] != nil)
        mistyped["intervals"]?[1]?["p99_ms"] = .string("slow")
        var unversioned = try Self.goldenObject()
        unversioned["schema_version"] = nil
        let cases: [(JSONValue, String, ResultsError.Kind)] = [
            (missing, "latency_ms.p99 is missing", .malformed),
            (mistyped, "intervals[1].p99_ms is not a number", .malformed),
            (unversioned, "schema_version is missing: not a Fanout summary", .notADocument),
        ]
        for (object, said, kind) in cases {
            let path = try Self.write(object)
            defer { try? FileManager.default.removeItem(atPath: path) }
            #expect(Self.readError(path) == "\(path): \(said)")
            #expect(Self.readFailure(path)?.kind == kind)
        }
        let path = NSTemporaryDirectory() + "fanout-document-\(UUID().uuidString).json"
        try Data("{\"schema_version\": 5,".utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(Self.readError(path).hasPrefix("\(path): not a JSON object"), "\(Self.readError(path))")
        #expect(Self.readError("/nonexistent/summary.json").hasPrefix("cannot read /nonexistent/summary.json"))
        #expect(Self.readFailure("/nonexistent/summary.json")?.kind == .unreadable)
    }
}

/// The harness's share of the p99 is at most all of it: its own p99 and the measured p99 are of
/// different samples, and "101% of the measured p99" (seen in a default run) is no share.
@Suite struct HarnessShareTests {
    @Test func aShareOverTheWholeReadsAsAllOfIt() throws {
        var document = try SummaryDocument.read(SummaryDocumentTests.golden)
        document.harness?.shareOfP99 = 1.32
        let record = try #require(HarnessRecord(summary: document))
        #expect(record.share == 1)
        #expect(
            record.headline
                == "the harness's own delay at p99: 2.00 ms, 100% of the measured p99 404.48 ms (limit 20%)",
            "\(record.headline)"
        )
    }
}
