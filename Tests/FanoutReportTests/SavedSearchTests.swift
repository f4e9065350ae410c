import FanoutResults
import Foundation
import Testing

@testable import FanoutReport

/// A search's folder read back (`fanout report` on `fanout search --output`): every kind of
/// answer, a stopped search and failed steps with their reasons print and draw as the search
/// did; a search.json that cannot be read back says where and what.
struct SavedSearchTests {
    static func folder() throws -> String {
        let folder = NSTemporaryDirectory() + "fanout-saved-search-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    static func report(answer: RateSearch.Answer?, stoppedBy: String? = nil) throws -> SearchReport {
        var report = try SearchReportTests.report(
            p50: [1.25, 3.5],
            p99: [4.75, 31.5],
            objectives: ["p99 < 25ms", "errors < 1%"]
        )
        report.steps[1].reasons = ["p99 < 25ms: measured 31.50 ms", "the generator fell 12 ms behind"]
        report.steps[1].purpose = .bisect
        report.answer = answer
        report.stoppedBy = stoppedBy
        return report
    }

    @Test(arguments: [
        RateSearch.Answer.found(rate: 1000, ceiling: 1050), .atLeast(rate: 2000),
        .generatorLimit(passed: nil, limit: 1000), .generatorLimit(passed: 1000, limit: 2000), .noRate(lowest: 1000),
        .stepsExhausted(passed: nil, failed: nil), .stepsExhausted(passed: 1000, failed: 2000),
    ])
    func everyAnswerReadsBackAsItWasWritten(answer: RateSearch.Answer) throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let written = try Self.report(answer: answer)
        try written.write(to: folder)
        let read = try SavedSearch(directory: folder).report
        #expect(read.answer == answer)
        #expect(read.text == written.text)
        #expect(read.html == written.html)
    }

    @Test func aStoppedSearchReadsBackStopped() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let written = try Self.report(answer: nil, stoppedBy: "SIGTERM")
        try written.write(to: folder)
        let read = try SavedSearch(directory: folder).report
        #expect(read.answer == nil && read.stoppedBy == "SIGTERM")
        #expect(read.text == written.text)
    }

    /// search.json's text with `change` made to its fields, read back: the error.
    static func error(_ change: (inout [String: Any]) -> Void) throws -> ResultsError {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try report(answer: .found(rate: 1000, ceiling: 1050)).write(to: folder)
        let path = folder + "/search.json"
        var fields = try #require(
            JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any]
        )
        change(&fields)
        try JSONSerialization.data(withJSONObject: fields).write(to: URL(fileURLWithPath: path))
        do {
            _ = try SavedSearch(directory: folder)
        } catch {
            return ResultsError(error.kind, error.description.replacingOccurrences(of: path, with: "search.json"))
        }
        Issue.record("search.json read back although it was changed")
        return ResultsError(.malformed, "")
    }

    @Test func aSearchJSONThatCannotBeReadBackSaysWhereAndWhat() throws {
        #expect(
            try Self.error { $0["version"] = 2 }
                == ResultsError(.version, "search.json is version 2; this Fanout reads version 1")
        )
        #expect(
            try Self.error { $0["answer"] = ["kind": "found", "failed_per_second": 1050] }
                == ResultsError(
                    .malformed,
                    "search.json: answer: rate_per_second is missing: a 'found' answer needs it"
                )
        )
        #expect(
            try Self.error { $0["answer"] = ["kind": "sideways"] }.description
                == "search.json: answer: kind is 'sideways', not found, at-least, generator-limit, no-rate or steps-exhausted"
        )
        #expect(
            try Self.error { fields in
                var steps = fields["steps"] as! [[String: Any]]
                steps[1]["outcome"] = "maybe"
                fields["steps"] = steps
            }.description == "search.json: steps[1].outcome is 'maybe', not passed, failed or generator-limit"
        )
        #expect(
            try Self.error { $0["objectives"] = ["p99 <"] }.description.hasPrefix(
                "search.json: objectives[0], 'p99 <': "
            )
        )
        #expect(
            try Self.error { $0.removeValue(forKey: "steps") }
                == ResultsError(.malformed, "search.json is not a search's search.json: steps is missing")
        )
    }
}
