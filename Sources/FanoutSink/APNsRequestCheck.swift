import FanoutAPNs
import FanoutHTTP2
import FanoutPayload
import NIOCore

/// Checks one request against APNs' rules (docs/apns.md, "Request"), in this order; the first
/// failure is the answer:
///
/// 1. `:method` is POST, else 405 MethodNotAllowed.
/// 2. `:path` is `/3/device/<token>`, else 404 BadPath; an empty token is 400
///    MissingDeviceToken; one that is not even-length hex within the configured lengths is 400
///    BadDeviceToken.
/// 3. No `apns-*` or `authorization` field appears twice, else 400 DuplicateHeaders.
/// 4. Authentication: a connection with a verified client certificate is authenticated by it
///    (the `authorization` field is ignored; a certificate naming no bundle is 403
///    BadCertificate); otherwise token auth when configured (see `TokenAuthentication`);
///    with certificate auth alone, a connection without a certificate is 403
///    MissingProviderToken.
/// 5. `apns-push-type` is one of APNs' types (absent means alert), else 400 InvalidPushType.
/// 6. `apns-topic` is present (400 MissingTopic; on a certificate connection it defaults to
///    the certificate's bundle when it names one), printable without spaces (400 BadTopic),
///    has the push type's suffix (400 DeviceTokenNotForTopic), and its bundle (or the whole
///    topic) is allowed: one of the certificate's on a certificate connection, else one of the
///    configured bundles when a list is configured (400 TopicDisallowed).
/// 7. `apns-priority` is 10, 5 or 1 (400 BadPriority); background pushes must use 5.
/// 8. `apns-id`, when present, is a canonical UUID, else 400 BadMessageId.
/// 9. `apns-expiration`, when present, is decimal seconds, else 400 BadExpirationDate.
/// 10. `apns-collapse-id` has at most 64 bytes, else 400 BadCollapseId.
/// 11. The payload is not empty (400 PayloadEmpty), within the push type's limit (4096 bytes,
///     5120 for voip; 413 PayloadTooLarge), and one JSON object (400 BadPayload, Fanout's choice);
///     for `liveactivity`, a Live Activity payload (`LiveActivityPayload`: `aps.event`,
///     `timestamp`, `content-state` where the event needs it; 400 BadPayload, Fanout's choice).
///
/// Works on the decoded header list in place; what the response needs (the apns-id to echo)
/// and the digest needs (the token) is copied into reused storage.
struct APNsRequestCheck {
    /// The request's fields, as far as the rules need them.
    struct Fields {
        var method: Slice = .none
        var path: Slice = .none
        var pushType: Slice = .none
        var topic: Slice = .none
        var priority: Slice = .none
        var apnsID: Slice = .none
        var expiration: Slice = .none
        var collapseID: Slice = .none
        var authorization: Slice = .none
        var duplicate = false

        /// Keeps `value` when `name` is a field the rules need; a second one is a duplicate.
        @inline(__always)
        mutating func take(_ name: UnsafeRawBufferPointer, _ value: Slice) {
            let again: Bool
            switch name.count {
            case 5 where sameBytes(name, ":path"): again = Self.replace(&path, with: value)
            case 7 where sameBytes(name, ":method"): again = Self.replace(&method, with: value)
            case Header.apnsID.utf8CodeUnitCount where sameBytes(name, Header.apnsID):
                again = Self.replace(&apnsID, with: value)
            case Header.topic.utf8CodeUnitCount where sameBytes(name, Header.topic):
                again = Self.replace(&topic, with: value)
            case Header.priority.utf8CodeUnitCount where sameBytes(name, Header.priority):
                again = Self.replace(&priority, with: value)
            case Header.authorization.utf8CodeUnitCount where sameBytes(name, Header.authorization):
                again = Self.replace(&authorization, with: value)
            case Header.pushType.utf8CodeUnitCount where sameBytes(name, Header.pushType):
                again = Self.replace(&pushType, with: value)
            case Header.expiration.utf8CodeUnitCount where sameBytes(name, Header.expiration):
                again = Self.replace(&expiration, with: value)
            case Header.collapseID.utf8CodeUnitCount where sameBytes(name, Header.collapseID):
                again = Self.replace(&collapseID, with: value)
            default: return
            }
            if again { duplicate = true }
        }

        /// Sets `slot` to `value`; true when it was set already.
        @inline(__always)
        private static func replace(_ slot: inout Slice, with value: Slice) -> Bool {
            defer { slot = value }
            return slot.isPresent
        }
    }

    /// Where a value lies in the header list's bytes.
    struct Slice {
        var start: Int
        var count: Int
        static let none = Slice(start: -1, count: 0)
        var isPresent: Bool { start >= 0 }
    }

    /// Collects the fields the rules need in one pass over the list.
    static func fields(of headers: HTTP2HeaderList) -> Fields {
        // The closure captures one variable and calls a method on it: a nested function
        // capturing two (the fields and a duplicate flag) made the compiler box them, one heap
        // allocation a request (swift_allocObject in the cost workload's profile).
        var fields = Fields()
        headers.forEachOffset { name, offset, length in
            fields.take(name, Slice(start: offset, count: length))
        }
        return fields
    }

    /// Whether `bytes` are `text`'s, compared in a plain loop: `elementsEqual` here was left
    /// generic and out of line, 4.8% of the sink's time under h2load (perf, 2026-11-24).
    @inline(__always)
    static func sameBytes(_ bytes: UnsafeRawBufferPointer, _ text: StaticString) -> Bool {
        guard bytes.count == text.utf8CodeUnitCount else { return false }
        let expected = text.utf8Start
        for index in 0..<bytes.count where bytes[index] != expected[index] { return false }
        return true
    }

    private typealias Header = APNsRequest.Header

    /// Rules 1–3: method, path and token, duplicates. Returns the token's place in the list's
    /// bytes on success.
    static func checkRequestLine(
        _ fields: Fields,
        in bytes: UnsafeRawBufferPointer,
        tokenFormat: DeviceTokenFormat
    ) -> Result<Slice, Rejection> {
        guard fields.method.isPresent, sameBytes(view(fields.method, bytes), "POST") else {
            return .failure(.init(.methodNotAllowed))
        }
        let path = view(fields.path, bytes)
        let prefix = APNsRequest.devicePathPrefix.utf8CodeUnitCount
        guard path.count >= prefix,
            sameBytes(UnsafeRawBufferPointer(rebasing: path[..<prefix]), APNsRequest.devicePathPrefix)
        else {
            return .failure(.init(.badPath))
        }
        let token = Slice(start: fields.path.start + prefix, count: path.count - prefix)
        guard token.count > 0 else { return .failure(.init(.missingDeviceToken)) }
        guard tokenFormat.problem(in: view(token, bytes)) == nil else { return .failure(.init(.badDeviceToken)) }
        guard !fields.duplicate else { return .failure(.init(.duplicateHeaders)) }
        return .success(token)
    }

    /// Rules 5–11: the apns-* fields and the payload (its syntax through `checkedPayload`, the
    /// connection's last object: the same bytes again are not read again).
    static func checkNotification(
        _ fields: Fields,
        in bytes: UnsafeRawBufferPointer,
        body: UnsafeRawBufferPointer,
        bodyLength: Int,
        allowedBundles: Set<[UInt8]>?,
        defaultTopic: UnsafeRawBufferPointer? = nil,
        checkedPayload: CheckedPayload
    ) -> Rejection? {
        var pushType = APNsPushType.alert
        if fields.pushType.isPresent {
            guard let type = APNsPushType(bytes: view(fields.pushType, bytes)) else { return .init(.invalidPushType) }
            pushType = type
        }
        guard let topic = fields.topic.isPresent ? view(fields.topic, bytes) : defaultTopic else {
            return .init(.missingTopic)
        }
        guard !topic.isEmpty, topic.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return .init(.badTopic) }
        let suffixText = pushType.topicSuffix
        let suffix = UnsafeRawBufferPointer(start: suffixText.utf8Start, count: suffixText.utf8CodeUnitCount)
        guard topic.count > suffix.count, topic.suffix(suffix.count).elementsEqual(suffix) else {
            return .init(.deviceTokenNotForTopic)
        }
        if let allowedBundles {
            let bundle = topic.prefix(topic.count - suffix.count)
            guard allowedBundles.contains(where: { $0.elementsEqual(bundle) || $0.elementsEqual(topic) }) else {
                return .init(.topicDisallowed)
            }
        }
        if fields.priority.isPresent {
            let priority = view(fields.priority, bytes)
            guard priority.count <= 2, let value = HTTP2HeaderList.decimal(priority),
                value == 10 || value == 5 || value == 1
            else {
                return .init(.badPriority)
            }
            if pushType == .background && value != 5 { return .init(.badPriority) }
        } else if pushType == .background {
            return .init(.badPriority)  // the default priority, 10, is wrong for background pushes
        }
        if fields.apnsID.isPresent && !isCanonicalUUID(view(fields.apnsID, bytes)) { return .init(.badMessageId) }
        if fields.expiration.isPresent && HTTP2HeaderList.decimal(view(fields.expiration, bytes)) == nil {
            return .init(.badExpirationDate)
        }
        if fields.collapseID.count > 64 { return .init(.badCollapseId) }
        guard bodyLength > 0 else { return .init(.payloadEmpty) }
        guard bodyLength <= pushType.payloadSizeLimit else { return .init(.payloadTooLarge) }
        if !checkedPayload.isJSONObject(body) { return .init(.badPayload) }
        if pushType == .liveactivity && LiveActivityPayload.problem(in: body) != nil { return .init(.badPayload) }
        return nil
    }

    @inline(__always)
    static func view(_ slice: Slice, _ bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        guard slice.isPresent else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(rebasing: bytes[slice.start..<(slice.start + slice.count)])
    }

    /// `8-4-4-4-12` hex digits, either case.
    static func isCanonicalUUID(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count == 36 else { return false }
        for (index, byte) in bytes.enumerated() {
            if index == 8 || index == 13 || index == 18 || index == 23 {
                guard byte == UInt8(ascii: "-") else { return false }
            } else {
                guard DeviceTokenFormat.isHexDigit(byte) else { return false }
            }
        }
        return true
    }
}

/// Why the sink refuses a request.
struct Rejection: Error, Hashable {
    var reason: APNsReason

    init(_ reason: APNsReason) {
        self.reason = reason
    }
}

extension APNsPushType {
    /// The push type named by `bytes`, exactly (APNs' values are lowercase). Compared with
    /// each name in turn, most common first; a table of the cases would be a lazily made global
    /// (a `swift_once` a request), and `init(rawValue:)` a `String`. `APNsPushTypeTests` checks
    /// that every case is found by its raw value.
    init?(bytes: UnsafeRawBufferPointer) {
        func named(_ name: StaticString) -> Bool { APNsRequestCheck.sameBytes(bytes, name) }
        if named("alert") {
            self = .alert
        } else if named("background") {
            self = .background
        } else if named("voip") {
            self = .voip
        } else if named("liveactivity") {
            self = .liveactivity
        } else if named("location") {
            self = .location
        } else if named("complication") {
            self = .complication
        } else if named("fileprovider") {
            self = .fileprovider
        } else if named("mdm") {
            self = .mdm
        } else if named("pushtotalk") {
            self = .pushtotalk
        } else if named("widgets") {
            self = .widgets
        } else if named("controls") {
            self = .controls
        } else {
            return nil
        }
    }
}
