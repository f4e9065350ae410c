import Foundation

/// `repeats.json` in the folder of `--repeat N`: how many repeats were asked, how many
/// finished, and what stopped the set early. Written before the first repeat and after each,
/// so that a set cut short — interrupted, or its process killed — never reads as a whole one:
///
/// ```
/// {"version": 1, "asked": 5, "finished": 2, "interrupted": "SIGTERM"}
/// ```
///
/// `RunSet` holds a set invalid when it was interrupted ("interrupted after 2 of 5 repeats")
/// or has fewer `repeat-N/` folders than were asked.
public struct RepeatManifest: Codable, Sendable, Equatable {
    public static let fileName = "repeats.json"
    public static let currentVersion = 1

    public var version = Self.currentVersion
    /// `--repeat N`.
    public var asked: Int
    /// Repeats that ran to their end and wrote their folder.
    public var finished = 0
    /// The signal that stopped the set (`SIGINT`, `SIGTERM`, `SIGHUP`), if one did.
    public var interrupted: String?

    public init(asked: Int) {
        self.asked = asked
    }

    /// Why the set cannot stand for `asked` repeats, given the `repeat-N/` folders found; empty
    /// when it can.
    public func invalidReasons(foldersFound: Int) -> [InvalidReason] {
        if interrupted != nil { return [.repeatsInterrupted(finished: finished, asked: asked)] }
        if foldersFound < asked || finished < asked {
            return [.repeatsPartial(finished: min(foldersFound, finished), asked: asked)]
        }
        return []
    }

    /// Reads `directory/repeats.json`; `nil` when there is none (a set written before it was kept).
    public static func read(in directory: String) throws(ResultsError) -> RepeatManifest? {
        let path = directory + "/" + fileName
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        // A set's manifest is a count the gate trusts: `"finished": 1, "finished": 3` read as
        // 1 here and 3 in Python (issue 61, review).
        try DuplicateKeyScan.refuse(data, at: path)
        do {
            let manifest = try JSONDecoder().decode(RepeatManifest.self, from: data)
            guard manifest.version == currentVersion else {
                throw ResultsError(
                    .version,
                    "\(path): version \(manifest.version); this Fanout reads \(currentVersion)"
                )
            }
            return manifest
        } catch let error as ResultsError {
            throw error
        } catch {
            throw ResultsError(.notADocument, "\(path) is not a repeats manifest: \(error)")
        }
    }

    /// Writes `directory/repeats.json`, replacing the one there.
    public func write(in directory: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try encoder.encode(self).write(to: URL(fileURLWithPath: directory + "/" + Self.fileName), options: .atomic)
    }
}
