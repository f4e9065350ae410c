import Crypto
import FanoutHTTP2
import FanoutTestSupport
import Foundation
import NIOCore

@testable import FanoutSink

/// A sink connection and a client joined in memory: requests go in one at a time and their
/// responses come back as values.
struct SinkHarness: ~Copyable {
    /// APNs' error body: `{"reason": …, "timestamp": …}`.
    struct ErrorBody: Decodable {
        var reason: String?
        var timestamp: Int64?
    }

    struct Response: Equatable, CustomStringConvertible {
        var status: Int
        var reason: String?
        var apnsID: String?
        var timestamp: Int64?
        var uniqueID: String? = nil

        var description: String { "\(status) \(reason ?? "") apns-id \(apnsID ?? "none")" }
    }

    /// What a channel or broadcast answer carries beyond a `Response`.
    struct Details: Equatable {
        var requestID: String?
        var channelID: String?
        var contentType: String?
        var body: String
    }

    var client = HTTP2Connection(role: .client)
    var server: HTTP2Connection
    var sink: SinkConnection
    let statistics = SinkStatistics()
    var responses: [UInt64: Response] = [:]
    var details: [UInt64: Details] = [:]
    var resets: [UInt64: HTTP2ErrorCode] = [:]
    var settings: [UInt32?] = []
    /// The debug data of each GOAWAY the client received.
    var goAways: [String] = []
    private var nextTag: UInt64 = 0

    init(_ configuration: SinkConfiguration = .init(), state: SinkState? = nil) {
        var server = HTTP2Connection(role: .server, configuration: Sink.http2Configuration(configuration))
        var sink = SinkConnection(
            configuration: configuration,
            statistics: statistics,
            state: state ?? SinkState(scenario: configuration.scenario),
            seed: 1
        )
        server.withWriter { sink.connectionStarted(&$0) }
        self.server = server
        self.sink = sink
        pump()
    }

    /// Calls the sink's `wake(now:connection:)`, as the connection's owner does when the time
    /// the sink asked for has come; what it queues moves at the next `pump()`.
    mutating func wakeSink(now: NIODeadline) {
        var sink = self.sink
        server.withWriter { sink.wake(now: now, connection: &$0) }
        self.sink = sink
    }

    /// A request with APNs' usual fields, `fields` replacing or adding to them (a `nil` value
    /// removes one).
    static func fields(
        token: String = String(repeating: "ab", count: 32),
        _ changes: [(String, String?)] = []
    ) -> [(String, String)] {
        changed(
            [
                (":method", "POST"), (":scheme", "https"), (":path", "/3/device/\(token)"),
                (":authority", "api.push.apple.com"), ("apns-topic", "com.example.app"), ("apns-push-type", "alert"),
            ],
            changes
        )
    }

    /// `fields` with each of `changes` made: a field's value replaced, or (`nil`) the field
    /// removed; a field not there added.
    static func changed(_ fields: [(String, String)], _ changes: [(String, String?)]) -> [(String, String)] {
        var fields = fields
        for (name, value) in changes {
            if let index = fields.firstIndex(where: { $0.0 == name }) {
                if let value { fields[index].1 = value } else { fields.remove(at: index) }
            } else if let value {
                fields.append((name, value))
            }
        }
        return fields
    }

    static let poll = try! String(contentsOfFile: repositoryRoot + "/fixtures/poll.json", encoding: .utf8)

    /// Sends one request and returns its response.
    mutating func send(_ fields: [(String, String)], body: String = poll) -> Response? {
        let tag = nextTag
        nextTag += 1
        let payload = body.isEmpty ? nil : ByteBuffer(string: body)
        guard (try? client.sendRequest(HTTP2Fields(fields), body: payload, tag: tag)) != nil else { return nil }
        pump()
        return responses[tag]
    }

    /// Sends one request and returns its response with its details.
    mutating func sendForDetails(_ fields: [(String, String)], body: String = "") -> (Response, Details)? {
        let tag = nextTag
        guard let response = send(fields, body: body), let details = details[tag] else { return nil }
        return (response, details)
    }

    /// Moves bytes both ways until both sides are quiet.
    mutating func pump() {
        for _ in 0..<50 {
            var toServer = client.takeOutbound()
            var toClient = server.takeOutbound()
            if toServer.readableBytes == 0 && toClient.readableBytes == 0 { return }
            var sink = self.sink
            HTTP2Connection.receive(&server, from: &toServer) { event, server in sink.handle(event, connection: &server)
            }
            self.sink = sink
            var (responses, resets, limits, goAways) = (self.responses, self.resets, self.settings, self.goAways)
            var details = self.details
            HTTP2Connection.receive(&client, from: &toClient) { event, _ in
                switch event {
                case .message(let message):
                    var response = Response(status: message.status, apnsID: message.headers["apns-id"])
                    response.uniqueID = message.headers["apns-unique-id"]
                    if message.body.count > 0,
                        let body = try? JSONDecoder().decode(ErrorBody.self, from: Data(message.body))
                    {
                        response.reason = body.reason
                        response.timestamp = body.timestamp
                    }
                    responses[message.tag] = response
                    details[message.tag] = Details(
                        requestID: message.headers["apns-request-id"],
                        channelID: message.headers["apns-channel-id"],
                        contentType: message.headers["content-type"],
                        body: String(decoding: message.body, as: UTF8.self)
                    )
                case .streamReset(_, let tag, let code, _): resets[tag] = code
                case .remoteSettingsChanged(let settings): limits.append(settings.maxConcurrentStreams)
                case .goAway(_, _, let debugData): goAways.append(String(decoding: debugData, as: UTF8.self))
                default: break
                }
            }
            (self.responses, self.resets, self.settings, self.goAways) = (responses, resets, limits, goAways)
            self.details = details
        }
    }

    /// The client's view of the server's stream limit.
    var streamLimit: UInt32? { client.remoteSettings.maxConcurrentStreams }
}

/// ES256 provider tokens made with swift-crypto, for the auth rules.
struct TestKey {
    let keyID: String
    let teamID: String
    let privateKey = P256.Signing.PrivateKey()

    var sinkKey: TokenAuthentication.Key {
        TokenAuthentication.Key(keyID: keyID, teamID: teamID, publicKey: privateKey.publicKey)
    }

    func token(issuedAt: Int64, issuer: String? = nil, algorithm: String = "ES256") -> String {
        token(iat: "\(issuedAt)", issuer: issuer, algorithm: algorithm)
    }

    /// A token whose `iat` is `iat` as written in the claims' JSON (`1764140000.25`, `"17…"`).
    /// `header` adds members to the header's JSON (`"crit":["exp"]`).
    func token(iat: String, issuer: String? = nil, algorithm: String = "ES256", header extra: String = "") -> String {
        let members = #""alg":"\#(algorithm)","kid":"\#(keyID)""# + (extra.isEmpty ? "" : "," + extra)
        let header = Self.base64URL(Data("{\(members)}".utf8))
        let claims = Self.base64URL(Data(#"{"iss":"\#(issuer ?? teamID)","iat":\#(iat)}"#.utf8))
        let signature = try! privateKey.signature(for: Data("\(header).\(claims)".utf8))
        return "\(header).\(claims).\(Self.base64URL(signature.rawRepresentation))"
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

/// A clock the tests move by hand.
final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var seconds: Int64

    init(_ seconds: Int64) { self.seconds = seconds }

    var now: Int64 { lock.withLock { seconds } }
    func advance(by delta: Int64) { lock.withLock { seconds += delta } }
}
