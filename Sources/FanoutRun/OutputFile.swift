import FanoutAssembly
import FanoutResults
import Foundation

/// A file a command writes besides its folder (`--gone-tokens`, `--rejects`, `gate --junit` and
/// `--report`, `compare --report`), checked before anything is written, so that no output goes
/// over what the command reads or what a run measured:
///
/// ```
///   refused when it is                                 e.g.
///   ─ a file the command reads (any name of it)        send --tokens t.txt --gone-tokens t.txt
///   ─ another file the command writes                  gate --junit x.xml --report x.xml
///   ─ a run's own file (summary.json, latency.hgrm,    gate --run r --junit r/summary.json
///     … in a folder holding summary.json)
///   ─ a name the results take in --output's folder     send --output r --gone-tokens r/summary.json
/// ```
///
/// Each refusal names the option, the file and what it would overwrite.
public enum OutputFile {
    /// A file by the option that names it.
    public typealias Named = (option: String, path: String)

    /// Checks each of `outputs` against `inputs`, the other outputs, run folders' files, and
    /// the names the results take in each of `folders` (the command's `--output`).
    public static func check(_ outputs: [Named], inputs: [Named] = [], folders: [Named] = []) throws(JobError) {
        let results = Set(RunSummary.files + [RepeatManifest.fileName, AnswerIDDocument.fileName])
        for (index, output) in outputs.enumerated() {
            let resolved = Self.resolved(output.path)
            for input in inputs where Self.resolved(input.path) == resolved {
                throw JobError.option(
                    "\(output.option) \(output.path) is also \(input.option) (\(input.path)): writing it would overwrite what this command reads"
                )
            }
            for other in outputs[..<index] where Self.resolved(other.path) == resolved {
                throw JobError.option(
                    "\(output.option) \(output.path) is also \(other.option) (\(other.path)): give each its own file"
                )
            }
            let url = URL(fileURLWithPath: resolved)
            let name = url.lastPathComponent
            let parent = url.deletingLastPathComponent().path
            guard results.contains(name) else { continue }
            for folder in folders where Self.resolved(folder.path) == parent {
                throw JobError.option(
                    "\(output.option) \(output.path) is a name the results take in \(folder.option) \(folder.path): give another name or folder"
                )
            }
            if FileManager.default.fileExists(atPath: parent + "/summary.json") {
                throw JobError.option(
                    "\(output.option) \(output.path) is a run's own \(name) (its folder holds summary.json): writing it would replace what the run measured; give another name or folder"
                )
            }
        }
    }

    /// `path` with symbolic links and `.`/`..` resolved, for comparing two names of one file.
    static func resolved(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
    }
}
