import FanoutResults
import Foundation
import Testing

@testable import FanoutReport

/// `repeats.json`: a repeat set cut short never reads as a whole one.
struct RepeatManifestTests {
    @Test func aSetIsWholeOnlyWhenEveryRepeatAskedFinished() {
        var manifest = RepeatManifest(asked: 5)
        manifest.finished = 5
        #expect(manifest.invalidReasons(foldersFound: 5).isEmpty)
        #expect(manifest.invalidReasons(foldersFound: 3) == [.repeatsPartial(finished: 3, asked: 5)])
        manifest.finished = 2
        #expect(manifest.invalidReasons(foldersFound: 3) == [.repeatsPartial(finished: 2, asked: 5)])
        manifest.interrupted = "SIGTERM"
        #expect(manifest.invalidReasons(foldersFound: 3) == [.repeatsInterrupted(finished: 2, asked: 5)])
    }

    @Test func itIsWrittenAndReadBackAndAnotherVersionIsRefused() throws {
        let folder = NSTemporaryDirectory() + "fanout-manifest-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(try RepeatManifest.read(in: folder) == nil)
        var manifest = RepeatManifest(asked: 4)
        manifest.finished = 1
        manifest.interrupted = "SIGINT"
        try manifest.write(in: folder)
        #expect(try RepeatManifest.read(in: folder) == manifest)
        let text = try String(contentsOfFile: folder + "/repeats.json", encoding: .utf8)
        #expect(text == #"{"asked":4,"finished":1,"interrupted":"SIGINT","version":1}"#)
        try Data(#"{"asked":4,"finished":1,"version":2}"#.utf8).write(
            to: URL(fileURLWithPath: folder + "/repeats.json")
        )
        #expect(throws: ResultsError.self) { try RepeatManifest.read(in: folder) }
        // Issue 61, review: a key written twice read as its first here and its last in Python.
        try Data(#"{"asked":4,"finished":1,"finished":4,"version":1}"#.utf8).write(
            to: URL(fileURLWithPath: folder + "/repeats.json")
        )
        #expect {
            try RepeatManifest.read(in: folder)
        } throws: { error in
            "\(error)"
                == "\(folder)/repeats.json: the key finished is written twice in one object: readers disagree on which stands (Foundation keeps the first, Python the last), so the file is refused"
        }
    }

    /// A set whose manifest asked more repeats than have a summary is invalid with the count,
    /// and an interrupted one says so, whatever its folders hold; with no repeat finished there
    /// is nothing to gate.
    @Test func aRunSetReadsTheManifest() throws {
        let folder = NSTemporaryDirectory() + "fanout-manifest-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder + "/repeat-1", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var manifest = RepeatManifest(asked: 3)
        try manifest.write(in: folder)
        #expect(throws: ResultsError.self) { try RunSet.load(folder) }
        manifest.interrupted = "SIGHUP"
        try manifest.write(in: folder)
        do {
            _ = try RunSet.load(folder)
            Issue.record("a set with no finished repeat loaded")
        } catch {
            #expect(
                error.description == "\(folder): interrupted after 0 of 3 repeats; no repeat-*/ folder holds a run",
                "\(error)"
            )
        }
    }

    /// A repeat folder past the manifest's count is another set's: refused, not taken into the
    /// median unseen (one copied in beside a whole set of 2 read as a valid set of 3).
    @Test func aRepeatBeyondTheManifestIsRefused() throws {
        let folder = NSTemporaryDirectory() + "fanout-manifest-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for name in ["repeat-1", "repeat-2", "repeat-3"] {
            try FileManager.default.createDirectory(atPath: folder + "/" + name, withIntermediateDirectories: true)
            try FileManager.default.copyItem(
                atPath: SummaryDocumentTests.golden,
                toPath: folder + "/" + name + "/summary.json"
            )
        }
        var manifest = RepeatManifest(asked: 2)
        manifest.finished = 2
        try manifest.write(in: folder)
        do {
            _ = try RunSet.load(folder)
            Issue.record("a set with a repeat beyond its manifest loaded")
        } catch {
            #expect(error.kind == .inconsistent)
            #expect(
                error.description
                    == "\(folder) holds repeat-3/ beyond the 2 repeats its repeats.json asked: another set's results, and which is which cannot be told"
            )
        }
        try FileManager.default.removeItem(atPath: folder + "/repeat-3")
        #expect(try RunSet.load(folder).runs.count == 2)
    }
}
