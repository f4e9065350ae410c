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

    /// Why an output was refused: what it would have overwritten.
    public enum Collision: Sendable, Hashable, CustomStringConvertible {
        /// It is a file the command reads (`input`, by its option and path).
        case input(output: String, path: String, input: String, inputPath: String)
        /// It is another output of the same command.
        case otherOutput(output: String, path: String, other: String, otherPath: String)
        /// A name the results take in the command's own folder.
        case resultsName(output: String, path: String, folder: String, folderPath: String)
        /// A run's own file (its folder holds summary.json).
        case runFile(output: String, path: String, name: String)
        /// An existing file with other names (hard links): another run's summary.json, say.
        case otherNames(output: String, path: String, links: Int)

        public var description: String {
            switch self {
            case .input(let option, let path, let input, let inputPath):
                "\(option) \(path) is also \(input) (\(inputPath)): writing it would overwrite what this command reads"
            case .otherOutput(let option, let path, let other, let otherPath):
                "\(option) \(path) is also \(other) (\(otherPath)): give each its own file"
            case .resultsName(let option, let path, let folder, let folderPath):
                "\(option) \(path) is a name the results take in \(folder) \(folderPath): give another name or folder"
            case .runFile(let option, let path, let name):
                "\(option) \(path) is a run's own \(name) (its folder holds summary.json): writing it would replace what the run measured; give another name or folder"
            case .otherNames(let option, let path, let links):
                "\(option) \(path) has \(links - 1) other name\(links == 2 ? "" : "s") (hard links): writing it would change it under them too; give another name"
            }
        }
    }

    /// Checks each of `outputs` against `inputs`, the other outputs, run folders' files, and
    /// the names the results take in each of `folders` (the command's `--output`).
    public static func check(_ outputs: [Named], inputs: [Named] = [], folders: [Named] = []) throws(JobError) {
        if let collision = collision(outputs, inputs: inputs, folders: folders) {
            throw JobError.option(.command, collision.description)
        }
    }

    /// The first output that would overwrite something, and what; `nil` when none would.
    public static func collision(_ outputs: [Named], inputs: [Named] = [], folders: [Named] = []) -> Collision? {
        for (index, output) in outputs.enumerated() {
            if let input = inputs.first(where: { same(output.path, $0.path) }) {
                return .input(output: output.option, path: output.path, input: input.option, inputPath: input.path)
            }
            if let other = outputs[..<index].first(where: { same(output.path, $0.path) }) {
                return .otherOutput(
                    output: output.option,
                    path: output.path,
                    other: other.option,
                    otherPath: other.path
                )
            }
            if let status = status(output.path) {
                if status.st_mode & S_IFMT == S_IFREG && status.st_nlink > 1 {
                    return .otherNames(output: output.option, path: output.path, links: Int(status.st_nlink))
                }
            }
            let url = URL(fileURLWithPath: RunOutput.resolved(output.path))
            let name = url.lastPathComponent
            let parent = url.deletingLastPathComponent().path
            guard RunOutput.resultNames.contains(name) else { continue }
            if let folder = folders.first(where: { RunOutput.resolved($0.path) == parent }) {
                return .resultsName(
                    output: output.option,
                    path: output.path,
                    folder: folder.option,
                    folderPath: folder.path
                )
            }
            if FileManager.default.fileExists(atPath: parent + "/summary.json") {
                return .runFile(output: output.option, path: output.path, name: name)
            }
        }
        return nil
    }

    /// Whether two paths name one file: the same name once links and `.`/`..` are resolved, or
    /// the same inode (a hard link has a name of its own).
    static func same(_ a: String, _ b: String) -> Bool {
        if RunOutput.resolved(a) == RunOutput.resolved(b) { return true }
        guard let one = identity(a), let other = identity(b) else { return false }
        return one == other
    }

    /// The results files of the run folder `folder` and of its repeats, as inputs named by
    /// `option`: a command that reads them must not write over them under any name (a hard
    /// link to a run's summary.json given as `--junit`).
    public static func runFiles(in folder: String, option: String) -> [Named] {
        let files = FileManager.default
        var found: [Named] = []
        var folders = [folder]
        for name in (try? files.contentsOfDirectory(atPath: folder)) ?? [] where name.hasPrefix("repeat-") {
            folders.append(folder + "/" + name)
        }
        for place in folders {
            for name in (try? files.contentsOfDirectory(atPath: place)) ?? [] where RunOutput.resultNames.contains(name)
            {
                found.append((option, place + "/" + name))
            }
        }
        return found
    }

    /// The device and inode of an existing file; `nil` when there is none.
    private static func identity(_ path: String) -> [UInt64]? {
        status(path).map { [UInt64($0.st_dev), UInt64($0.st_ino)] }
    }

    /// What `stat` says of an existing file (links followed); `nil` when there is none.
    private static func status(_ path: String) -> stat? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return status
    }
}
