import FanoutTestSupport
import Foundation
import Testing

/// Runs one of the Python peers in `Peers/` with a bounded wait.
enum PythonPeer {
    static func path(_ script: String) -> String {
        var path = #filePath
        path = String(path[..<path.lastIndex(of: "/")!])
        return "\(path)/Peers/\(script)"
    }

    static func run(_ script: String, _ arguments: [String], input: String = "") throws -> String {
        let result = try PeerProcess.run("python3", [path(script)] + arguments, input: Data(input.utf8))
        #expect(result.status == 0, "\(script): \(result.errors)")
        return result.output
    }
}

func hexString(_ bytes: some Sequence<UInt8>) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

func bytes(fromHex hex: String) -> [UInt8] {
    let digits = Array(hex.utf8)
    return stride(from: 0, to: digits.count, by: 2).map {
        UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)!
    }
}
