import Foundation

/// Whether process `id` has ended: gone from /proc, or a zombie nobody reaped yet.
public func processEnded(_ id: pid_t) -> Bool {
    guard let stat = try? String(contentsOfFile: "/proc/\(id)/stat", encoding: .utf8),
        let afterName = stat.range(of: ") ", options: .backwards)
    else { return true }
    return stat[afterName.upperBound...].hasPrefix("Z")
}

/// The process id a script wrote to `path` (`echo $! > path`); `nil` until it has.
public func processID(writtenTo path: String) -> pid_t? {
    (try? String(contentsOfFile: path, encoding: .utf8)).flatMap {
        pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
