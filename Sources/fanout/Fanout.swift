import ArgumentParser
import FanoutNotation
import FanoutReport
import FanoutResults
import FanoutRun

/// The `fanout` command: configuration only; each subcommand calls into a library module.
@main
struct Fanout: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fanout",
        abstract: "Fans one APNs notification out to many device tokens over HTTP/2, and measures it.",
        discussion: """
            Errors start "error:" on standard error. Exit codes (each subcommand's --help \
            says which it uses):
              0    success
              1    an error (a template, a token, a file); a gate threshold failed;
                   compare --fail-on-regression: a metric WORSE; a plan not verified
              2    gate, export, compare: a run that cannot be trusted (invalid);
                   merge: refused; ab: a metric WORSE
              3    run, send: sender and sink disagree, or notifications failed;
                   search: no rate kept the objectives
              4    run, send: invalid (fewer answers than --min-measured, the generator
                   fell behind its schedule, or the queue for streams passed
                   --max-backlog and cut it); search: the answer is the generator's
                   limit; ab: a metric BETTER
              5    the endpoint could not be reached (the cause on standard error)
              6    run, send: an --abort-on condition stopped the run (its folder says
                   which, over which window, when)
              64   a usage error: an option, a threshold, a folder that is not a run
              129, 130, 143
                   run, send, search, plan, ab: stopped by SIGHUP, SIGINT or SIGTERM
                   (a run's folder is written, marked interrupted; ab passes the
                   signal to its run); the sink drains on them and exits 0, a
                   server's normal stop
            """,
        version: FanoutVersion.current,
        subcommands: [
            RunCommand.self, SendCommand.self, PlanCommand.self, SearchCommand.self, GateCommand.self,
            CompareCommand.self,
            MergeCommand.self, ClusterCommand.self, ExportCommand.self, ReportCommand.self, ABCommand.self,
            PayloadCommand.self,
            TokensCommand.self,
            SinkCommand.self,
            ProbeCommand.self,
        ]
    )

    /// ArgumentParser's `main`, but an error from a subcommand's `run()` (where each builds its
    /// job, once) is reported with that subcommand's usage, as one from `validate()` would be,
    /// and every error message starts `error:`, as the subcommands' own do.
    static func main() async {
        let command: any ParsableCommand
        do {
            command = try parseAsRoot()
            // The files its options name, checked once the options are judged, before the job.
            try InputFiles.check(of: command)
        } catch {
            fail(error)
        }
        do {
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                var command = command
                try command.run()
            }
        } catch let error as ValidationError {
            let usage = usageString(for: type(of: command))
            // "fanout cluster render" of "fanout cluster render [--shards <n>] …".
            let path = usage.split(separator: " ").prefix { !"-<[".contains($0.first ?? "-") }.joined(separator: " ")
            reportError(error.message)
            printError("Usage: \(usage)")
            printError("  See '\(path) --help' for more information.")
            exit(withError: ExitCode.validationFailure)
        } catch {
            fail(error)
        }
    }

    /// Exits as ArgumentParser would for `error`, its message (if any) in Fanout's one form.
    static func fail(_ error: any Error) -> Never {
        let code = exitCode(for: error)
        let message = fullMessage(for: error)
        guard code != .success, !message.isEmpty else { exit(withError: error) }
        // ArgumentParser's own errors arrive as "Error: …"; a job's error as its bare message.
        let text = message.hasPrefix("Error: ") ? String(message.dropFirst("Error: ".count)) : message
        reportError(withHint(negativeValue(text, arguments: CommandLine.arguments) ?? text))
        exit(withError: code)
    }

    /// ArgumentParser takes `-5` after an option for another option, and says "Missing value for
    /// '--rate <rate>'" when it was the value, below zero (issue 61, review): said as what it is,
    /// "--rate: '-5' is below zero", with how to write one. `nil` when the option was not
    /// followed by a negative number.
    static func negativeValue(_ message: String, arguments: [String]) -> String? {
        guard let found = message.firstMatch(of: /Missing value for '(--[a-z0-9-]+) <([a-z-]+)>'/),
            let at = arguments.firstIndex(of: String(found.1)), at + 1 < arguments.count,
            arguments[at + 1].wholeMatch(of: /-[0-9.].*/) != nil
        else { return nil }
        let value = arguments[at + 1]
        let hint = hints[String(found.2)].map { "; \($0)" } ?? ""
        return message.replacingCharacters(in: found.range, with: "\(found.1): '\(value)' is below zero\(hint)")
    }

    /// How to write a value of each grammar, by the value name its options show (`<duration>`).
    static let hints = [
        "duration": DurationNotation.hint, "share": ShareNotation.hint, "rate": EventRate.hint,
        "time": TimeNotation.hint,
    ]

    /// ArgumentParser's "The value '80' is invalid for '--rtt <duration>'" with how to write one,
    /// as the sink says it: "…; write it like 250us, 5ms, 1.5s, 2m or 1h, …". Not when the
    /// option's reader said why it refused the value ("…': rtt must be longer than 0; got 0ms"):
    /// the value may be one of its grammar, out of range, and the why is the message.
    static func withHint(_ message: String) -> String {
        guard let found = message.firstMatch(of: /The value '(.*)' is invalid for '(\S+) <([a-z-]+)>'(?!: )/),
            let hint = hints[String(found.3)]
        else { return message }
        return message.replacingCharacters(
            in: found.range,
            with: "\(found.2): '\(found.1)' is not a \(found.3); \(hint)"
        )
    }
}
