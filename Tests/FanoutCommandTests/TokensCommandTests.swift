import FanoutTestSupport
import Foundation
import Testing

/// `fanout tokens`, run as a process.
@Suite struct TokensCommandTests {
    let folder: String = {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("fanout-cli-\(UUID().uuidString)").path
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }()

    @Test func generateConvertCountAndStandardInput() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let text = "\(folder)/set.txt"
        let binary = "\(folder)/set.bin"
        let again = "\(folder)/again.txt"
        let generated = try CommandRunner.run([
            "tokens", "generate", "--count", "1000", "--seed", "4", "--output", text,
        ])
        #expect(generated.status == 0)
        // It says what it wrote.
        #expect(generated.standardOutput == "\(text): 1,000 tokens of 32 bytes, text, seed 4\n")
        // And what it wrote over (a set written over another said nothing of it).
        let rewritten = try CommandRunner.run(["tokens", "generate", "--count", "10", "--output", text])
        #expect(
            rewritten.standardOutput
                == "\(text): 10 tokens of 32 bytes, text, seed 1 (replacing the 65,000-byte file there)\n"
        )
        #expect(try Data(contentsOf: URL(fileURLWithPath: text)).count == 650)
        _ = try CommandRunner.run(["tokens", "generate", "--count", "1000", "--seed", "4", "--output", text])
        // It says what it wrote too (it said nothing, newcomer pass).
        let converted = try CommandRunner.run(["tokens", "convert", "--tokens", text, "--output", binary])
        #expect(converted.status == 0)
        #expect(converted.standardOutput == "\(binary): 1,000 tokens, binary, from \(text)\n")
        #expect(
            try CommandRunner.run(["tokens", "convert", "--tokens", binary, "--output", again, "--format", "text"])
                .status == 0
        )
        #expect(try Data(contentsOf: URL(fileURLWithPath: text)) == Data(contentsOf: URL(fileURLWithPath: again)))
        #expect(try Data(contentsOf: URL(fileURLWithPath: binary)).count == 24 + 1000 * 32)

        let counted = try CommandRunner.run(["tokens", "count", "--tokens", binary, "--shard", "3/4"])
        #expect(counted.status == 0)
        // A binary set is read in records, a text one in lines (both said "lines").
        #expect(counted.standardOutput == "tokens: 250 (shard 3/4 of 1000)\nrecords: 1000\nskipped: 0\n")
        let piped = try CommandRunner.run(["tokens", "count", "--tokens", "-"], input: text)
        #expect(piped.standardOutput == "tokens: 1000\nlines: 1000\nskipped: 0\n")
    }

    @Test func badInputExitsOneWithThePlaceOrSkips() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = "\(folder)/bad.txt"
        let token = String(repeating: "ab", count: 32)
        try Data("\(token)\n\(token)x\n\(token)\n".utf8).write(to: URL(fileURLWithPath: path))
        let failed = try CommandRunner.run(["tokens", "count", "--tokens", path])
        #expect(failed.status == 1)
        #expect(failed.standardError == "error: \(path):2:65: 'x' is not a hex digit\n")
        let rejects = "\(folder)/rejects.tsv"
        let skipped = try CommandRunner.run([
            "tokens", "count", "--tokens", path, "--skip-invalid", "--rejects", rejects,
        ])
        #expect(skipped.status == 0)
        #expect(skipped.standardOutput == "tokens: 2\nlines: 3\nskipped: 1 (written to \(rejects))\n")
        #expect(try String(contentsOfFile: rejects, encoding: .utf8) == "2\t65\t'x' is not a hex digit\t\(token)x\n")
        let fields = "\(folder)/fields.txt"
        try Data("\(token)\t3\n".utf8).write(to: URL(fileURLWithPath: fields))
        let converted = try CommandRunner.run(["tokens", "convert", "--tokens", fields, "--output", "\(folder)/f.bin"])
        #expect(converted.status == 1)
        #expect(
            errorLine(of: converted.standardError)
                == "error: \(fields):1: this line has fields, which the binary format cannot carry",
            "\(converted.standardError)"
        )
    }

    /// Case 10 of issue #48: `--tokens <(cat file)` lost its first 24 bytes (the path was opened
    /// twice), a FIFO hung, and a binary set through a pipe crashed. Each is read once, as a
    /// stream: the same tokens as the file gives, and a stream cut short is an error with the
    /// place, not a crash.
    @Test func pipesFIFOsAndProcessSubstitutionReadOnceAsTheFileDoes() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let text = "\(folder)/set.txt"
        let binary = "\(folder)/set.bin"
        try #require(
            try CommandRunner.run(["tokens", "generate", "--count", "1000", "--seed", "9", "--output", text]).status
                == 0
        )
        try #require(try CommandRunner.run(["tokens", "convert", "--tokens", text, "--output", binary]).status == 0)
        let fanout = CommandRunner.executable.path
        func shell(_ script: String) throws -> PeerProcess.Result {
            try PeerProcess.run("bash", ["-c", script], timeout: .seconds(30))
        }
        // Process substitution: text, then binary, back to text.
        for (set, output) in [(text, "\(folder)/a.txt"), (binary, "\(folder)/b.txt")] {
            let substituted = try shell(
                "'\(fanout)' tokens convert --tokens <(cat '\(set)') --output '\(output)' --format text"
            )
            #expect(substituted.status == 0, "\(set): \(substituted.errors)")
            #expect(
                try Data(contentsOf: URL(fileURLWithPath: output)) == Data(contentsOf: URL(fileURLWithPath: text)),
                "\(set)"
            )
        }
        // A binary stream cut short, and one with bytes past its records: errors, not crashes.
        let cut = try shell("'\(fanout)' tokens count --tokens <(head -c 1000 '\(binary)')")
        #expect(cut.status == 1, "\(cut.errors)")
        #expect(
            errorLine(of: cut.errors) == "error: /dev/fd/63: truncated while reading: record 31 ends early",
            "\(cut.errors)"
        )
        // Standard input, binary and text alike (binary on stdin was read as text: "'N' is not a
        // hex digit" at 1:3, the magic's third byte).
        for (set, unit) in [(binary, "records"), (text, "lines")] {
            let piped = try shell("cat '\(set)' | '\(fanout)' tokens count --tokens -")
            #expect(piped.output == "tokens: 1000\n\(unit): 1000\nskipped: 0\n", "\(set): \(piped.errors)")
        }
        let padded = try shell("'\(fanout)' tokens count --tokens <(cat '\(binary)'; printf x)")
        #expect(padded.status == 1, "\(padded.errors)")
        #expect(
            errorLine(of: padded.errors)
                == "error: /dev/fd/63: the stream has bytes after the 1000 records its header promises",
            "\(padded.errors)"
        )
        // A FIFO, written by another process.
        let fifo = "\(folder)/tokens.fifo"
        try #require(mkfifo(fifo, 0o600) == 0)
        let writer = try PeerProcess("sh", ["-c", "cat '\(text)' > '\(fifo)'"])
        defer { writer.stop() }
        let counted = try CommandRunner.run(["tokens", "count", "--tokens", fifo], timeout: .seconds(20))
        #expect(counted.standardOutput == "tokens: 1000\nlines: 1000\nskipped: 0\n", "\(counted.standardError)")
    }

    /// Case 12: `--rejects /dev/full` lost the list and exited 0.
    @Test func rejectsThatCannotBeWrittenAreAnError() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = "\(folder)/bad.txt"
        let token = String(repeating: "ab", count: 32)
        try Data("\(token)\n\(token)x\n\(token)\n".utf8).write(to: URL(fileURLWithPath: path))
        let full = try CommandRunner.run([
            "tokens", "count", "--tokens", path, "--skip-invalid", "--rejects", "/dev/full",
        ])
        #expect(full.status == 1, "\(full.standardOutput)")
        #expect(
            errorLine(of: full.standardError) == "error: /dev/full: cannot write: No space left on device",
            "\(full.standardError)"
        )
    }

    @Test func usageErrors() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(try CommandRunner.run(["tokens", "count"]).status == 64)
        #expect(try CommandRunner.run(["tokens", "count", "--generate", "5", "--shard", "5/4"]).status == 64)
        #expect(try CommandRunner.run(["tokens", "count", "--generate", "5", "--rejects", "x"]).status == 64)
    }
}
