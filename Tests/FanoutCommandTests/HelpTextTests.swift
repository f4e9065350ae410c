import FanoutAssembly
import FanoutReport
import Foundation
import Testing

/// `--help` of every subcommand agrees with itself and with the code: a default said once and in
/// one form, required options required in the usage line, every exit code the commands use in
/// `fanout --help` and docs/reports.md, every gate metric in `gate --help`.
@Suite struct HelpTextTests {
    struct Argument {
        var command: String
        var name: String
        var abstract: String
        var declaredDefault: String?
        var required: Bool
        /// The values its help lists (`(values: …)`), when it lists them.
        var listedValues: [String]?
    }

    /// What the tests read of ArgumentParser's `--experimental-dump-help` (its ToolInfo, version 0).
    struct DumpedHelp: Decodable {
        var command: Command

        struct Command: Decodable {
            var commandName: String?
            var arguments: [Argument]?
            var subcommands: [Command]?
        }

        struct Argument: Decodable {
            var names: [Name]?
            var valueName: String?
            var abstract: String?
            var defaultValue: String?
            var isOptional: Bool?
            var allValues: [String]?
        }

        struct Name: Decodable {
            var name: String
        }
    }

    /// Every option and argument of every subcommand, from ArgumentParser's own description of
    /// the declarations (`--experimental-dump-help`).
    static let arguments: [Argument] = described.arguments

    /// The subcommands that run (those without subcommands of their own), `help` aside.
    static let leaves: [String] = described.leaves

    static let described: (arguments: [Argument], leaves: [String]) = {
        guard let result = try? CommandRunner.run(["--experimental-dump-help"]),
            let data = result.standardOutput.data(using: .utf8),
            let root = try? JSONDecoder().decode(DumpedHelp.self, from: data)
        else { return ([], []) }
        var arguments: [Argument] = []
        var leaves: [String] = []
        func walk(_ command: DumpedHelp.Command, _ path: String) {
            if (command.subcommands ?? []).isEmpty, path != "fanout help" { leaves.append(path) }
            for argument in command.arguments ?? [] {
                let name = argument.names?.first?.name ?? argument.valueName ?? "?"
                arguments.append(
                    Argument(
                        command: path,
                        name: name,
                        abstract: argument.abstract ?? "",
                        declaredDefault: argument.defaultValue,
                        required: !(argument.isOptional ?? true),
                        listedValues: argument.allValues
                    )
                )
            }
            for sub in command.subcommands ?? [] {
                walk(sub, path + " " + (sub.commandName ?? "?"))
            }
        }
        walk(root.command, "fanout")
        return (arguments, leaves)
    }()

    static func argument(_ command: String, _ name: String) throws -> Argument {
        try #require(arguments.first { $0.command == command && $0.name == name }, "\(command) --\(name)")
    }

    static func help(_ command: String) throws -> String {
        let words = command.split(separator: " ").dropFirst().map(String.init)
        return try CommandRunner.run(words + ["--help"]).standardOutput
    }

    @Test func everySubcommandIsDescribed() {
        #expect(Self.arguments.count > 200, "\(Self.arguments.count) arguments")
        #expect(Set(Self.arguments.map(\.command)).count > 15)
    }

    /// ArgumentParser writes a declared default as "(default: X)"; a help text that says it too
    /// prints it twice, and one written "(default X)" is a second style.
    @Test func aDefaultIsSaidOnceInOneForm() {
        for argument in Self.arguments {
            let place = "\(argument.command) --\(argument.name): \(argument.abstract)"
            if argument.declaredDefault != nil {
                #expect(!argument.abstract.contains("default:"), "said twice: \(place)")
            }
            #expect(
                argument.abstract.firstMatch(of: /\(default(?!:)|[;,] default(?!:)/) == nil,
                "another form: \(place)"
            )
            #expect(argument.abstract.ranges(of: "default:").count <= 1, "twice: \(place)")
        }
    }

    /// `fanout run --sink-device-X` says what `fanout sink --device-X` says, of the embedded
    /// sink, from the one text (issue 64: it said only "The embedded sink's --device-X.", with
    /// none of the sink's meaning or default).
    @Test func theEmbeddedSinksDeviceOptionsSayWhatTheSinksSay() throws {
        let embedded = Self.arguments.filter { $0.command == "fanout run" && $0.name.hasPrefix("sink-device-") }
        #expect(embedded.count >= 17, "\(embedded.map(\.name))")
        for option in embedded {
            let name = String(option.name.dropFirst("sink-".count))
            let sink = try Self.argument("fanout sink", name)
            let text = sink.abstract.prefix(1).lowercased() + sink.abstract.dropFirst()
            #expect(option.abstract == "The embedded sink's --\(name): " + text, "\(option.name)")
        }
    }

    /// ArgumentParser upper-cases a group's title: one naming an option ("THE RETURN WAVE
    /// (--SINK-RETURN-TO)") spells it as the binary refuses it (newcomer pass, issue 64).
    @Test func noSectionTitleNamesAnOption() throws {
        for command in ["fanout run", "fanout send", "fanout sink", "fanout plan"] {
            let titles = try Self.help(command).split(separator: "\n").filter {
                $0.hasSuffix(":") && $0.first?.isUppercase == true
            }
            #expect(titles.allSatisfy { $0.firstMatch(of: /--[A-Z]/) == nil }, "\(command): \(titles)")
        }
    }

    /// Options a command's `validate()` requires though ArgumentParser cannot know it.
    static let requiredByValidation: Set<String> = [
        "fanout send --topic", "fanout plan --devices", "fanout plan --deadline", "fanout plan --rtt",
        "fanout search --slo",
    ]

    /// An option the command cannot do without stands outside brackets in its usage line,
    /// whether ArgumentParser requires it or `validate()` does.
    @Test func requiredOptionsAreRequiredInTheUsageLine() throws {
        let required = Self.arguments.filter {
            $0.required || Self.requiredByValidation.contains("\($0.command) --\($0.name)")
        }
        #expect(required.contains { $0.command == "fanout send" && $0.name == "topic" })
        for argument in required where argument.name.count > 1 {
            let help = try Self.help(argument.command)
            guard
                let usage = help.components(separatedBy: "USAGE:").dropFirst().first?
                    .components(separatedBy: "\n\n").first
            else {
                Issue.record("\(argument.command): no usage line")
                continue
            }
            let flat = usage.replacing(/\s+/, with: " ")
            let outside = flat.replacing(/\[[^\]]*\]/, with: "")
            let option = "--\(argument.name) "
            let positional = "<\(argument.name)>"
            #expect(
                outside.contains(option) || outside.contains(positional) || flat.contains("<\(argument.name)>"),
                "\(argument.command): \(argument.name) is required but its usage is \(flat)"
            )
        }
    }

    /// Every exit code a command throws or a run ends with is in `fanout --help` and the table
    /// of docs/reports.md.
    @Test func everyExitCodeIsListed() throws {
        let root = CommandRunner.repositoryRoot
        var codes: Set<Int> = [0, 64]  // success, and ArgumentParser's usage errors
        let sources = try FileManager.default.contentsOfDirectory(atPath: root + "/Sources/fanout")
        for file in sources {
            let text = try String(contentsOfFile: root + "/Sources/fanout/" + file, encoding: .utf8)
            for found in text.matches(of: /ExitCode\((\d+)\)/) { codes.insert(Int(found.1)!) }
            if text.contains("ExitCode.failure") { codes.insert(1) }
        }
        for file in ["Sources/FanoutRun/RunStatus.swift", "Sources/FanoutReport/Judging/Gate.swift"] {
            let text = try String(contentsOfFile: root + "/" + file, encoding: .utf8)
            for found in text.matches(of: /case \w+ = (\d+)\n/) { codes.insert(Int(found.1)!) }
        }
        #expect(codes.isSuperset(of: [0, 1, 2, 3, 4, 5, 64, 129, 130, 143]), "\(codes.sorted())")
        let help = try Self.help("fanout")
        let listed = help.components(separatedBy: "Exit codes").last ?? ""
        let table =
            try String(contentsOfFile: root + "/docs/reports.md", encoding: .utf8)
            .components(separatedBy: "## Exit codes").dropFirst().first ?? ""
        for code in codes.sorted() {
            #expect(
                listed.contains(try Regex("(^|\\s|,)\(code)[\\s,]")),
                "fanout --help does not list exit code \(code)"
            )
            #expect(
                table.contains(try Regex("\\n\\| (\\d+, )*\(code)(, \\d+)* \\|")),
                "docs/reports.md does not list \(code)"
            )
        }
    }

    /// Issue #64: every subcommand that runs says its exit statuses in its own help, in one
    /// form ("Exit status: 0 …"), each code among those `fanout --help` lists.
    @Test func everySubcommandSaysItsExitStatus() throws {
        #expect(Self.leaves.count >= 16, "\(Self.leaves)")
        let listed = try Self.help("fanout").components(separatedBy: "Exit codes").last ?? ""
        let known = Set(listed.matches(of: /(?m)^\s+(\d+)/).map { Int($0.1)! } + [129, 130, 143])
        for command in Self.leaves {
            let help = try Self.help(command).replacing(/\s+/, with: " ")
            // The sentence runs to its full stop (not a file name's dot: `summary.json`).
            guard let sentence = help.firstMatch(of: /Exit status(?: \([^)]*\))?: (0.*?)\.(?: [A-Z]|$)/) else {
                Issue.record("\(command) --help says no exit status")
                continue
            }
            // Its numbers, HTTP statuses aside (`answered 403`).
            let codes = sentence.1.matches(of: /(?:^|[ ,;(])(\d{1,3})(?=[ ,;)])/).map { Int($0.1)! }
                .filter { !(200...599).contains($0) }
            #expect(codes.count > 1 && Set(codes).isSubset(of: known), "\(command): \(codes)")
        }
    }

    /// Issue #64: what a help lists is what the command takes, and what it says is true of that
    /// command: `plan --window-refill` lists no value it refuses; `--cores` shows no default
    /// baked from the machine that printed it; `--output` names every file a run writes; a text
    /// shared by commands names none of them as the one it speaks of.
    @Test func helpSaysWhatThisCommandDoes() throws {
        #expect(try Self.argument("fanout plan", "window-refill").listedValues == ["half", "each-frame"])
        let refused = try CommandRunner.run(
            ["plan", "--devices", "1M", "--deadline", "5m", "--rtt", "80ms", "--window-refill", "threshold"]
        )
        #expect(refused.status == 64)
        #expect(try Self.argument("fanout plan", "cores").declaredDefault == nil)
        for command in ["fanout run", "fanout send"] {
            let output = try Self.argument(command, "output").abstract
            let named = Set(output.matches(of: /[a-z]+\.(?:json|md|html|hgrm|hlog)/).map { String($0.0) })
            #expect(named.isSuperset(of: RunSummary.files), "\(command) --output: \(output)")
        }
        let subcommands = Set(Self.leaves.map { $0.split(separator: " ")[1] })
        for argument in Self.arguments {
            let own = argument.command.split(separator: " ").dropFirst().first
            for named in argument.abstract.matches(of: /\b([a-z]+) requires it\b/) where subcommands.contains(named.1) {
                #expect(named.1 == own, "\(argument.command) --\(argument.name): \(argument.abstract)")
            }
        }
        // `send` has no sink in its process.
        let send = Self.arguments.filter { $0.command == "fanout send" }
        #expect(send.allSatisfy { $0.abstract.firstMatch(of: /embedded sink/) == nil })
    }

    @Test func gateHelpNamesEveryMetric() throws {
        let help = try Self.help("fanout gate").replacing(/\s+/, with: " ")
        for metric in RunMetric.allCases.map(\.rawValue) {
            let word = metric.hasPrefix("violations.") ? String(metric.dropFirst("violations.".count)) : metric
            #expect(help.contains(word), "gate --help does not name \(metric)")
        }
        #expect(help.contains("violations.RULE"))
    }

    /// One prefix for every error, whoever found it: ArgumentParser, a subcommand's `run()`.
    @Test(arguments: [
        ["plan", "--devices", "1M", "--deadline", "5m", "--rtt", "80"],
        ["gate", "/nonexistent-folder", "--threshold", "p99 < 1ms"],
        ["merge", "/nonexistent-a", "/nonexistent-b", "--output", "/nonexistent-c"],
        ["send", "--endpoint", "http://127.0.0.1:1", "--template", "fixtures/poll.json", "--generate", "1"],
        ["tokens", "count", "--tokens", "/nonexistent-file"],
    ])
    func errorsStartErrorColon(arguments: [String]) throws {
        let result = try CommandRunner.run(arguments)
        #expect(result.status != 0)
        #expect(result.standardError.hasPrefix("error: "), "\(arguments): \(result.standardError)")
    }

    @Test func aDurationWithoutUnitSaysHowToWriteOne() throws {
        let result = try CommandRunner.run(["plan", "--devices", "1M", "--deadline", "5m", "--rtt", "80"])
        #expect(result.status == 64)
        #expect(
            result.standardError.hasPrefix("error: --rtt: '80' is not a duration; write it like 250us, 5ms"),
            "\(result.standardError)"
        )
    }

    /// Issue 61, review: `--rate -5` said "Missing value for '--rate <rate>'" (ArgumentParser
    /// took -5 for an option), and hexadecimal numbers were taken (`--rate 0x10` ran at 16/s).
    @Test(arguments: [
        (
            ["--rate", "-5", "--duration", "1s"],
            "error: --rate: '-5' is below zero; write N or N/WINDOW, like 5000/s or 300/1m"
        ),
        (
            ["--rate", "10", "--duration", "-1s"],
            "error: --duration: '-1s' is below zero; write it like 250us, 5ms, 1.5s, 2m or 1h, at most a year (8784h)"
        ),
        (
            ["--rate", "0x10", "--duration", "1s"],
            "error: --rate: '0x10' is not a rate; write N or N/WINDOW, like 5000/s or 300/1m"
        ),
        (
            ["--rate", "10", "--duration", "0x1p1s"],
            "error: --duration: '0x1p1s' is not a duration; write it like 250us, 5ms, 1.5s, 2m or 1h, at most a year (8784h)"
        ),
    ])
    func negativeAndHexadecimalValuesAreSaidAsSuch(arguments: [String], line: String) throws {
        let result = try CommandRunner.run(["run"] + arguments)
        #expect(result.status == 64)
        #expect(result.standardError.split(separator: "\n").first.map(String.init) == line, "\(result.standardError)")
    }
}
