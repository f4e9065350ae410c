import FanoutAssembly
import FanoutResults
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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
            for input in inputs where Self.same(output.path, input.path) {
                throw JobError.option(
                    "\(output.option) \(output.path) is also \(input.option) (\(input.path)): writing it would overwrite what this command reads"
                )
            }
            for other in outputs[..<index] where Self.same(output.path, other.path) {
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

    /// Whether two paths name one file: the same name once links and `.`/`..` are resolved, or
    /// the same inode (a hard link has a name of its own).
    static func same(_ a: String, _ b: String) -> Bool {
        if resolved(a) == resolved(b) { return true }
        guard let one = identity(a), let other = identity(b) else { return false }
        return one == other
    }

    /// The results files of the run folder `folder` and of its repeats, as inputs named by
    /// `option`: a command that reads them must not write over them under any name (a hard
    /// link to a run's summary.json given as `--junit`).
    public static func runFiles(in folder: String, option: String) -> [Named] {
        let files = FileManager.default
        let names = Set(RunSummary.files + [RepeatManifest.fileName, AnswerIDDocument.fileName])
        var found: [Named] = []
        var folders = [folder]
        for name in (try? files.contentsOfDirectory(atPath: folder)) ?? [] where name.hasPrefix("repeat-") {
            folders.append(folder + "/" + name)
        }
        for place in folders {
            for name in (try? files.contentsOfDirectory(atPath: place)) ?? [] where names.contains(name) {
                found.append((option, place + "/" + name))
            }
        }
        return found
    }

    /// The device and inode of an existing file; `nil` when there is none.
    private static func identity(_ path: String) -> [UInt64]? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return [UInt64(status.st_dev), UInt64(status.st_ino)]
    }

    /// `path` with symbolic links and `.`/`..` resolved, for comparing two names of one file.
    static func resolved(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
    }
}
