import ArgumentParser
import FanoutAPNs
import FanoutRun

/// `fanout send --broadcast`'s options: the channels, the updates, the management endpoint.
struct BroadcastOptions: ParsableArguments {
    @Flag(
        name: .long,
        help:
            "Broadcast Live Activity updates to channels (docs/load-engine.md, Broadcasts) instead of notifications to tokens."
    )
    var broadcast = false

    @Option(name: .long, help: ArgumentHelp("Create this many channels (1 to 10,000) for the run.", valueName: "n"))
    var channels: Int?

    @Option(
        name: .long,
        help: ArgumentHelp("The created channels' message storage policy: 0 none, 1 the most recent.", valueName: "0|1")
    )
    var storagePolicy = 1

    @Option(name: .long, help: ArgumentHelp("Broadcast to these channels: one base64 id a line.", valueName: "file"))
    var channelIds: String?

    @Option(name: .long, help: ArgumentHelp("Updates sent to each channel.", valueName: "n"))
    var updates = 1

    @Flag(name: .long, help: "Leave the created channels in place at the end.")
    var keepChannels = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The channel-management endpoint (default: --endpoint itself; Apple's management host for Apple's hosts).",
            valueName: "url"
        )
    )
    var channelsEndpoint: String?

    /// Whether an option only a broadcast takes is given.
    var isGiven: Bool {
        channels != nil || channelIds != nil || keepChannels || channelsEndpoint != nil || updates != 1
            || storagePolicy != 1
    }

    func validate() throws {
        guard broadcast else {
            if isGiven {
                throw ValidationError(
                    "--channels, --channel-ids, --updates, --storage-policy, --keep-channels and --channels-endpoint go with --broadcast."
                )
            }
            return
        }
        if (channels == nil) == (channelIds == nil) {
            throw ValidationError("--broadcast: give either --channels N (created for the run) or --channel-ids FILE.")
        }
        if let channels, !(1...SendJob.Broadcast.channelLimit).contains(channels) {
            throw ValidationError(
                "--channels is 1 to \(SendJob.Broadcast.channelLimit) (APNs keeps at most 10,000 channels an app), not \(channels)."
            )
        }
        if ![0, 1].contains(storagePolicy) {
            throw ValidationError(
                "--storage-policy is 0 (no message stored) or 1 (the most recent), not \(storagePolicy)."
            )
        }
        if channelIds != nil && (keepChannels || storagePolicy != 1) {
            throw ValidationError(
                "--keep-channels and --storage-policy are for created channels (--channels), not --channel-ids."
            )
        }
        if updates < 1 { throw ValidationError("--updates must be at least 1, not \(updates).") }
    }

    /// The broadcast job part, for the app `app` sending to `endpoint`.
    func job(app: String, endpoint: SendJob.Endpoint) throws -> SendJob.Broadcast {
        var management = endpoint
        if let channelsEndpoint {
            management = try EndpointOptions.parsedEndpoint(channelsEndpoint)
        } else if let apple = endpoint.apple {
            let host = apple.management
            management = SendJob.Endpoint(tls: true, host: host.host.rawValue, port: host.port)
        }
        let source: SendJob.Broadcast.Channels =
            if let channels { .create(count: channels, storagePolicy: storagePolicy) } else { .file(channelIds!) }
        var job = SendJob.Broadcast(app: app, channels: source, updates: updates, management: management)
        job.keepChannels = keepChannels
        return job
    }
}
