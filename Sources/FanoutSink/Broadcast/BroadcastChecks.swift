import FanoutAPNs
import FanoutHTTP2
import FanoutPayload
import Foundation

/// A request on one of APNs's broadcast paths (docs/apns.md, "Broadcast channels"), as the
/// `:path` and `:method` name it; the app's bundle id lies in the header bytes at `bundle`.
///
/// ```
///   POST   /1/apps/<bundle-id>/channels        create   → 201, apns-channel-id
///   GET    /1/apps/<bundle-id>/channels        read     → 200 {"message-storage-policy":1,"push-type":"LiveActivity"}
///   DELETE /1/apps/<bundle-id>/channels        delete   → 204
///   GET    /1/apps/<bundle-id>/all-channels    list     → 200 {"channels":["…","…"]}
///   POST   /4/broadcasts/apps/<bundle-id>      broadcast → 200
/// ```
struct BroadcastRoute {
    typealias Operation = BroadcastOperation

    /// The operation, or `nil` when the path is one of them but the method is not: 405.
    var operation: Operation?
    var bundle: APNsRequestCheck.Slice

    static let channelsPrefix: StaticString = "/1/apps/"
    static let broadcastPrefix: StaticString = "/4/broadcasts/apps/"

    /// The route of `path`, or `nil` when it is none of the paths above (the device path's
    /// rules answer it: 404 BadPath). An empty or slashed bundle id is no route either.
    init?(method: UnsafeRawBufferPointer, path: APNsRequestCheck.Slice, in bytes: UnsafeRawBufferPointer) {
        let text = APNsRequestCheck.view(path, bytes)
        func starts(_ prefix: StaticString) -> Bool {
            text.count > prefix.utf8CodeUnitCount
                && APNsRequestCheck.sameBytes(
                    UnsafeRawBufferPointer(rebasing: text[..<prefix.utf8CodeUnitCount]),
                    prefix
                )
        }
        func named(_ name: StaticString) -> Bool { APNsRequestCheck.sameBytes(method, name) }
        if starts(Self.broadcastPrefix) {
            let start = Self.broadcastPrefix.utf8CodeUnitCount
            bundle = .init(start: path.start + start, count: text.count - start)
            operation = named("POST") ? .broadcast : nil
        } else if starts(Self.channelsPrefix) {
            let start = Self.channelsPrefix.utf8CodeUnitCount
            let rest = UnsafeRawBufferPointer(rebasing: text[start...])
            guard let slash = rest.firstIndex(of: UInt8(ascii: "/")) else { return nil }
            bundle = .init(start: path.start + start, count: slash - rest.startIndex)
            let tail = UnsafeRawBufferPointer(rebasing: rest[slash...])
            if APNsRequestCheck.sameBytes(tail, "/channels") {
                operation = named("POST") ? .create : named("GET") ? .read : named("DELETE") ? .delete : nil
            } else if APNsRequestCheck.sameBytes(tail, "/all-channels") {
                operation = named("GET") ? .list : nil
            } else {
                return nil
            }
        } else {
            return nil
        }
        let app = APNsRequestCheck.view(bundle, bytes)
        guard !app.isEmpty, app.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "/") }) else { return nil }
    }
}

/// The fields of a channel or broadcast request beyond `APNsRequestCheck.Fields`: read in a
/// second pass over the header list, only for these paths, so the device path pays nothing.
struct BroadcastFields {
    var channelID: APNsRequestCheck.Slice = .none
    var requestID: APNsRequestCheck.Slice = .none
    var duplicate = false

    static let channelIDName: StaticString = "apns-channel-id"
    static let requestIDName: StaticString = "apns-request-id"

    init(_ headers: HTTP2HeaderList) {
        var fields = BroadcastFields()
        headers.forEachOffset { name, offset, length in
            let slice = APNsRequestCheck.Slice(start: offset, count: length)
            if APNsRequestCheck.sameBytes(name, Self.channelIDName) {
                if fields.channelID.isPresent { fields.duplicate = true }
                fields.channelID = slice
            } else if APNsRequestCheck.sameBytes(name, Self.requestIDName) {
                if fields.requestID.isPresent { fields.duplicate = true }
                fields.requestID = slice
            }
        }
        self = fields
    }

    private init() {}
}

/// The body of a create request: `{"message-storage-policy": 0 | 1, "push-type": "LiveActivity"}`.
struct ChannelConfiguration: Codable, Equatable {
    var messageStoragePolicy: Int?
    var pushType: String?

    enum CodingKeys: String, CodingKey {
        case messageStoragePolicy = "message-storage-policy"
        case pushType = "push-type"
    }
}

/// APNs's rules for channel and broadcast requests, in Apple's order (docs/apns.md, "Broadcast
/// channels"): the path and method (`BroadcastRoute`), duplicate fields, the provider's
/// authentication (`RequestChecks`), then the channel (Apple: "If authentication succeeds,
/// APNs then validates the channel ID"), then the rest of the fields and the body.
enum BroadcastChecks {
    /// The most a broadcast's payload may hold: 5120 bytes (Fanout's choice, as client
    /// libraries read Apple; a Live Activity sent to a token keeps 4096).
    static let payloadLimit = 5120

    /// `apns-request-id` is absent or a canonical UUID, else 400 BadMessageId (Fanout's choice).
    static func checkRequestID(_ fields: BroadcastFields, in bytes: UnsafeRawBufferPointer) -> APNsReason? {
        guard fields.requestID.isPresent else { return nil }
        return APNsRequestCheck.isCanonicalUUID(APNsRequestCheck.view(fields.requestID, bytes)) ? nil : .badMessageId
    }

    /// `apns-channel-id`: present (MissingChannelId), base64 of at most 64 characters
    /// (BadChannelId); the id when so (whether it is registered is the store's to say).
    static func channelID(
        _ fields: BroadcastFields,
        in bytes: UnsafeRawBufferPointer
    ) -> Result<ChannelID.Parsed, Rejection> {
        guard fields.channelID.isPresent else { return .failure(.init(.missingChannelId)) }
        let parsed = ChannelID.parse(APNsRequestCheck.view(fields.channelID, bytes))
        return parsed == .malformed ? .failure(.init(.badChannelId)) : .success(parsed)
    }

    /// A create request's body: JSON with `push-type` LiveActivity (MissingPushType when
    /// absent, InvalidPushType otherwise; compared without case, Fanout's choice) and
    /// `message-storage-policy` 0 or 1 (BadPayload when absent or another value, or when the
    /// body is not such an object: Fanout's choice, Apple names no reason).
    static func configuration(_ body: UnsafeRawBufferPointer) -> Result<Int, Rejection> {
        guard !body.isEmpty else { return .failure(.init(.payloadEmpty)) }
        guard let configuration = try? JSONDecoder().decode(ChannelConfiguration.self, from: Data(body)) else {
            return .failure(.init(.badPayload))
        }
        guard let pushType = configuration.pushType else { return .failure(.init(.missingPushType)) }
        guard pushType.lowercased() == "liveactivity" else { return .failure(.init(.invalidPushType)) }
        guard let policy = configuration.messageStoragePolicy, policy == 0 || policy == 1 else {
            return .failure(.init(.badPayload))
        }
        return .success(policy)
    }

    /// A broadcast's fields after its channel, in order: `apns-push-type` liveactivity
    /// (MissingPushType, InvalidPushType), `apns-priority` 10, 5 or 1 (BadPriority),
    /// `apns-request-id` (BadMessageId), `apns-expiration` decimal and 0 on a channel that
    /// stores nothing (BadExpirationDate), and the payload: not empty (PayloadEmpty), within
    /// `payloadLimit` (413 PayloadTooLarge), one JSON object that is a Live Activity payload
    /// (BadPayload, Fanout's choice).
    static func checkBroadcast(
        _ fields: APNsRequestCheck.Fields,
        _ broadcast: BroadcastFields,
        in bytes: UnsafeRawBufferPointer,
        storagePolicy: Int,
        body: UnsafeRawBufferPointer,
        bodyLength: Int
    ) -> APNsReason? {
        guard fields.pushType.isPresent else { return .missingPushType }
        guard APNsPushType(bytes: APNsRequestCheck.view(fields.pushType, bytes)) == .liveactivity else {
            return .invalidPushType
        }
        if fields.priority.isPresent {
            let priority = APNsRequestCheck.view(fields.priority, bytes)
            guard priority.count <= 2, let value = HTTP2HeaderList.decimal(priority),
                value == 10 || value == 5 || value == 1
            else { return .badPriority }
        }
        if let reason = checkRequestID(broadcast, in: bytes) { return reason }
        if fields.expiration.isPresent {
            guard let expiration = HTTP2HeaderList.decimal(APNsRequestCheck.view(fields.expiration, bytes)) else {
                return .badExpirationDate
            }
            if storagePolicy == 0 && expiration != 0 { return .badExpirationDate }
        }
        guard bodyLength > 0 else { return .payloadEmpty }
        guard bodyLength <= payloadLimit else { return .payloadTooLarge }
        if PayloadSyntax.problem(in: body) != nil || LiveActivityPayload.problem(in: body) != nil {
            return .badPayload
        }
        return nil
    }
}
