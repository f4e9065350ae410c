import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Fanout's version, as `fanout --version` prints it and every results file records it.
public enum FanoutVersion {
    public static let current = "0.2.0"
}

/// The command line that wrote a results file, as a person would type it again: `fanout …`
/// with each argument shell-quoted where it needs to be. `nil` when the process is not the
/// `fanout` executable (a test, or a program using the library), whose arguments are not a
/// Fanout command.
public enum Invocation {
    public static var command: String? { command(CommandLine.arguments) }

    package static func command(_ arguments: [String]) -> String? {
        guard let program = arguments.first, program.split(separator: "/").last == "fanout" else { return nil }
        var words: [String] = []
        var secretNext = false
        for argument in arguments {
            defer { secretNext = secrets.contains(argument) }
            if secretNext {
                words.append("'<redacted>'")
            } else if let secret = secrets.first(where: { argument.hasPrefix($0 + "=") }) {
                words.append(secret + "='<redacted>'")
            } else {
                words.append(shellQuoted(argument))
            }
        }
        return words.joined(separator: " ")
    }

    /// Options whose value is a secret, never recorded (summary.json, summary.md and report.html
    /// travel to CI pages): an OAuth2 access token given inline.
    static let secrets: Set<String> = ["--fcm-bearer"]

    /// `'…'` around a word a POSIX shell would split or expand, a `'` in it written `'\''`.
    public static func shellQuoted(_ word: String) -> String {
        let plain = !word.isEmpty && word.unicodeScalars.allSatisfy { Self.plain.contains($0) }
        return plain ? word : "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    private static let plain = CharacterSet(
        charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:=,@%+-"
    )
}

/// Where a run ran: what `summary.json` records so that runs on different machines or builds
/// are not compared as if they were alike.
public struct RunEnvironment: Codable, Sendable, Hashable {
    public var fanoutVersion = FanoutVersion.current
    /// `debug` or `release`.
    public var build: String
    /// `jemalloc` when the process runs on it, else `system`.
    public var allocator: String
    /// The CPU's model name, as /proc/cpuinfo gives it.
    public var cpu: String
    /// Cores this process may use.
    public var cores: Int
    public var operatingSystem: String
    public var hostname: String

    /// This process's environment.
    public static var current: RunEnvironment {
        #if DEBUG
        let build = "debug"
        #else
        let build = "release"
        #endif
        return RunEnvironment(
            build: build,
            // jemalloc's control function is there only when jemalloc is linked in.
            allocator: dlsym(nil, "mallctl") != nil ? "jemalloc" : "system",
            cpu: cpuModel ?? "unknown",
            cores: ProcessInfo.processInfo.activeProcessorCount,
            operatingSystem: ProcessInfo.processInfo.operatingSystemVersionString,
            hostname: ProcessInfo.processInfo.hostName
        )
    }

    private static var cpuModel: String? {
        guard let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("model name") {
            return line.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) }
        }
        return nil
    }

    enum CodingKeys: String, CodingKey {
        case fanoutVersion = "fanout_version"
        case build, allocator, cpu, cores
        case operatingSystem = "os"
        case hostname
    }
    public init(
        build: String,
        allocator: String,
        cpu: String,
        cores: Int,
        operatingSystem: String,
        hostname: String
    ) {
        self.build = build
        self.allocator = allocator
        self.cpu = cpu
        self.cores = cores
        self.operatingSystem = operatingSystem
        self.hostname = hostname
    }
}

extension RunEnvironment {
    /// Each fact by its key, in key order, as report.html tabulates them.
    public var rows: [(key: String, value: String)] {
        [
            (CodingKeys.allocator, allocator), (.build, build), (.cores, "\(cores)"), (.cpu, cpu),
            (.fanoutVersion, fanoutVersion), (.hostname, hostname), (.operatingSystem, operatingSystem),
        ].map { ($0.0.rawValue, $0.1) }
    }
}
