import FanoutAssembly
import FanoutFiles
import FanoutNotation
import FanoutPush
import FanoutReport
import FanoutResults
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A run's `--output` folder, checked and taken before any traffic, so that nothing a run
/// measures is lost at its end and no folder is read as a run it does not hold:
///
/// - it is a folder (made if missing), not a file, and a file can be made in it;
/// - it is none of the command's inputs (a token file, `fanout merge`'s shards);
/// - no other run is writing it: `DIR/.lock` is locked (`flock`) for as long as this value
///   lives, and holds the pid of the run that took it;
/// - it holds no earlier run's results (`summary.json`, `summary.md`, `report.html`,
///   `latency.hgrm`, `latency.hlog`, `repeats.json`, `repeat-N/`): such a folder is refused,
///   never cleared, so `fanout gate` can never read another run's summary as this one's.
///   (`fanout merge` writes every one of a run's files, so it may replace a merge's:
///   `.replace`; repeats left beside it make `RunSet.load` refuse the folder.)
///
/// Files that are not Fanout's (a thresholds file, notes) may be there.
public final class RunOutput: Sendable {
    public let path: String
    private let lock: Int32

    /// The lock file's name in the folder.
    public static let lockName = ".lock"

    /// Which command's results the folder would hold: what counts as earlier results in it.
    public enum Results: Sendable {
        /// A run's files, and a repeat set's (`fanout run`, `send`, `merge`).
        case run
        /// A search's `search.json` and `report.html` and its `step-NN/` runs, or a run's.
        case search
        /// A plan's `plan.json` and its rehearsal's `verify/` folder, or a run's.
        case plan
    }

    /// What to do with an earlier run's results in the folder.
    public enum EarlierResults: Sendable {
        /// Refuse the folder (`fanout run`, `fanout send`).
        case refuse
        /// Write over them: the command writes every file of a run (`fanout merge`).
        case replace
    }

    /// Checks and takes `path`; `option` names it in errors (`--output`), `inputs` are the
    /// paths the command reads.
    public init(
        preparing path: String,
        option: String = "--output",
        inputs: [String] = [],
        earlierResults: EarlierResults = .refuse,
        results: Results = .run
    ) throws(JobError) {
        // `--output ''` said "cannot write the --output folder : no such file" (issue 61, review).
        guard !path.trimmingBlanks.isEmpty else {
            throw JobError.option(.option(option), "empty: name the folder for the results")
        }
        let files = FileManager.default
        var isFolder: ObjCBool = false
        let existed = files.fileExists(atPath: path, isDirectory: &isFolder)
        if existed && !isFolder.boolValue {
            throw JobError.option(.optionValue(option, path), "a file, not a folder: give a folder for the results")
        }
        let resolved = Self.resolved(path)
        for input in inputs where Self.resolved(input) == resolved {
            throw JobError.option(
                .optionValue(option, path),
                "also an input of this command (\(input)): the results would overwrite it"
            )
        }
        do {
            try files.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw JobError.cannotWrite(.optionValue(option, path), error.reason)
        }
        let lockPath = path + "/" + Self.lockName
        let descriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw JobError.cannotWrite(.optionValue(option, path), String(cString: strerror(errno)))
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let holder = (try? String(contentsOfFile: lockPath, encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines)
            close(descriptor)
            let who = holder.flatMap(Int.init).map { "another run (pid \($0))" } ?? "another run"
            throw JobError.option(
                .optionValue(option, path),
                "in use by \(who): give another folder, or wait for it to end"
            )
        }
        // Refused before the pid is written: the folder's .lock keeps the run that wrote it
        // (a refused run wrote its own pid there, newcomer pass 4).
        let earlier = Self.earlierResults(in: path, results: results)
        guard earlier.isEmpty || earlierResults == .replace else {
            close(descriptor)
            throw JobError.option(
                .optionValue(option, path),
                "holds an earlier \(Self.whose(earlier)) results (\(earlier.joined(separator: ", "))): give a "
                    + "new folder, or remove them first (a gate must never read them as this run's)"
            )
        }
        let pid = Array("\(getpid())\n".utf8)
        guard ftruncate(descriptor, 0) == 0,
            pid.withUnsafeBytes({ write(descriptor, $0.baseAddress, $0.count) }) == pid.count
        else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw JobError.cannotWrite(.optionValue(option, path), reason)
        }
        self.path = path
        lock = descriptor
    }

    deinit {
        close(lock)
    }

    /// What a run (or a search) writes, found in `path`: its files, the repeats' manifest and
    /// folders (a search's steps).
    static func earlierResults(in path: String, results: Results = .run) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        var ours = resultNames
        var numbered = ["repeat-"]
        switch results {
        case .run: break
        case .search:
            ours.formUnion(SearchReport.files)
            numbered.append("step-")
        case .plan: ours.formUnion(planNames)
        }
        return names.filter { name in ours.contains(name) || numbered.contains { isNumbered(name, $0) } }
            .sorted()
            .map { name in ours.contains(name) ? name : name + "/" }
    }

    /// Whose results `earlier` (`earlierResults(in:results:)`'s names) are, as the refusal says
    /// it: a plan's when they are all a plan's files (a plan folder was called "an earlier run's",
    /// newcomer pass 4), a search's when all a search's, else a run's.
    static func whose(_ earlier: [String]) -> String {
        let names = earlier.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
        if !names.isEmpty && names.allSatisfy(planNames.contains) { return "plan's" }
        let isSearch = { (name: String) in SearchReport.files.contains(name) || isNumbered(name, "step-") }
        // report.html is a run's too: a search's folder is told by its search.json or steps.
        if names.allSatisfy(isSearch) && names.contains(where: { $0 != "report.html" }) { return "search's" }
        return "run's"
    }

    /// A plan's files: plan.json, its rehearsal's folder, a fleet's plan.
    static let planNames: Set = [PlanJob.fileName, PlanJob.rehearsalFolder, FleetPlanDocument.fileName]

    /// Whether `name` is `prefix` and a number: `repeat-2`, `step-07`.
    static func isNumbered(_ name: String, _ prefix: String) -> Bool {
        name.hasPrefix(prefix) && Int(name.dropFirst(prefix.count)) != nil
    }

    /// The files a run writes in its folder (a repeat set's manifest and the answers' ids too).
    static let resultNames = Set(
        RunSummary.files + [RepeatManifest.fileName, AnswerIDDocument.fileName]
            // A campaign's (`fanout run --fleet`): its document and its halves' folders.
            + [CampaignDocument.fileName] + PushService.allCases.map(\.rawValue)
    )

    /// `path` with symbolic links and `.`/`..` resolved, for comparing two names of one file.
    static func resolved(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
    }
}
