import FanoutTokens
import Foundation

/// A temporary folder for one test, removed when the test is done with it.
final class TemporaryFolder {
    let path: String

    init() {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("fanout-tokens-\(UUID().uuidString)").path
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }

    func file(_ name: String, _ contents: String) -> String {
        file(name, Array(contents.utf8))
    }

    func file(_ name: String, _ bytes: [UInt8]) -> String {
        let path = "\(self.path)/\(name)"
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        return path
    }
}

/// One token as read: its text, fields, line and sequence number.
struct ReadToken: Hashable {
    var token: String
    var fields: String
    var line: Int
    var sequence: UInt64
}

/// Reads a whole set; the stream's waits are bounded, and so is the wait for its summary.
func readAll(
    _ source: TokenSource,
    _ configuration: TokenReaderConfiguration = .init()
) throws -> (tokens: [ReadToken], summary: TokenStreamSummary) {
    let stream = try TokenStream(source, configuration: configuration)
    var tokens: [ReadToken] = []
    while let batch = stream.next() {
        for index in 0..<batch.count {
            let record = batch[index]
            tokens.append(
                ReadToken(
                    token: String(decoding: record.token, as: UTF8.self),
                    fields: String(decoding: record.fields, as: UTF8.self),
                    line: record.line,
                    sequence: record.sequence
                )
            )
        }
        stream.recycle(batch)
    }
    guard let summary = stream.waitForSummary(timeout: .seconds(30)) else {
        throw ReaderDidNotFinish()
    }
    return (tokens, summary)
}

struct ReaderDidNotFinish: Error {}

let token64 = String(repeating: "0123456789abcdef", count: 4)
