import ArgumentParser
import FanoutReport
import FanoutRun

/// The `fanout` command: configuration only; each subcommand calls into a library module.
@main
struct Fanout: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fanout",
        abstract: "Fans one APNs notification out to many device tokens over HTTP/2, and measures it.",
        discussion: """
            Exit codes: 0 success; 1 bad input (a template, a token) or a notification that could \
            not be encoded; 5 the endpoint could not be reached (the cause on standard error); 64 a \
            usage error.
            """,
        version: FanoutVersion.current,
        subcommands: [
            RunCommand.self, SendCommand.self, PlanCommand.self, SearchCommand.self, GateCommand.self,
            CompareCommand.self,
            MergeCommand.self, ClusterCommand.self, ExportCommand.self, ABCommand.self,
            PayloadCommand.self,
            TokensCommand.self,
            SinkCommand.self,
            ProbeCommand.self,
        ]
    )

    /// ArgumentParser's `main`, but an error from a subcommand's `run()` (where each builds its
    /// job, once) is reported with that subcommand's usage, as one from `validate()` would be.
    static func main() async {
        let command: any ParsableCommand
        do {
            command = try parseAsRoot()
        } catch {
            exit(withError: error)
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
            printError("Error: \(error.message)")
            printError("Usage: \(usage)")
            printError("  See '\(path) --help' for more information.")
            exit(withError: ExitCode.validationFailure)
        } catch {
            exit(withError: error)
        }
    }
}
