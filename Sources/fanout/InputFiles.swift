import ArgumentParser
import FanoutFiles
import FanoutRun
import Foundation

/// The files a command's options name for it to read, checked once its options are judged and
/// before its job starts (`Fanout.main`): a missing or unreadable one is one error in one form,
/// whichever option names it — `cannot read --template nope.json: no such file`, exit 1
/// (`fanout --help`: "1 an error (a template, a token, a file)"). Newcomer passes 4 and 5 met
/// four wordings, and exits of 1 and 64, for the same missing file. What a file holds is its
/// reader's to judge, later, with its line.
protocol ReadsInputFiles {
    /// Each option that names a file to read, with its value (`nil`: not given).
    var inputFiles: [(option: String, path: String?)] { get }
}

enum InputFiles {
    /// `command`'s files (none when it reads none).
    static func check(of command: any ParsableCommand) throws(JobError) {
        guard let reader = command as? any ReadsInputFiles else { return }
        try check(reader.inputFiles)
    }

    /// Throws for the first path that cannot be read; `nil` (not given) and `-` (standard input)
    /// pass, and so does a pipe or a device (`--tokens <(…)`): only a path that is missing, a
    /// folder or unreadable is refused here.
    static func check(_ files: [(option: String, path: String?)]) throws(JobError) {
        for case let (option, path?) in files where path != "-" {
            if let problem = FileProblem.problem(reading: path, streams: true) {
                throw JobError.cannotRead(.optionValue(option, path), problem)
            }
        }
    }
}

// Each command's files, from its own options and its groups'.

extension TokenKeyOptions { var inputFiles: [(option: String, path: String?)] { [("--key-file", keyFile)] } }
extension TokenInputOptions { var inputFiles: [(option: String, path: String?)] { [("--tokens", tokens)] } }
extension TemplateOptions { var inputFiles: [(option: String, path: String?)] { [("--template", template)] } }
extension SinkScenarioOptions { var inputFiles: [(option: String, path: String?)] { [("--scenario", scenarioFile)] } }
extension EmbeddedSinkOptions {
    var inputFiles: [(option: String, path: String?)] { [("--sink-scenario", sinkScenario)] }
}

extension EndpointOptions {
    var inputFiles: [(option: String, path: String?)] {
        [("--scenario", scenario), ("--ca-file", caFile), ("--cert", cert), ("--cert-key", certKey)]
            + tokenKey.inputFiles
    }
}

extension SendCommand: ReadsInputFiles {
    var inputFiles: [(option: String, path: String?)] {
        tokenOptions.inputFiles + templateOptions.inputFiles + target.inputFiles
    }
}

extension RunCommand: ReadsInputFiles {
    var inputFiles: [(option: String, path: String?)] { [("--template", template)] + sink.inputFiles }
}

extension SinkCommand: ReadsInputFiles {
    var inputFiles: [(option: String, path: String?)] {
        [("--tls-cert", tlsCert), ("--tls-key", tlsKey)] + scenario.inputFiles + tokenKey.inputFiles
    }
}

extension PlanCommand: ReadsInputFiles {
    var inputFiles: [(option: String, path: String?)] { [("--probe", probe), ("--template", template)] }
}

extension SearchCommand: ReadsInputFiles {
    /// The endpoint's files only with `--endpoint` (without it they are refused as options).
    var inputFiles: [(option: String, path: String?)] {
        guard endpoint != nil else { return [("--template", template)] + sink.inputFiles }
        return [("--tokens", tokens), ("--template", template)] + target.inputFiles
    }
}

extension ProbeCommand: ReadsInputFiles {
    var inputFiles: [(option: String, path: String?)] {
        [("--tokens", tokens), ("--template", template)] + target.inputFiles
    }
}

extension TokensCommand.Count: ReadsInputFiles {
    var inputFiles: [(option: String, path: String?)] { input.inputFiles }
}

extension TokensCommand.Convert: ReadsInputFiles {
    var inputFiles: [(option: String, path: String?)] { input.inputFiles }
}

extension PayloadCommand.Render: ReadsInputFiles {
    var inputFiles: [(option: String, path: String?)] { templateOptions.inputFiles }
}

extension GateCommand: ReadsInputFiles {
    var inputFiles: [(option: String, path: String?)] { [("--thresholds", thresholdsFile)] }
}

extension ClusterCommand.Render: ReadsInputFiles {
    /// Its thresholds, and what the send after `--` reads (its key goes into the Secret).
    var inputFiles: [(option: String, path: String?)] {
        [("--thresholds", thresholds)] + ((try? SendCommand.parse(sendOptions))?.inputFiles ?? [])
    }
}
