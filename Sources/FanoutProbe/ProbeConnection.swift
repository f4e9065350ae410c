import FanoutAPNs
import FanoutEndpoint
import FanoutHTTP2
import FanoutPayload
import NIOCore

/// `fanout probe`'s connection: carries out `ProbeState`'s actions with the run's request
/// fields and payload, as `LoadConnection` does for a run, and tells it what the HTTP/2 layer
/// saw of flow control: each WINDOW_UPDATE (the connection keeps them for the probe) and the
/// bytes each request put on the wire.
package struct ProbeConnection: HTTP2ConnectionDelegate {
    private var state: ProbeState
    /// Device tokens as hex text.
    private let tokens: [[UInt8]]
    private var fields: APNsRequestFields
    private var body: PayloadBuffer
    private var settingsFirst: HTTP2Settings?
    private var hasAnswered = false
    /// The server's first GOAWAY, with its APNs reason.
    private var goAway: EndpointFailure?
    private let encoder: PayloadEncoder
    private let done: @Sendable (ProbeOutcome) -> Void

    package init(
        endpoint: APNsEndpoint,
        encoder: PayloadEncoder,
        tokens: [[UInt8]],
        pings: Int,
        flow: ProbeState.FlowPlan?,
        done: @escaping @Sendable (ProbeOutcome) -> Void
    ) {
        self.tokens = tokens
        self.done = done
        state = ProbeState(pings: pings, requests: tokens.count, flow: flow)
        fields = APNsRequestFields(
            shared: endpoint.sharedFields(authorization: endpoint.authorizations?.authorization()?.value)
        )
        self.encoder = encoder
        body = PayloadBuffer(byteCount: encoder.template.sizeLimit + 64)
    }

    package mutating func connectionStarted(_ connection: inout HTTP2Writer) {
        connection.recordWindowUpdates()
        turn(&connection)
    }

    package mutating func handle(_ event: HTTP2Event, connection: inout HTTP2Writer) {
        let now = NIODeadline.now().uptimeNanoseconds
        tellWindowUpdates(&connection)
        switch event {
        case .remoteSettingsChanged(let settings):
            if settingsFirst == nil { settingsFirst = settings }
        case .pingAcknowledged(let opaque):
            state.pingAcknowledged(opaque, now: now)
        case .message(let response):
            let reason = response.status == 200 ? nil : APNsErrorBody.reason(in: response.body)
            hasAnswered = true
            state.answered(tag: response.tag, status: response.status, reason: reason, now: now)
        case .streamReset(_, let tag, _, _):
            state.reset(tag: tag, now: now)
        case .goAway(_, let code, let debugData) where goAway == nil:
            goAway = .goAway(code: code, debugData: debugData)
        case .goAway, .connectionError:
            break
        }
        turn(&connection)
    }

    package var nextWakeUp: NIODeadline? { state.wakeAt.map { .uptimeNanoseconds($0) } }

    package mutating func wake(now: NIODeadline, connection: inout HTTP2Writer) {
        tellWindowUpdates(&connection)
        turn(&connection)
    }

    package mutating func connectionEnded(_ connection: borrowing HTTP2Connection, error: (any Error)?) {
        tell(connection.windowUpdates)
        let failure =
            state.phase == .done
            ? nil : EndpointFailure.ended(answered: hasAnswered, goAway: goAway, error: error, connection)
        done(
            ProbeOutcome(
                record: state.record,
                finished: state.phase == .done,
                tlsVersion: connection.tlsVersion,
                settingsFirst: settingsFirst,
                settingsLast: connection.hasPeerSettings ? connection.remoteSettings : nil,
                failure: failure,
                goAway: goAway?.detail
            )
        )
    }

    /// The WINDOW_UPDATEs the connection recorded since the last call, in order.
    private mutating func tellWindowUpdates(_ connection: inout HTTP2Writer) {
        tell(connection.takeWindowUpdates())
    }

    private mutating func tell(_ updates: [HTTP2Connection.WindowUpdate]) {
        for update in updates {
            state.windowUpdated(
                stream: update.stream,
                increment: update.increment,
                windowAfter: update.connectionWindowAfter,
                now: update.at
            )
        }
    }

    private mutating func turn(_ connection: inout HTTP2Writer) {
        while true {
            let now = NIODeadline.now().uptimeNanoseconds
            switch state.next(
                now: now,
                hasPeerSettings: connection.hasPeerSettings,
                availableStreams: connection.availableStreams,
                connectionWindow: connection.connectionWindow
            ) {
            case .ping(let opaque):
                connection.ping(opaque: opaque)
            case .send(let index, let tag):
                // One that cannot go counts as reset, and the probe goes on with the next.
                if !send(index: index, tag: tag, &connection) { state.reset(tag: tag, now: now) }
            case .finish:
                connection.goAway()
                return
            case .wait:
                return
            }
        }
    }

    /// Encodes and sends request `index`, and tells the state what it put on the wire (the
    /// connection's queued bytes before and after: nothing leaves during the call); `false`
    /// when it could not go (a bad payload, a closed connection).
    private mutating func send(index: Int, tag: UInt64, _ connection: inout HTTP2Writer) -> Bool {
        let queued = connection.queuedBytes
        let dataSent = connection.dataBytesSent
        let bodyBytes: Int? = tokens[index].withUnsafeBytes { token in
            let input = NotificationInput(
                token: token,
                sequence: UInt64(index),
                fields: UnsafeRawBufferPointer(start: nil, count: 0),
                tokenIsValidatedHex: true
            )
            guard let payload = try? encoder.encode(input, into: &body) else { return nil }
            fields.select(token: token)
            guard (try? connection.sendRequest(fields, bodyBytes: payload, tag: tag)) != nil else { return nil }
            return payload.count
        }
        guard let bodyBytes else { return false }
        let dataBytes = connection.dataBytesSent - dataSent
        state.sent(
            bodyBytes: bodyBytes,
            wire: dataBytes == bodyBytes
                ? ProbeState.WireSample(
                    bytes: connection.queuedBytes - queued,
                    dataBytes: dataBytes,
                    maxFrameSize: Int(connection.remoteSettings.maxFrameSize)
                ) : nil
        )
        return true
    }
}
