import FanoutMeasure
import FanoutReport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The live progress line, on standard error when it is a terminal (and nowhere otherwise).
public enum ProgressDisplay {
    /// A callback for `LoadEngine.run(progress:)`, or `nil` when standard error is not a
    /// terminal.
    public static func make(total: UInt64?) -> ((RunProgress) -> Void)? {
        guard isatty(2) == 1 else { return nil }
        return { progress in
            StandardStream.error.write(("\r\u{1B}[K" + ProgressLine(progress, total: total).text).utf8)
        }
    }

    /// Clears the line before the summary is printed.
    public static func clear() {
        if isatty(2) == 1 { StandardStream.error.write("\r\u{1B}[K".utf8) }
    }
}
