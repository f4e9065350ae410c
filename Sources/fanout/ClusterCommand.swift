import ArgumentParser
import FanoutNotation
import FanoutRun
import Foundation

/// `fanout cluster`: sharded runs on Kubernetes.
struct ClusterCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cluster",
        abstract: "Run a fan-out as N shards on Kubernetes, started together, merged and gated as one.",
        subcommands: [Render.self]
    )
}

extension ClusterCommand {
    /// `fanout cluster render`.
    struct Render: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the Kubernetes objects of a sharded run, for `kubectl apply -f -`.",
            discussion: """
                Give fanout send's options after --. Prints a ConfigMap (the template, header \
                scenario and thresholds), a Secret (token-auth key, certificates) when any is \
                given, an Indexed Job of N pods — pod k runs fanout send --shard (k+1)/N \
                --start-at T --output /results/NAME/shard-(k+1) --metrics 0.0.0.0:9464, never \
                re-run; a shard its --abort-on stopped (exit status 6) fails the Job, which ends \
                the others (each writes its folder marked interrupted) — and a merge Job that waits for the shards, runs fanout merge and \
                fanout gate, and exits with the verdict. Results go to a ReadWriteMany claim \
                mounted at /results. --with-sink adds fanout sink as a Deployment and Service \
                (the shards send to it unless --endpoint is given). The start time is fixed \
                when the manifests are rendered: apply them within --start-in.

                Exit status: 0 with the manifests printed, 1 when a file they name cannot be read \
                (the send's --key-file or --template, --thresholds), 64 when the options (the send's \
                after --, the sink's) cannot make them.
                """
        )

        @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("How many shards (pods).", valueName: "n"))
        var shards: Int

        @Option(name: .long, help: ArgumentHelp("The Fanout image (see the Dockerfile).", valueName: "image"))
        var image: String

        @Option(
            name: .long,
            help: ArgumentHelp("The run's name: its objects' and results folder's.", valueName: "name")
        )
        var name = "fanout"

        @Option(name: .long, help: ArgumentHelp("The namespace.", valueName: "namespace"))
        var namespace = "default"

        @Option(
            name: .long,
            help: ArgumentHelp("A ReadWriteMany claim for the results, mounted at /results.", valueName: "pvc")
        )
        var resultsClaim = "fanout-results"

        @Option(name: .long, help: ArgumentHelp("Render the claim too, of this size (10Gi).", valueName: "size"))
        var claimSize: String?

        @Option(
            name: .long,
            help: ArgumentHelp(
                "Start this long after rendering (default: \(DurationNotation.format(ClusterManifests.defaultStartIn))).",
                valueName: "duration"
            )
        )
        var startIn: Duration?

        @Option(name: .long, help: ArgumentHelp("Start at this time (RFC 3339).", valueName: "time"))
        var startAt: Moment?

        @Option(
            name: .long,
            help: ArgumentHelp("The gate's thresholds file (default: failed == 0).", valueName: "file")
        )
        var thresholds: String?

        @Option(name: .long, help: ArgumentHelp("CPU per shard, requested and limited.", valueName: "cpu"))
        var cpu = "2"

        @Option(name: .long, help: ArgumentHelp("Memory per shard.", valueName: "bytes"))
        var memory = "1Gi"

        @Flag(name: .long, help: "Add fanout sink as a Deployment and Service, for a rehearsal in the cluster.")
        var withSink = false

        @Option(
            name: .customLong("sink-option"),
            parsing: .unconditionalSingleValue,
            help: ArgumentHelp("An option of the in-cluster fanout sink (repeat it).", valueName: "option")
        )
        var sinkOptions: [String] = []

        @Option(
            name: .long,
            help: ArgumentHelp(
                "The longest the merge waits for the shards after the start.",
                valueName: "duration"
            )
        )
        var mergeWait = ClusterManifests.defaultMergeWait

        @Argument(
            parsing: .postTerminator,
            help: ArgumentHelp("fanout send's options, after --.", valueName: "send-options")
        )
        var sendOptions: [String] = []

        func validate() throws {
            if startIn != nil && startAt != nil {
                throw ValidationError("--start-in and --start-at do not go together.")
            }
            if !sinkOptions.isEmpty && !withSink { throw ValidationError("--sink-option goes with --with-sink.") }
            // The shards' options are checked here, as each pod would check them.
            let hasEndpoint = ClusterManifests.namesEndpoint(sendOptions)
            if !withSink && !hasEndpoint {
                throw ValidationError(
                    "the send options need --endpoint URL (or --with-sink, to send to a sink in the cluster)."
                )
            }
            var options = sendOptions
            if withSink && !hasEndpoint {
                options += ["--endpoint", "http://sink:\(ClusterManifests.sinkPort)"]
            }
            do {
                _ = try SendCommand.parse(options)
            } catch {
                throw ValidationError("the send options after --: \(SendCommand.message(for: error))")
            }
            // The in-cluster sink's options, as its pod will parse them.
            guard withSink else { return }
            let listen = [
                "--listen", "0.0.0.0:\(ClusterManifests.sinkPort)", "--admin",
                "0.0.0.0:\(ClusterManifests.sinkAdminPort)",
            ]
            do {
                _ = try SinkCommand.parse(listen + sinkOptions)
            } catch {
                // Each --sink-option is one argument of the sink's: `--latency fixed:80ms` in one
                // is one argument the sink does not know.
                let joined = sinkOptions.first { $0.hasPrefix("-") && $0.contains(" ") }
                let hint =
                    joined.map {
                        " ('\($0)' is one argument: give each its own --sink-option, like --sink-option=\($0.split(separator: " ").joined(separator: " --sink-option=")))"
                    } ?? ""
                throw ValidationError("the --sink-option values: \(SinkCommand.message(for: error))\(hint)")
            }
        }

        func manifests() throws -> ClusterManifests {
            let wait = startIn ?? ClusterManifests.defaultStartIn
            let start = startAt?.date ?? Date().addingTimeInterval(wait.seconds)
            var manifests = ClusterManifests(shards: shards, image: image, startAt: start, sendOptions: sendOptions)
            manifests.name = name
            manifests.namespace = namespace
            manifests.resultsClaim = resultsClaim
            manifests.claimSize = claimSize
            manifests.thresholds = thresholds
            manifests.cpu = cpu
            manifests.memory = memory
            manifests.withSink = withSink
            manifests.sinkOptions = sinkOptions
            manifests.mergeWait = try mergeWait.positive("--merge-wait")
            return manifests
        }

        func run() throws {
            if let endpoint = ClusterManifests.loopbackEndpoint(in: sendOptions) {
                reportWarning(
                    "--endpoint \(endpoint) is each pod's own loopback, not a service in the cluster"
                )
            }
            let text: String
            do {
                text = try manifests().render()
            } catch let error as JobError {
                reportError("\(error)")
                throw ExitCode(64)
            }
            StandardStream.output.write(text.utf8)
        }
    }
}
