import FanoutAPNs
import FanoutHTTP2
import Foundation
import NIOCore

/// One client connection to the sink: answers each request as APNs would, follows APNs'
/// MAX_CONCURRENT_STREAMS behaviour, and counts everything.
struct SinkConnection: HTTP2ConnectionDelegate {
    let configuration: SinkConfiguration
    let statistics: SinkStatistics
    let state: SinkState
    private var counts = SinkCounts()
    private var authentication = TokenAuthentication.ConnectionState()
    /// The connection's token-auth state (for tests).
    var authenticationState: TokenAuthentication.ConnectionState { authentication }
    private var streamsRaised = false
    private var ids: APNsIDGenerator
    /// The apns-id of the response being written.
    private let apnsIDStorage = ScratchBytes(count: 36)
    private var apnsID: UnsafeMutableRawBufferPointer { apnsIDStorage.bytes }
    private var timestampedBody = ByteBuffer()

    init(configuration: SinkConfiguration, statistics: SinkStatistics, state: SinkState, seed: UInt64) {
        self.configuration = configuration
        self.statistics = statistics
        self.state = state
        ids = APNsIDGenerator(seed: seed)
        statistics.connectionOpened()
    }

    mutating func connectionStarted(_ connection: inout HTTP2Connection) {
        connection.setMaxConcurrentStreams(configuration.initialMaxConcurrentStreams)
        if state.isDraining { shutdown(&connection) }
    }

    mutating func handle(_ event: HTTP2Event, connection: inout HTTP2Connection) {
        switch event {
        case .message(let request): answer(request, &connection)
        case .streamReset: counts.resets += 1
        default: break
        }
    }

    mutating func connectionEnded(_ connection: HTTP2Connection, error: (any Error)?) {
        statistics.add(counts)
        counts.clear()
        statistics.connectionClosed()
    }

    /// Sends GOAWAY with APNs' `{"reason":"Shutdown"}`: open streams finish, no new ones start.
    mutating func shutdown(_ connection: inout HTTP2Connection) {
        connection.goAway(code: .noError, debugData: Array(#"{"reason":"Shutdown"}"#.utf8))
    }

    private mutating func answer(_ request: HTTP2Message, _ connection: inout HTTP2Connection) {
        counts.requests += 1
        counts.bodyBytes += request.bodyLength
        let fields = APNsRequestCheck.fields(of: request.headers)
        var echoedID = false
        let rejection: APNsReason? = request.headers.withUnsafeBytes { bytes in
            if fields.apnsID.count == 36 {
                let id = APNsRequestCheck.view(fields.apnsID, bytes)
                if APNsRequestCheck.isCanonicalUUID(id) {
                    apnsID.copyMemory(from: id)
                    echoedID = true
                }
            }
            if state.isDraining { return .shutdown }
            let token: APNsRequestCheck.Slice
            switch APNsRequestCheck.checkRequestLine(fields, in: bytes, tokenFormat: configuration.tokenFormat) {
            case .failure(let rejection): return rejection.reason
            case .success(let slice): token = slice
            }
            if let authentication = configuration.tokenAuthentication {
                let field = fields.authorization.isPresent ? APNsRequestCheck.view(fields.authorization, bytes) : nil
                if let reason = authentication.check(field, state: &self.authentication) { return reason }
            }
            if let rejection = APNsRequestCheck.checkNotification(
                fields,
                in: bytes,
                body: request.body,
                bodyLength: request.bodyLength,
                allowedBundles: configuration.allowedBundles
            ) {
                return rejection.reason
            }
            request.body.withUnsafeReadableBytes { payload in
                counts.digest.add(token: APNsRequestCheck.view(token, bytes), payload: payload)
            }
            return nil
        }
        if !echoedID { ids.write(into: apnsID) }
        respond(to: request.stream, rejection, &connection)
        if counts.requests >= SinkCounts.flushInterval {
            statistics.add(counts)
            counts.clear()
        }
        if rejection == .shutdown { shutdown(&connection) }
    }

    private mutating func respond(to stream: UInt32, _ rejection: APNsReason?, _ connection: inout HTTP2Connection) {
        let id = UnsafeRawBufferPointer(apnsID)
        guard let rejection else {
            counts.accepted += 1
            connection.respond(stream: stream, SinkResponseFields(status: 200, apnsID: id, isError: false), body: nil)
            if !streamsRaised {
                streamsRaised = true
                connection.setMaxConcurrentStreams(configuration.maxConcurrentStreams)
            }
            return
        }
        counts.reject(rejection)
        let fields = SinkResponseFields(status: rejection.status, apnsID: id, isError: true)
        if rejection.status == 410 {
            let milliseconds = Int64(Date().timeIntervalSince1970 * 1000)
            SinkErrorBody.write(rejection, timestampMilliseconds: milliseconds, into: &timestampedBody)
            connection.respond(stream: stream, fields, body: timestampedBody)
        } else {
            connection.respond(stream: stream, fields, body: SinkErrorBody.bodies[rejection])
        }
        if configuration.throttleAfterRejection && streamsRaised {
            streamsRaised = false
            connection.setMaxConcurrentStreams(configuration.initialMaxConcurrentStreams)
        }
    }
}
