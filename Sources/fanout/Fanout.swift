import ArgumentParser
import FanoutReport

/// The `fanout` command: configuration only; each subcommand calls into a library module.
@main
struct Fanout: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fanout",
        abstract: "Fans one APNs notification out to many device tokens over HTTP/2, and measures it.",
        discussion: """
            Exit codes: 0 success; 1 bad input (a template, a token) or a notification that could \
            not be encoded; 64 a usage error.
            """,
        version: FanoutVersion.current,
        subcommands: [
            RunCommand.self, SendCommand.self, PlanCommand.self, SearchCommand.self, GateCommand.self,
            CompareCommand.self,
            MergeCommand.self, ClusterCommand.self, ExportCommand.self, ABCommand.self,
            PayloadCommand.self,
            TokensCommand.self,
            SinkCommand.self,
        ]
    )
}
