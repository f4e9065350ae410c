import FanoutSettings
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
}
