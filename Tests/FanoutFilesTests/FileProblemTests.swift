import FanoutFiles
import Foundation
import Testing

/// A file that cannot be read is described by what its path is, in words a person acts on,
/// never by Foundation's domain and code.
@Suite struct FileProblemTests {
    @Test func aPathIsDescribedByWhatItIs() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("file-problem-\(getpid())").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = folder + "/samples.txt"
        try "5ms\n".write(toFile: file, atomically: true, encoding: .utf8)
        #expect(FileProblem.problem(reading: file) == nil)
        #expect(FileProblem.problem(reading: folder) == "is a directory")
        #expect(FileProblem.problem(reading: folder + "/missing.txt") == "no such file")
        #expect(FileProblem.problem(reading: file + "/below") == "a part of the path is not a directory")
        #expect(FileProblem.problem(reading: "/dev/null") == "is not a regular file (a character device)")
    }

    /// What Foundation throws for each, as the commands print it after the path.
    @Test func foundationsErrorsGiveTheSameWords() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("file-reason-\(getpid())").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for (path, expected) in [
            (folder, "is a directory"), (folder + "/missing.txt", "no such file"),
            ("/dev/null", "is not a regular file (a character device)"),
        ] {
            var reason: String?
            do { _ = try String(contentsOfFile: path, encoding: .utf8) } catch { reason = error.reason }
            // /dev/null reads as empty on some systems: then there is no error to word.
            if path == "/dev/null" && reason == nil { continue }
            #expect(reason == expected, "\(path)")
            #expect(reason?.contains("NSCocoaErrorDomain") == false)
        }
    }

    @Test func otherErrorsKeepTheirDescription() {
        struct Plain: Error, CustomStringConvertible, LocalizedError {
            var description: String { "it broke." }
            var errorDescription: String? { description }
        }
        #expect(Plain().reason == "it broke")
        #expect(FileProblem.describe(errno: EACCES) == "permission denied")
    }
}
