import FanoutRun
import Foundation
import Testing

/// Files written besides a folder are checked before anything is written: never over an input
/// (by any of its names), another output, a run's own file or a name the results take.
struct OutputFileTests {
    static func folder() throws -> String {
        let folder = NSTemporaryDirectory() + "fanout-outputs-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    static func refusal(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch {
            #expect((error as? JobError)?.kind == .option, "\(error)")
            return "\(error)"
        }
    }

    @Test func anOutputOverWhatTheCommandReadsOrWritesIsRefused() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let tokens = folder + "/tokens.txt"
        try "aa\n".write(toFile: tokens, atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: folder + "/link.txt", withDestinationPath: tokens)
        // The tokens file under another name.
        let input = Self.refusal {
            try OutputFile.check([("--gone-tokens", folder + "/./link.txt")], inputs: [("--tokens", tokens)])
        }
        #expect(
            input?.contains("--gone-tokens \(folder)/./link.txt is also --tokens (\(tokens))") == true,
            "\(input ?? "")"
        )
        // Two outputs, one file.
        let twice = Self.refusal {
            try OutputFile.check([("--junit", folder + "/x.xml"), ("--report", folder + "/x.xml")])
        }
        #expect(twice?.contains("--report \(folder)/x.xml is also --junit") == true, "\(twice ?? "")")
        // A name the results take in --output's folder, before the folder holds anything.
        let results = Self.refusal {
            try OutputFile.check(
                [("--gone-tokens", folder + "/out/summary.json")],
                folders: [("--output", folder + "/out")]
            )
        }
        #expect(results?.contains("is a name the results take in --output \(folder)/out") == true, "\(results ?? "")")
        // A hard link is the same file under a name of its own.
        try FileManager.default.linkItem(atPath: tokens, toPath: folder + "/hard.txt")
        let linked = Self.refusal {
            try OutputFile.check([("--rejects", folder + "/hard.txt")], inputs: [("--tokens", tokens)])
        }
        #expect(linked?.contains("--rejects \(folder)/hard.txt is also --tokens") == true, "\(linked ?? "")")
        // Tokens and the run's file were left as they were.
        #expect(try String(contentsOfFile: tokens, encoding: .utf8) == "aa\n")
    }

    @Test func aRunsOwnFilesAreRefusedAndOtherNamesBesideThemTaken() throws {
        let run = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: run) }
        try "{}".write(toFile: run + "/summary.json", atomically: true, encoding: .utf8)
        for name in ["summary.json", "latency.hgrm", "report.html", "summary.md"] {
            let said = Self.refusal { try OutputFile.check([("--report", run + "/" + name)]) }
            #expect(said?.contains("is a run's own \(name) (its folder holds summary.json)") == true, "\(said ?? "")")
        }
        // A hard link to a run's summary.json, named as a gate's --junit elsewhere.
        let elsewhere = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: elsewhere) }
        try FileManager.default.linkItem(atPath: run + "/summary.json", toPath: elsewhere + "/j.xml")
        let hard = Self.refusal {
            try OutputFile.check(
                [("--junit", elsewhere + "/j.xml")],
                inputs: OutputFile.runFiles(in: run, option: "the run's")
            )
        }
        #expect(hard?.contains("is also the run's (\(run)/summary.json)") == true, "\(hard ?? "")")
        // A name of its own beside a run's files, or a results name where no run is, is fine.
        #expect(Self.refusal { try OutputFile.check([("--junit", run + "/gate.xml")]) } == nil)
        let empty = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: empty) }
        #expect(Self.refusal { try OutputFile.check([("--report", empty + "/report.html")]) } == nil)
    }
}
