import Foundation

/// A new run folder under results/, named by the time: results/run-20261122-045800.
public enum RunFolder {
    public static func new() -> String {
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        formatter.timeZone = TimeZone(identifier: "UTC")
        var name = "results/run-" + formatter.string(from: Date())
        var suffix = 2
        while FileManager.default.fileExists(atPath: name) {
            name = "results/run-\(formatter.string(from: Date()))-\(suffix)"
            suffix += 1
        }
        return name
    }
}
