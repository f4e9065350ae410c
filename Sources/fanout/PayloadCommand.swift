import ArgumentParser
import FanoutAPNs
import FanoutMachine
import FanoutNotation
import FanoutPayload
import FanoutRun
import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `fanout payload`: working with notification templates.
struct PayloadCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "payload",
        abstract: "Work with notification templates.",
        subcommands: [Render.self]
    )
}

/// Options that say how a template is read, shared by every command that loads one.
struct TemplateOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The notification template, a JSON file.", valueName: "file"))
    var template: String

    @Option(
        name: .long,
        help: ArgumentHelp("The push type the notification is sent as (default: alert).", valueName: "type")
    )
    var pushType: APNsPushType?

    @Option(
        name: .long,
        help: ArgumentHelp("The payload size limit (default: 4096, or 5120 for voip).", valueName: "bytes")
    )
    var sizeLimit: Int?

    @Option(
        name: .long,
        help: ArgumentHelp("Names for the token fields in column order, for {{field.NAME}}.", valueName: "names")
    )
    var fieldNames: String?

    @Flag(name: .long, help: "Pass aps keys Fanout does not know through instead of rejecting them.")
    var allowUnknownAPSKeys = false

    func validate() throws {
        if let sizeLimit { try MachineLimits.payloadLimit("--size-limit").validate(sizeLimit) }
    }

    var options: PayloadTemplate.Options { options(pushType: pushType ?? .alert) }

    /// The options with the push type decided elsewhere (`fanout send`'s scenario file).
    func options(pushType: APNsPushType) -> PayloadTemplate.Options {
        PayloadTemplate.Options(
            pushType: pushType,
            sizeLimit: sizeLimit,
            fieldNames: fieldNames.map { $0.split(separator: ",").map(String.init) } ?? [],
            allowUnknownAPSKeys: allowUnknownAPSKeys
        )
    }
}

extension PayloadCommand {
    /// `fanout payload render`: the exact bytes each token would be sent.
    struct Render: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the exact payload bytes each device token would be sent.",
            discussion: """
                Each --token is a token, optionally followed by its fields separated by tabs, as a \
                line of a token file: --token $'6e0f…\\t3\\tAlice' fills {{field.1}} with 3 and \
                {{field.2}} with Alice. Payloads are printed one per line, in token order; a token \
                that cannot be encoded is reported on standard error.

                Exit status: 0 when every token's payload was printed, 1 when one could not be \
                encoded (or the template cannot be read), 64 on a usage error.
                """
        )

        @OptionGroup var templateOptions: TemplateOptions

        @Option(
            name: .long,
            help: ArgumentHelp("A device token in hex, then optional tab-separated fields.", valueName: "hex")
        )
        var token: [String] = []

        @Option(name: .long, help: ArgumentHelp("The sequence number of the first token.", valueName: "n"))
        var firstSequence: UInt64 = 0

        @Flag(name: .long, help: "Print each payload's size in bytes instead of its bytes.")
        var size = false

        @Flag(name: .long, help: "Print payloads over the size limit instead of refusing them.")
        var allowOversize = false

        func validate() throws {
            if token.isEmpty { throw ValidationError("Give at least one --token to render the template for.") }
            let last = MachineLimits.largestFirstSequence(tokens: token.count)
            if firstSequence > last {
                throw ValidationError(
                    "--first-sequence must be 0…\(last.grouped) (\(token.count.grouped) tokens are numbered from it within 64 bits); got \(firstSequence.grouped)."
                )
            }
        }

        func run() throws {
            var job = PayloadRenderJob(template: templateOptions.template, tokens: token)
            job.templateOptions = templateOptions.options
            job.firstSequence = firstSequence
            job.printsSizes = size
            job.allowsOversize = allowOversize
            job.reporter = ConsoleReporter.shared
            do {
                if try job.run(output: { StandardStream.output.write($0.readableBytesView) }) > 0 {
                    throw ExitCode.failure
                }
            } catch let error as JobError {
                reportError("\(error)")
                throw ExitCode.failure
            }
        }
    }
}
