import FanoutAPNs
import FanoutAssembly
import FanoutClient
import FanoutEndpoint
import FanoutFiles
import FanoutReport
import FanoutResults
import FanoutTokens
import Foundation

/// `fanout send --broadcast` (docs/load-engine.md, "Broadcasts"): channels created (or read from
/// a file) on the channel-management endpoint, the run's updates sent by the load engine as
/// broadcasts to them (the channel id in place of a device token: `ChannelRounds`,
/// `APNsRequestFields`), then the channels it created deleted.
extension SendJob {
    /// What a broadcast run does besides sending.
    public struct Broadcast: Sendable, Hashable {
        /// Where the channels come from.
        public enum Channels: Sendable, Hashable {
            /// `count` channels created with this message storage policy (0 or 1).
            case create(count: Int, storagePolicy: Int)
            /// Channel ids read from a file, one base64 id a line (created by someone else:
            /// never deleted).
            case file(String)
        }

        /// The bundle id whose channels these are (`/4/broadcasts/apps/<bundle id>`).
        public var app: String
        public var channels: Channels
        /// Updates sent to each channel.
        public var updates: Int
        /// Leave the created channels in place at the end.
        public var keepChannels = false
        /// The channel-management endpoint (Apple's own hosts, or the sink's listener).
        public var management: Endpoint

        /// APNs keeps at most this many channels per app and environment (docs/apns.md).
        public static let channelLimit = 10_000

        public init(app: String, channels: Channels, updates: Int, management: Endpoint) {
            self.app = app
            self.channels = channels
            self.updates = updates
            self.management = management
        }
    }

    /// One broadcast run into `directory`: the channels, the updates, the clean-up.
    func broadcastOnce(
        _ broadcast: Broadcast,
        _ configuration: LoadConfiguration,
        into directory: String,
        signals: StopSignals,
        live: LiveReport? = nil
    ) throws -> RunStatus {
        let summary = try broadcastRun(
            broadcast,
            configuration,
            started: { started in
                live?.follow(started)
                signals.onStop { started.interrupt(by: $0) }
            },
            showsProgress: true,
            live: live
        )
        let status = try summary.finish(into: directory, reporter: reporter)
        try live?.finish(folder: directory)
        return status
    }

    /// One broadcast run, blocking: the channels created (or read), the updates sent with
    /// `configuration` (its load model paces them: `--rate` or as fast as allowed), the channels
    /// created deleted unless kept; the summary holds the `broadcast` section. `started` gets
    /// the engine (to cancel it) before it runs; `showsProgress` puts the progress line on a
    /// terminal; `live` (`--serve`) follows the updates' seconds.
    func broadcastRun(
        _ broadcast: Broadcast,
        _ configuration: LoadConfiguration,
        started: (LoadEngine) -> Void = { _ in },
        showsProgress: Bool = false,
        live: LiveReport? = nil
    ) throws -> RunSummary {
        var management = ChannelManagement(connection: configuration, app: broadcast.app)
        management.connection.endpoint.host = broadcast.management.host
        management.connection.endpoint.port = broadcast.management.port
        management.connection.endpoint.authority = nil
        var section = BroadcastSummary()
        let ids: [String]
        switch broadcast.channels {
        case .file(let path):
            ids = try Self.channelIDs(inFile: path)
            section.channels.given = ids.count
        case .create(let count, let policy):
            ids = try Self.create(count, policy: policy, with: management, at: broadcast.management)
            section.channels.created = ids.count
        }
        var job = self
        job.tokens = TokenSet(
            .channels(
                ChannelRounds(
                    channels: ids,
                    rounds: broadcast.updates,
                    firstTimestamp: Int(Date().timeIntervalSince1970)
                )
            ),
            reader: tokens.reader
        )
        let display = showsProgress ? reporter.progress(total: job.tokens.expectedCount(planned: nil)) : nil
        let progress = live.map { $0.progress(also: display) } ?? display
        var summary: RunSummary
        do {
            summary = try job.run(configuration, started: started, progress: progress)
        } catch {
            if case .create = broadcast.channels, !broadcast.keepChannels {
                _ = management.perform(ids.map { .delete(channel: $0) })
            }
            throw error
        }
        let snapshot = summary.report.snapshot
        section.broadcasts = snapshot.sent
        section.accepted = snapshot.accepted
        section.rejected = Dictionary(uniqueKeysWithValues: snapshot.rejected.map { ($0.key.rawValue, $0.value) })
        if case .create = broadcast.channels {
            if broadcast.keepChannels {
                section.channels.kept = ids.count
            } else {
                let outcome = management.perform(ids.map { .delete(channel: $0) })
                let deleted = outcome.answers.filter(\.succeeded).count
                section.channels.deleted = deleted
                section.channels.kept = ids.count - deleted
                if deleted < ids.count {
                    let reasons = Set(
                        outcome.answers.filter { !$0.succeeded }.map { $0.reason ?? "status \($0.status)" }
                    )
                    reporter.report(
                        .channelsKept(
                            ChannelsKept(
                                kept: ids.count - deleted,
                                created: ids.count,
                                management: "\(broadcast.management)",
                                reasons: reasons.sorted(),
                                failure: outcome.failure.map { "\($0)" }
                            )
                        )
                    )
                }
            }
        }
        summary.broadcast = section
        return summary
    }

    /// The ids of a `--channel-ids` file (`ChannelRounds.ids(in:source:)`).
    static func channelIDs(inFile path: String) throws(JobError) -> [String] {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw JobError.cannotRead(.optionValue("--channel-ids", path), error.reason)
        }
        do {
            return try ChannelRounds.ids(in: text, source: path)
        } catch {
            throw JobError.read("--channel-ids", error)
        }
    }

    /// Creates `count` channels; any refusal ends the job (the ones created are deleted first).
    static func create(
        _ count: Int,
        policy: Int,
        with management: ChannelManagement,
        at endpoint: Endpoint
    ) throws(JobError) -> [String] {
        let outcome = management.perform(Array(repeating: .create(storagePolicy: policy), count: count))
        let ids = outcome.answers.compactMap { $0.succeeded ? $0.channel : nil }
        guard ids.count == count else {
            let refused = outcome.answers.filter { !$0.succeeded || $0.channel == nil }
            let reasons = Set(refused.map { $0.reason ?? ($0.status == 0 ? "no answer" : "status \($0.status)") })
            _ = management.perform(ids.map { .delete(channel: $0) })
            throw JobError.outcome(
                .part("the broadcast channels at \(endpoint)"),
                "they cannot be created: \(refused.count) of \(count) creations failed "
                    + "(\(reasons.sorted().joined(separator: ", "))\(outcome.failure.map { "; \($0)" } ?? ""))"
                    + (ids.isEmpty ? "" : "; the \(ids.count) created were deleted")
            )
        }
        return ids
    }
}
