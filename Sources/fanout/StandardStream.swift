#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Unbuffered writes to standard output or error, in whole, so bytes reach pipes as given.
struct StandardStream: Sendable {
    let descriptor: Int32

    static let output = StandardStream(descriptor: 1)
    static let error = StandardStream(descriptor: 2)

    func write<Bytes: Collection<UInt8>>(_ bytes: Bytes) {
        let array = Array(bytes)
        var offset = 0
        while offset < array.count {
            let written = array.withUnsafeBytes { buffer in
                #if canImport(Glibc)
                Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                #else
                Darwin.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                #endif
            }
            if written < 0 && errno == EINTR { continue }
            if written <= 0 { return }
            offset += written
        }
    }
}

/// Writes a line to standard error, after clearing the progress line if one is drawn.
func printError(_ message: String) {
    ConsoleReporter.shared.clearProgress()
    StandardStream.error.write((message + "\n").utf8)
}

/// Writes `error: MESSAGE` to standard error: the one form every subcommand's errors take (as
/// swift's and git's do), whatever found them.
func reportError(_ message: String) {
    printError("error: " + message)
}

/// Writes `warning: MESSAGE` to standard error: something to know that does not stop the command.
func reportWarning(_ message: String) {
    printError("warning: " + message)
}
