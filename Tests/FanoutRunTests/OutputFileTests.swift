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

    /// `check`'s refusal is a JobError of kind `.option` whose words are the collision's.
    @Test func aCollisionIsRefusedAsAnOptionInItsOwnWords() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let outputs = [("--junit", folder + "/x.xml"), ("--report", folder + "/x.xml")]
        let collision = try #require(OutputFile.collision(outputs))
        #expect(throws: JobError.option(.command, collision.description)) { try OutputFile.check(outputs) }
        #expect(throws: Never.self) { try OutputFile.check([("--junit", folder + "/x.xml")]) }
    }

    @Test func anOutputOverWhatTheCommandReadsOrWritesIsRefused() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let tokens = folder + "/tokens.txt"
        try "aa\n".write(toFile: tokens, atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: folder + "/link.txt", withDestinationPath: tokens)
        // The tokens file under another name.
        #expect(
            OutputFile.collision([("--gone-tokens", folder + "/./link.txt")], inputs: [("--tokens", tokens)])
                == .input(output: "--gone-tokens", path: folder + "/./link.txt", input: "--tokens", inputPath: tokens)
        )
        // Two outputs, one file.
        #expect(
            OutputFile.collision([("--junit", folder + "/x.xml"), ("--report", folder + "/x.xml")])
                == .otherOutput(
                    output: "--report",
                    path: folder + "/x.xml",
                    other: "--junit",
                    otherPath: folder + "/x.xml"
                )
        )
        // A name the results take in --output's folder, before the folder holds anything.
        #expect(
            OutputFile.collision(
                [("--gone-tokens", folder + "/out/summary.json")],
                folders: [("--output", folder + "/out")]
            )
                == .resultsName(
                    output: "--gone-tokens",
                    path: folder + "/out/summary.json",
                    folder: "--output",
                    folderPath: folder + "/out"
                )
        )
        // A hard link is the same file under a name of its own.
        try FileManager.default.linkItem(atPath: tokens, toPath: folder + "/hard.txt")
        #expect(
            OutputFile.collision([("--rejects", folder + "/hard.txt")], inputs: [("--tokens", tokens)])
                == .input(output: "--rejects", path: folder + "/hard.txt", input: "--tokens", inputPath: tokens)
        )
        // Tokens and the run's file were left as they were.
        #expect(try String(contentsOfFile: tokens, encoding: .utf8) == "aa\n")
    }

    @Test func aRunsOwnFilesAreRefusedAndOtherNamesBesideThemTaken() throws {
        let run = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: run) }
        try "{}".write(toFile: run + "/summary.json", atomically: true, encoding: .utf8)
        for name in ["summary.json", "latency.hgrm", "report.html", "summary.md"] {
            #expect(
                OutputFile.collision([("--report", run + "/" + name)])
                    == .runFile(output: "--report", path: run + "/" + name, name: name)
            )
        }
        // A hard link to a run's summary.json, named as a gate's --junit elsewhere.
        let elsewhere = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: elsewhere) }
        try FileManager.default.linkItem(atPath: run + "/summary.json", toPath: elsewhere + "/j.xml")
        #expect(
            OutputFile.collision(
                [("--junit", elsewhere + "/j.xml")],
                inputs: OutputFile.runFiles(in: run, option: "the run's")
            )
                == .input(
                    output: "--junit",
                    path: elsewhere + "/j.xml",
                    input: "the run's",
                    inputPath: run + "/summary.json"
                )
        )
        // A name of its own beside a run's files, or a results name where no run is, is fine.
        #expect(OutputFile.collision([("--junit", run + "/gate.xml")]) == nil)
        let empty = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: empty) }
        #expect(OutputFile.collision([("--report", empty + "/report.html")]) == nil)
    }

    /// Review of issue 61: `gate c1 --junit hl.xml` where hl.xml was a hard link to another
    /// run's summary.json turned that run's summary into JUnit XML (only the command's own
    /// inputs were compared by inode). A file with other names is refused as an output.
    @Test func aFileWithOtherNamesIsRefused() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let original = folder + "/summary-elsewhere.json"
        try "{}".write(toFile: original, atomically: true, encoding: .utf8)
        try FileManager.default.linkItem(atPath: original, toPath: folder + "/hl.xml")
        #expect(
            OutputFile.collision([("--junit", folder + "/hl.xml")])
                == .otherNames(output: "--junit", path: folder + "/hl.xml", links: 2)
        )
        #expect(
            OutputFile.Collision.otherNames(output: "--junit", path: "hl.xml", links: 2).description
                == "--junit hl.xml has 1 other name (hard links): writing it would change it under them too; give another name"
        )
        // A file of one name is written over as before.
        try FileManager.default.removeItem(atPath: original)
        #expect(OutputFile.collision([("--junit", folder + "/hl.xml")]) == nil)
    }
}
