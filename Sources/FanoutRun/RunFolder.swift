import Foundation

/// A new run folder under results/, named by the time: results/run-20261122-045800 (or
/// search-…, with another `kind`).
public enum RunFolder {
    public static func new(kind: String = "run") -> String {
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        formatter.timeZone = TimeZone(identifier: "UTC")
        var name = "results/\(kind)-" + formatter.string(from: Date())
        var suffix = 2
        while FileManager.default.fileExists(atPath: name) {
            name = "results/\(kind)-\(formatter.string(from: Date()))-\(suffix)"
            suffix += 1
        }
        return name
    }
}
