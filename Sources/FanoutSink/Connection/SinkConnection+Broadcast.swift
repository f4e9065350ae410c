import FanoutAPNs
import FanoutDevices
import FanoutHTTP2
import NIOCore

/// Channel management and broadcasts on the sink's listener (docs/sink.md, "Broadcast
/// channels"): a request whose `:path` is not the device path (checked first, so a notification
/// pays one prefix comparison) and is one of `BroadcastRoute`'s is answered here, at once
/// (the scenario's latency, errors and faults are for notifications), with
/// `apns-request-id` echoed or made.
extension SinkConnection {
    /// What the sink answers a channel or broadcast request.
    struct BroadcastAnswer {
        var status: Int
        var rejection: APNsReason?
        var channelID: ChannelID?
        /// A JSON body (a read's or a list's).
        var body: String?

        static func rejected(_ reason: APNsReason) -> BroadcastAnswer {
            BroadcastAnswer(status: reason.status, rejection: reason)
        }
    }

    /// Whether the request's `:path` begins `/3/device/`: the one comparison a notification
    /// pays for broadcasts.
    @inline(__always)
    static func hasDevicePath(_ request: HTTP2Message, _ fields: APNsRequestCheck.Fields) -> Bool {
        let prefix = APNsRequest.devicePathPrefix.utf8CodeUnitCount
        guard fields.path.count >= prefix else { return false }
        return request.headers.withUnsafeBytes { bytes in
            APNsRequestCheck.sameBytes(
                UnsafeRawBufferPointer(rebasing: bytes[fields.path.start..<(fields.path.start + prefix)]),
                APNsRequest.devicePathPrefix
            )
        }
    }

    /// The request's route when its path is a channel or broadcast path; `nil` for any other
    /// (the device rules answer those: 404 BadPath).
    @inline(never)
    static func broadcastRoute(_ request: HTTP2Message, _ fields: APNsRequestCheck.Fields) -> BroadcastRoute? {
        request.headers.withUnsafeBytes { bytes in
            BroadcastRoute(method: APNsRequestCheck.view(fields.method, bytes), path: fields.path, in: bytes)
        }
    }

    @inline(never)
    mutating func answerBroadcast(
        _ request: HTTP2Message,
        _ fields: APNsRequestCheck.Fields,
        _ route: BroadcastRoute,
        _ connection: inout HTTP2Writer
    ) {
        let now = clock.uptime()
        let extra = BroadcastFields(request.headers)
        let answer = request.headers.withUnsafeBytes { bytes in
            writer.takeID(APNsRequestCheck.view(extra.requestID, bytes))
            let answer = decideBroadcast(request, fields, extra, route, in: bytes)
            observer?.broadcastDecided(route, fields, extra, answer, body: request.body, in: bytes, now: now)
            return answer
        }
        var headers: [(name: String, value: String)] = [
            (":status", String(answer.status)),
            (
                BroadcastFields.requestIDName.description,
                String(decoding: writer.apnsID, as: UTF8.self)
            ),
        ]
        if let channelID = answer.channelID {
            headers.append((BroadcastFields.channelIDName.description, channelID.text))
        }
        var body: ByteBuffer?
        if let rejection = answer.rejection {
            counts.reject(rejection)
            body = SinkErrorBody.bodies[rejection]
        } else if let text = answer.body {
            body = ByteBuffer(string: text)
        }
        if body != nil { headers.append(("content-type", "application/json")) }
        let unacknowledged = connection.unacknowledgedSettings
        connection.respond(stream: request.stream, HTTP2Fields(headers), body: body)
        if let action = lifecycle.answered(accepted: answer.rejection == nil, unacknowledged: unacknowledged, now: now)
        {
            perform(action, now: now, &connection)
        }
        if let action = lifecycle.requestHandled(total: counts.requests + handled, rejection: answer.rejection) {
            perform(action, now: now, &connection)
        }
        if counts.requests >= SinkCounts.flushInterval { flushCounts(now: now) }
        turnEnded(now: now, &connection)
    }

    /// `BroadcastChecks`'s rules in Apple's order, then the store's answer.
    private mutating func decideBroadcast(
        _ request: HTTP2Message,
        _ fields: APNsRequestCheck.Fields,
        _ extra: BroadcastFields,
        _ route: BroadcastRoute,
        in bytes: UnsafeRawBufferPointer
    ) -> BroadcastAnswer {
        if state.isDraining { return .rejected(.shutdown) }
        guard let operation = route.operation else { return .rejected(.methodNotAllowed) }
        guard !fields.duplicate && !extra.duplicate else { return .rejected(.duplicateHeaders) }
        let bundle = APNsRequestCheck.view(route.bundle, bytes)
        let app = checks.authenticateApp(fields, in: bytes, bundle: bundle)
        if app.authenticated { providerAuthenticated() }
        if let reason = app.rejection { return .rejected(reason) }
        let store = state.channels
        if operation != .broadcast, let reason = BroadcastChecks.checkRequestID(extra, in: bytes) {
            return .rejected(reason)
        }
        switch operation {
        case .create:
            switch BroadcastChecks.configuration(request.body) {
            case .failure(let rejection): return .rejected(rejection.reason)
            case .success(let policy):
                guard case .created(let id) = store.create(bundle: bundle, storagePolicy: policy) else {
                    return .rejected(.cannotCreateChannelConfig)
                }
                return BroadcastAnswer(status: 201, channelID: id)
            }
        case .list:
            let ids = store.list(bundle: bundle).map { "\"\($0.text)\"" }.joined(separator: ",")
            return BroadcastAnswer(status: 200, body: "{\"channels\":[\(ids)]}")
        case .read, .delete, .broadcast:
            let id: ChannelID
            switch BroadcastChecks.channelID(extra, in: bytes) {
            case .failure(let rejection): return .rejected(rejection.reason)
            case .success(.id(let parsed)): id = parsed
            case .success: return .rejected(.channelNotRegistered)
            }
            guard let channel = store.channel(id, bundle: bundle) else { return .rejected(.channelNotRegistered) }
            switch operation {
            case .read:
                let body = "{\"message-storage-policy\":\(channel.storagePolicy),\"push-type\":\"LiveActivity\"}"
                return BroadcastAnswer(status: 200, body: body)
            case .delete:
                return store.delete(id, bundle: bundle)
                    ? BroadcastAnswer(status: 204) : .rejected(.channelNotRegistered)
            default:
                if let reason = BroadcastChecks.checkBroadcast(
                    fields,
                    extra,
                    in: bytes,
                    storagePolicy: channel.storagePolicy,
                    body: request.body,
                    bodyLength: request.bodyLength
                ) {
                    return .rejected(reason)
                }
                let expiration = DeviceNotification.Expiration(fields, in: bytes, wallOffset: wallOffset)
                return store.broadcast(id, bundle: bundle, expiration: expiration) == nil
                    ? .rejected(.channelNotRegistered) : BroadcastAnswer(status: 200)
            }
        }
    }
}
