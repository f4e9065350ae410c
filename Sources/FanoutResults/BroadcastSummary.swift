import FanoutAPNs
import FanoutNotation
import Foundation

/// `summary.json`'s `broadcast`: a broadcast run's channels and broadcasts (`fanout send
/// --broadcast`), or what a sink's broadcasts reached (`fanout sink --output`; docs/sink.md,
/// "Broadcast channels"). Absent when there were no broadcasts, and in older folders: an added,
/// optional field. Times are milliseconds.
///
/// ```
///   "broadcast": {"channels": {"created": 100, "deleted": 100, "kept": 0, ...},
///                 "broadcasts": 1000, "accepted": 1000, "rejected": {},
///                 "devices": {"subscribers": 10000000, "delivered": 10000000, ...},   (the sink's)
///                 "delivery_ms": {"p50": 0, "p90": 0, "p99": 0, "last": 0},            (the sink's)
///                 "storage_ms": {"p50": 0, "p90": 0, "p99": 0, "last": 0},             (the sink's)
///                 "last_subscriber_ms": {"p50": 0, "p99": 0, "max": 0}}                (the sink's)
/// ```
public struct BroadcastSummary: Codable, Sendable, Equatable {
    public var channels: Channels
    /// Broadcast requests: sent (the sender) or answered 200 (the sink); accepted and rejected
    /// by reason as the rest of the summary counts notifications.
    public var broadcasts = 0
    public var accepted = 0
    public var rejected: [String: Int] = [:]
    /// The device deliveries the accepted broadcasts stand for: the sink counts them; a
    /// sender knows them only with its own sink (`fanout run`).
    public var devices: Devices?
    /// From a broadcast's acceptance to each subscriber's delivery, over every device delivered
    /// at once (the sink's; how it is drawn: docs/sink.md, "Broadcast channels").
    public var deliveryMs: Times?
    /// From a broadcast's acceptance to each delivery from storage, when an offline subscriber
    /// came back (the sink's, with a device fleet whose devices return); nil without any.
    public var storageMs: Times?
    /// Each broadcast's time to its last delivered subscriber, over the broadcasts.
    public var lastSubscriberMs: LastSubscriber?
    /// The file with a line per broadcast (the sink's folder), and how many broadcasts it
    /// leaves out (it keeps the first `BroadcastSummary.fileLimit`).
    public var broadcastsFile: String?
    public var broadcastsLeftOut: Int?

    /// The most broadcasts the sink's per-broadcast file holds: bounded memory whatever the run.
    public static let fileLimit = 100_000

    public init(channels: Channels = Channels()) {
        self.channels = channels
    }

    public enum CodingKeys: String, CodingKey {
        case channels, broadcasts, accepted, rejected, devices
        case deliveryMs = "delivery_ms"
        case storageMs = "storage_ms"
        case lastSubscriberMs = "last_subscriber_ms"
        case broadcastsFile = "broadcasts_file"
        case broadcastsLeftOut = "broadcasts_left_out"
    }

    /// Channels created, deleted at the end, kept (`--keep-channels`, or a deletion that
    /// failed), taken from a file (not created nor deleted by the run), and, in a sink's
    /// folder, still open and refused creations.
    public struct Channels: Codable, Sendable, Equatable {
        public var created = 0
        public var deleted = 0
        public var kept = 0
        public var given = 0
        public var open: Int?
        public var refused: Int?

        public init(
            created: Int = 0,
            deleted: Int = 0,
            kept: Int = 0,
            given: Int = 0,
            open: Int? = nil,
            refused: Int? = nil
        ) {
            self.created = created
            self.deleted = deleted
            self.kept = kept
            self.given = given
            self.open = open
            self.refused = refused
        }
    }

    /// A broadcast's subscribers: delivered at once, stored for an offline device (storage
    /// policy 1), missed by an offline one (policy 0), unreachable (app disabled or gone).
    public typealias Devices = BroadcastReach

    /// Delivery-time percentiles and the last.
    public struct Times: Codable, Sendable, Equatable {
        public var p50: Double
        public var p90: Double
        public var p99: Double
        public var last: Double

        public init(p50: Double, p90: Double, p99: Double, last: Double) {
            self.p50 = p50
            self.p90 = p90
            self.p99 = p99
            self.last = last
        }

        /// The worst of each figure (nil without any).
        static func worst(_ all: [Times]) -> Times? {
            guard !all.isEmpty else { return nil }
            func worst(_ values: [Double]) -> Double { values.max() ?? 0 }
            return Times(
                p50: worst(all.map(\.p50)),
                p90: worst(all.map(\.p90)),
                p99: worst(all.map(\.p99)),
                last: worst(all.map(\.last))
            )
        }
    }

    /// The time to a broadcast's last subscriber, over the broadcasts.
    public struct LastSubscriber: Codable, Sendable, Equatable {
        public var p50: Double
        public var p99: Double
        public var max: Double

        public init(p50: Double, p99: Double, max: Double) {
            self.p50 = p50
            self.p99 = p99
            self.max = max
        }
    }

    /// Shards' or sinks' sections as one: counts add up; the times are the worst of each
    /// (each input's percentiles are kept, not its draws, so the merge cannot recompute them).
    /// Every field is constructed here (`init(merging…)`), so a new one says how it merges.
    public static func merged(_ parts: [BroadcastSummary?]) -> BroadcastSummary? {
        let parts = parts.compactMap { $0 }
        guard !parts.isEmpty else { return nil }
        func total(_ values: [Int?]) -> Int? {
            values.allSatisfy { $0 == nil } ? nil : values.reduce(0) { $0 + ($1 ?? 0) }
        }
        func worst(_ values: [Double]) -> Double { values.max() ?? 0 }
        let channels = parts.map(\.channels)
        let devices = parts.compactMap(\.devices)
        let times = parts.compactMap(\.deliveryMs)
        let storage = parts.compactMap(\.storageMs)
        let lasts = parts.compactMap(\.lastSubscriberMs)
        return BroadcastSummary(
            channels: Channels(
                created: channels.map(\.created).reduce(0, +),
                deleted: channels.map(\.deleted).reduce(0, +),
                kept: channels.map(\.kept).reduce(0, +),
                // Shards of one run read the same file.
                given: channels.map(\.given).max() ?? 0,
                open: total(channels.map(\.open)),
                refused: total(channels.map(\.refused))
            ),
            broadcasts: parts.map(\.broadcasts).reduce(0, +),
            accepted: parts.map(\.accepted).reduce(0, +),
            rejected: parts.map(\.rejected).reduce(into: [:]) { total, part in total.merge(part, uniquingKeysWith: +) },
            devices: devices.isEmpty
                ? nil
                : devices.reduce(Devices(), +),
            deliveryMs: Times.worst(times),
            storageMs: Times.worst(storage),
            lastSubscriberMs: lasts.isEmpty
                ? nil
                : LastSubscriber(
                    p50: worst(lasts.map(\.p50)),
                    p99: worst(lasts.map(\.p99)),
                    max: worst(lasts.map(\.max))
                ),
            // Each input's file stays in its own folder.
            broadcastsFile: nil,
            broadcastsLeftOut: total(parts.map(\.broadcastsLeftOut))
        )
    }

    /// Every field given (the merge's constructor).
    public init(
        channels: Channels,
        broadcasts: Int,
        accepted: Int,
        rejected: [String: Int],
        devices: Devices?,
        deliveryMs: Times?,
        storageMs: Times?,
        lastSubscriberMs: LastSubscriber?,
        broadcastsFile: String?,
        broadcastsLeftOut: Int?
    ) {
        self.channels = channels
        self.broadcasts = broadcasts
        self.accepted = accepted
        self.rejected = rejected
        self.devices = devices
        self.deliveryMs = deliveryMs
        self.storageMs = storageMs
        self.lastSubscriberMs = lastSubscriberMs
        self.broadcastsFile = broadcastsFile
        self.broadcastsLeftOut = broadcastsLeftOut
    }
}

extension BroadcastSummary {
    /// What a person reads of it at the end of a run.
    public var lines: [String] {
        var channelText = "\(channels.created.grouped) created, \(channels.deleted.grouped) deleted, "
        channelText += "\(channels.kept.grouped) kept"
        if channels.given > 0 { channelText += ", \(channels.given.grouped) from a file" }
        if let open = channels.open { channelText += ", \(open.grouped) open" }
        if let refused = channels.refused, refused > 0 { channelText += ", \(refused.grouped) refused" }
        let rejectedCount = rejected.values.reduce(0, +)
        var broadcastText =
            "broadcasts: \(broadcasts.grouped) sent, \(accepted.grouped) accepted, \(rejectedCount.grouped) rejected"
        if rejectedCount > 0 {
            broadcastText +=
                " ("
                + rejected.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value.grouped)" }.joined(separator: ", ")
                + ")"
        }
        var lines = ["broadcast channels: " + channelText, broadcastText]
        if let devices {
            lines.append(
                "devices reached: \(devices.delivered.grouped) delivered of \(devices.subscribers.grouped) subscribers, "
                    + "\(devices.stored.grouped) stored for offline devices, \(devices.missed.grouped) missed, "
                    + "\(devices.unreachable.grouped) unreachable"
            )
            if devices.stored > 0 {
                lines.append(
                    "stored updates: \(devices.fromStorage.grouped) delivered from storage, "
                        + "\(devices.discarded.grouped) replaced or deleted, \(devices.expired.grouped) expired, "
                        + "\(devices.stillStored.grouped) still stored"
                )
            }
        } else {
            lines.append("devices reached: APNs does not tell a sender; a sink's folder counts them")
        }
        func ms(_ value: Double) -> String { String(format: value < 10 ? "%.2f" : "%.1f", value) }
        for (name, times) in [("broadcast delivery ms", deliveryMs), ("delivery from storage ms", storageMs)] {
            guard let times else { continue }
            lines.append(
                "\(name): p50 \(ms(times.p50))  p90 \(ms(times.p90))  p99 \(ms(times.p99))  last \(ms(times.last))"
            )
        }
        if let lastSubscriberMs {
            lines.append(
                "time to the last subscriber ms: p50 \(ms(lastSubscriberMs.p50))  p99 \(ms(lastSubscriberMs.p99))  "
                    + "max \(ms(lastSubscriberMs.max))"
            )
        }
        return lines
    }
}

/// One line of a sink folder's `broadcasts.csv`: a broadcast, when it was accepted (ms since the
/// first), its channel, its subscribers' split with its stored update's fate, and its delivery
/// times (ms from its acceptance: p50, p99 of its subscribers delivered at once, and of those
/// delivered from storage, and the last of them all).
///
/// ```
///   broadcast,accepted_ms,channel,subscribers,delivered,stored,missed,unreachable,from_storage,discarded,expired,still_stored,p50_ms,p99_ms,storage_p50_ms,storage_p99_ms,last_ms
///   1,0.000,q7nE0wM1pS2o3Lr9Yx2bUg==,10000,9000,1000,0,0,600,400,0,0,0.000,0.000,2500.000,4950.000,4999.600
/// ```
/// Files written before stored updates were timed have 11 columns (no fate, no storage times).
public struct BroadcastRow: Sendable, Equatable {
    public var broadcast: Int
    public var acceptedMs: Double
    public var channel: String
    public var devices: BroadcastSummary.Devices
    public var p50Ms: Double
    public var p99Ms: Double
    public var storageP50Ms: Double
    public var storageP99Ms: Double
    public var lastMs: Double

    public init(
        broadcast: Int,
        acceptedMs: Double,
        channel: String,
        devices: BroadcastSummary.Devices,
        p50Ms: Double,
        p99Ms: Double,
        storageP50Ms: Double = 0,
        storageP99Ms: Double = 0,
        lastMs: Double
    ) {
        self.broadcast = broadcast
        self.acceptedMs = acceptedMs
        self.channel = channel
        self.devices = devices
        self.p50Ms = p50Ms
        self.p99Ms = p99Ms
        self.storageP50Ms = storageP50Ms
        self.storageP99Ms = storageP99Ms
        self.lastMs = lastMs
    }

    /// The file's name in the sink's folder.
    public static let fileName = "broadcasts.csv"

    public static let header =
        "broadcast,accepted_ms,channel,subscribers,delivered,stored,missed,unreachable,"
        + "from_storage,discarded,expired,still_stored,p50_ms,p99_ms,storage_p50_ms,storage_p99_ms,last_ms"

    public var line: String {
        func ms(_ value: Double) -> String { String(format: "%.3f", value) }
        let counts = [
            devices.subscribers, devices.delivered, devices.stored, devices.missed, devices.unreachable,
            devices.fromStorage, devices.discarded, devices.expired, devices.stillStored,
        ]
        let times = [p50Ms, p99Ms, storageP50Ms, storageP99Ms, lastMs]
        return ([String(broadcast), ms(acceptedMs), channel] + counts.map(String.init) + times.map(ms))
            .joined(separator: ",")
    }

    /// A line of the file back (tests, tools), 17 columns or the older 11; `nil` when it is not one.
    public init?(line: String) {
        let parts = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        let counts = parts.count == 17 ? 9 : 5
        guard parts.count == 17 || parts.count == 11, let broadcast = Int(parts[0]),
            let accepted = Double(parts[1])
        else { return nil }
        let numbers = parts[3..<(3 + counts)].compactMap { Int($0) }
        let times = parts[(3 + counts)...].compactMap { Double($0) }
        guard numbers.count == counts, times.count == parts.count - 3 - counts else { return nil }
        var devices = BroadcastSummary.Devices(
            subscribers: numbers[0],
            delivered: numbers[1],
            stored: numbers[2],
            missed: numbers[3],
            unreachable: numbers[4]
        )
        if counts == 9 {
            (devices.fromStorage, devices.discarded, devices.expired) = (numbers[5], numbers[6], numbers[7])
            devices.stillStored = numbers[8]
        } else {
            devices.stillStored = devices.stored
        }
        self.init(
            broadcast: broadcast,
            acceptedMs: accepted,
            channel: parts[2],
            devices: devices,
            p50Ms: times[0],
            p99Ms: times[1],
            storageP50Ms: counts == 9 ? times[2] : 0,
            storageP99Ms: counts == 9 ? times[3] : 0,
            lastMs: times[times.count - 1]
        )
    }
}
