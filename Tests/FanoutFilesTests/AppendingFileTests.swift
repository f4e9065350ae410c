import FanoutFiles
import Foundation
import Testing

@Suite struct AppendingFileTests {
    @Test func appendsWholeLinesAndCloses() throws {
        let path = NSTemporaryDirectory() + "fanout-appending-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let file = try AppendingFile(path: path)
        #expect(file.append(Data("a\n".utf8)))
        #expect(file.append(Data("b\n".utf8)))
        file.close()
        #expect(!file.append(Data("c\n".utf8)))
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "a\nb\n")
    }

    /// The file is made in place: a path that is a symbolic link (or a device, `/dev/full`)
    /// stays what it is and is written through. (Made with `FileManager.createFile`, which
    /// writes a new file and renames it over the path, `--gone-tokens /dev/full` run as root
    /// replaced the device with an empty regular file, and every later write "succeeded".)
    @Test func aLinkIsWrittenThroughNotReplaced() throws {
        let folder = NSTemporaryDirectory() + "fanout-appending-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Data().write(to: URL(fileURLWithPath: folder + "/target"))
        try FileManager.default.createSymbolicLink(atPath: folder + "/link", withDestinationPath: folder + "/target")
        let file = try AppendingFile(path: folder + "/link")
        #expect(file.append(Data("a\n".utf8)))
        file.close()
        #expect(file.failure == nil)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: folder + "/link") == folder + "/target")
        #expect(try String(contentsOfFile: folder + "/target", encoding: .utf8) == "a\n")
    }

    /// A write that fails (a full disk) closes the file and is kept with the path and the
    /// system's reason, so that a run can say its list is incomplete.
    @Test func aFailedWriteIsKeptWithThePath() throws {
        var status = stat()
        guard stat("/dev/full", &status) == 0, (status.st_mode & S_IFMT) == S_IFCHR else { return }
        let file = try AppendingFile(path: "/dev/full")
        #expect(!file.append(Data("a\n".utf8)))
        #expect(!file.append(Data("b\n".utf8)))
        file.close()
        #expect(file.failure == "/dev/full: cannot write: No space left on device")
        #expect(stat("/dev/full", &status) == 0 && (status.st_mode & S_IFMT) == S_IFCHR, "still the device")
    }

    /// A file that cannot be made says where and why.
    @Test func whatCannotBeCreatedSaysWhy() throws {
        #expect(throws: AppendingFile.CannotCreate.self) { try AppendingFile(path: "/nonexistent/x") }
        do {
            _ = try AppendingFile(path: "/nonexistent/x")
        } catch {
            #expect(error.description == "cannot create /nonexistent/x: the folder /nonexistent does not exist")
        }
        do {
            _ = try AppendingFile(path: NSTemporaryDirectory())
        } catch {
            #expect(error.description.hasSuffix("it is a folder"), "\(error)")
        }
    }

    /// Review of issue 61: `sink --capture FIFO` and `send --gone-tokens FIFO` with no reader
    /// sat in open() past SIGTERM (SIGKILL ended them). A FIFO nobody reads is refused at once;
    /// one with a reader is written.
    @Test func aFIFONobodyReadsIsRefusedAndOneReadIsWritten() throws {
        let path = NSTemporaryDirectory() + "fanout-appending-\(UUID().uuidString).fifo"
        try #require(mkfifo(path, 0o600) == 0)
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            _ = try AppendingFile(path: path)
            Issue.record("a FIFO nobody reads was opened")
        } catch {
            #expect(error.description == "cannot create \(path): a FIFO nobody reads: start its reader first")
        }
        let reader = open(path, O_RDONLY | O_NONBLOCK)
        try #require(reader >= 0)
        defer { close(reader) }
        let file = try AppendingFile(path: path)
        #expect(file.append(Data("a\n".utf8)))
        file.close()
        var byte: [UInt8] = [0, 0]
        #expect(read(reader, &byte, 2) == 2 && byte == Array("a\n".utf8))
    }
}
