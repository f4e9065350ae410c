import Foundation

/// Runs a Python peer script from the `Peers/` folder beside the calling test file, with a
/// bounded wait; a non-zero exit status is an error carrying what the script printed.
public enum PythonPeer {
    /// A script that exited with a status other than 0.
    public struct Failed: Error, CustomStringConvertible {
        public var script: String
        public var status: Int32
        public var errors: String
        public var description: String { "\(script) exited with status \(status): \(errors)" }
    }

    /// `Peers/<script>` beside `file` (the caller's `#filePath`).
    public static func path(_ script: String, besides file: String = #filePath) -> String {
        String(file[..<file.lastIndex(of: "/")!]) + "/Peers/" + script
    }

    /// Runs `python3 Peers/<script> arguments…` to its end and returns its standard output.
    public static func run(
        _ script: String,
        _ arguments: [String],
        input: String = "",
        besides file: String = #filePath
    ) throws -> String {
        let result = try PeerProcess.run("python3", [path(script, besides: file)] + arguments, input: Data(input.utf8))
        guard result.status == 0 else { throw Failed(script: script, status: result.status, errors: result.errors) }
        return result.output
    }
}

/// Lowercase hex digits of `bytes`, two a byte.
public func hexString(_ bytes: some Sequence<UInt8>) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var text: [UInt8] = []
    for byte in bytes { text += [digits[Int(byte >> 4)], digits[Int(byte & 0xF)]] }
    return String(decoding: text, as: UTF8.self)
}

/// The bytes that hex digits (two a byte) stand for.
public func bytes(fromHex hex: String) -> [UInt8] {
    let digits = Array(hex.utf8)
    return stride(from: 0, to: digits.count, by: 2).map {
        UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)!
    }
}
