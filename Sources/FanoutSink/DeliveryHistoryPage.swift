import FanoutDevices
import FanoutNotation
import Foundation
import NIOCore

/// `GET /deliveries/ID` on the sink's admin endpoint: the history of a recent notification by
/// its apns-id or its apns-unique-id (`AnswerWriter.uniqueID(of:into:)`) — the states Apple's Console would show, each with its time:
///
///     {"apns_id":"…","events":[{"at":"2026-11-26T21:00:00.000Z","state":"Received by APNs"},
///      {"at":"…","state":"Stored – Device Offline"},{"at":"…","state":"Delivered to Device (From Storage)"}]}
///
/// Only the recent ones are kept: `DeviceFleet.historyCapacity` per shard, the newest
/// overwriting the oldest (65,536 over the sink's 16 shards, 80 bytes each).
enum DeliveryHistoryPage {
    static let prefix = "/deliveries/"

    struct Document: Codable {
        struct Event: Codable {
            var state: String
            var at: String
        }

        var apnsID: String
        var events: [Event]

        enum CodingKeys: String, CodingKey {
            case apnsID = "apns_id"
            case events
        }
    }

    /// The answer to `path` (which starts with `prefix`): 200 and the history, else 404 saying why.
    static func answer(
        _ path: String,
        fleet: DeviceFleetShards?,
        now: Date = Date(),
        uptime: UInt64 = NIODeadline.now().uptimeNanoseconds
    ) -> (found: Bool, body: String) {
        let text = String(path.dropFirst(prefix.count))
        guard let fleet else {
            return (false, "not found: the sink has no device fleet (fanout sink --device-offline and the like)\n")
        }
        let id = Array(text.utf8)
        guard id.count == DeliveryHistory.idLength, id.withUnsafeBytes({ APNsRequestCheck.isCanonicalUUID($0) }) else {
            return (false, "not found: \(text) is not an apns-id (8-4-4-4-12 hex digits)\n")
        }
        var apnsID = id
        var events = id.withUnsafeBytes { fleet.events(of: $0) }
        if events == nil {
            // An apns-unique-id: the apns-id it was made from.
            id.withUnsafeBytes { unique in
                apnsID.withUnsafeMutableBytes { AnswerWriter.uniqueID(of: unique, into: $0) }
            }
            events = apnsID.withUnsafeBytes { fleet.events(of: $0) }
        }
        guard let events else {
            return (
                false,
                "not found: \(text) is not among the last \(DeviceFleet.historyCapacity * DeviceFleetShards.shardCount) notifications the sink accepted\n"
            )
        }
        func wall(_ time: UInt64) -> String {
            let seconds = time >= uptime ? Double(time - uptime) / 1e9 : -Double(uptime - time) / 1e9
            return TimeNotation.format(now.addingTimeInterval(seconds))
        }
        let document = Document(
            apnsID: String(decoding: apnsID, as: UTF8.self).lowercased(),
            events: events.map { .init(state: $0.kind.name, at: wall($0.time)) }
        )
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let body = (try? encoder.encode(document)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        return (true, body + "\n")
    }
}
