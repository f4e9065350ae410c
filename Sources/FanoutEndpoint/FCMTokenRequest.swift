import FanoutFCMAuth
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// One request to an OAuth2 token endpoint for an FCM access token, over HTTP/1.1 as
/// google-auth sends it (docs/fcm.md, "OAuth2"), on its own connection, closed after the answer:
///
/// ```
///   POST <token_uri's path>   host, content-type: application/x-www-form-urlencoded,
///                             content-length, connection: close
///   assertion=<JWT>&grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer
///
///   200 {"access_token":"ya29.…","expires_in":3599,"token_type":"Bearer"}   ──► the token
///   4xx/5xx {"error":"invalid_grant","error_description":"…"}                ──► FCMTokenError
/// ```
///
/// Once an hour, not on the hot path: the answer is read with Foundation's JSON.
package struct FCMTokenRequest: Sendable {
    /// Where the token endpoint is: `http` or `https`, host, port, path.
    package let uri: URL
    /// `uri` as written, for errors.
    package let endpoint: String
    private let tls: NIOSSLContext?
    /// How long connecting, sending and the answer may take together.
    package var timeout: TimeAmount = .seconds(10)

    /// A request to `tokenURI` (a service account's `token_uri`); over https it trusts the
    /// system's roots, or only the certificates in `trustedCertificatesFile`.
    package init(tokenURI: String, trustedCertificatesFile: String? = nil) throws(FCMTokenError) {
        guard let uri = URL(string: tokenURI), let scheme = uri.scheme?.lowercased(),
            ["http", "https"].contains(scheme),
            let host = uri.host, !host.isEmpty
        else {
            throw FCMTokenError(endpoint: tokenURI, .badURI, "is not an http or https URL with a host")
        }
        self.uri = uri
        endpoint = uri.absoluteString
        guard scheme == "https" else {
            tls = nil
            return
        }
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.applicationProtocols = ["http/1.1"]
        if let trustedCertificatesFile {
            do {
                configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(trustedCertificatesFile))
            } catch {
                throw FCMTokenError(
                    endpoint: tokenURI,
                    .badURI,
                    "cannot be trusted through \(trustedCertificatesFile): not PEM certificates (\(error))"
                )
            }
        }
        do {
            tls = try NIOSSLContext(configuration: configuration)
        } catch {
            throw FCMTokenError(endpoint: tokenURI, .badURI, "cannot set up TLS: \(error)")
        }
    }

    /// The answer to `form` (`FCMAssertion.form`): the access token and its lifetime in seconds.
    package func fetch(form: String, on loop: any EventLoop) -> EventLoopFuture<(accessToken: String, expiresIn: Int)> {
        let endpoint = endpoint
        let host = uri.host!
        let port = uri.port ?? (tls == nil ? 80 : 443)
        // The request target as written (percent-encoded, with its query); an IPv6 host in
        // brackets in `host`.
        let components = URLComponents(url: uri, resolvingAgainstBaseURL: false)
        let path = components.map { $0.percentEncodedPath + ($0.percentEncodedQuery.map { "?" + $0 } ?? "") } ?? ""
        let hostField = (host.contains(":") ? "[\(host)]" : host) + (uri.port.map { ":\($0)" } ?? "")
        let answer = loop.makePromise(of: Answer.self)
        let timer = loop.scheduleTask(in: timeout) {
            answer.fail(FCMTokenError(endpoint: endpoint, .noAnswer, "no answer within \(Self.spoken(timeout))"))
        }
        let tls = tls
        let connected = ClientBootstrap(group: loop)
            .connectTimeout(timeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let operations = channel.pipeline.syncOperations
                    if let tls {
                        try operations.addHandler(NIOSSLClientHandler(context: tls, serverHostname: Self.sniName(host)))
                    }
                    try operations.addHTTPClientHandlers()
                    try operations.addHandler(AnswerReader(answer: answer))
                }
            }
            .connect(host: host, port: port)
        connected.whenFailure { error in
            answer.fail(FCMTokenError(endpoint: endpoint, .unreachable, "cannot connect: \(error)"))
        }
        connected.whenSuccess { channel in
            var head = HTTPRequestHead(version: .http1_1, method: .POST, uri: path.hasPrefix("/") ? path : "/" + path)
            let body = channel.allocator.buffer(string: form)
            head.headers.add(name: "host", value: hostField)
            head.headers.add(name: "content-type", value: "application/x-www-form-urlencoded")
            head.headers.add(name: "content-length", value: String(body.readableBytes))
            head.headers.add(name: "user-agent", value: "fanout")
            head.headers.add(name: "connection", value: "close")
            channel.write(HTTPClientRequestPart.head(head), promise: nil)
            channel.write(HTTPClientRequestPart.body(.byteBuffer(body)), promise: nil)
            channel.writeAndFlush(HTTPClientRequestPart.end(nil)).whenFailure { error in
                answer.fail(FCMTokenError(endpoint: endpoint, .unreachable, "cannot send the request: \(error)"))
            }
            answer.futureResult.whenComplete { _ in channel.close(promise: nil) }
        }
        return answer.futureResult.always { _ in timer.cancel() }
            .flatMapErrorThrowing { error in
                if let error = error as? FCMTokenError { throw error }
                // A handshake that failed (an untrusted certificate, no TLS at all) is no answer.
                if error is NIOSSLError || error is BoringSSLError {
                    throw FCMTokenError(endpoint: endpoint, .unreachable, "TLS failed: \(error)")
                }
                // An answer that could not be read (not HTTP, cut short, too long).
                throw FCMTokenError(endpoint: endpoint, .badAnswer, "answered unreadably: \(error)")
            }
            .flatMapThrowing { answer in try Self.token(from: answer, endpoint: endpoint) }
    }

    /// An answer's status and body.
    struct Answer {
        var status: Int
        var body: ByteBuffer
    }

    /// The token in `answer`, or the endpoint's refusal as an error that quotes it.
    static func token(
        from answer: Answer,
        endpoint: String
    ) throws(FCMTokenError) -> (
        accessToken: String, expiresIn: Int
    ) {
        let object = (try? JSONSerialization.jsonObject(with: Data(answer.body.readableBytesView))) as? [String: Any]
        guard answer.status == 200 else {
            let error = object?["error"] as? String
            let description = object?["error_description"] as? String
            var said = "answered \(answer.status)"
            if let error { said += " \(error)" }
            if let description { said += ": \(description)" }
            if error == nil && description == nil {
                said += " without an OAuth error (\(answer.body.readableBytes) bytes)"
            }
            let retryable =
                [408, 429, 500, 503, 504].contains(answer.status)
                || ["internal_failure", "server_error", "temporarily_unavailable"].contains(error ?? "")
            throw FCMTokenError(endpoint: endpoint, retryable ? .unavailable : .refused, said)
        }
        guard let object else {
            throw FCMTokenError(endpoint: endpoint, .badAnswer, "answered 200 with a body that is not a JSON object")
        }
        guard let token = object["access_token"] as? String, !token.isEmpty else {
            throw FCMTokenError(endpoint: endpoint, .badAnswer, "answered 200 without an \"access_token\" string")
        }
        // google-auth takes expires_in as a number or a string of one.
        let expiresIn: Int
        switch object["expires_in"] {
        case let number as NSNumber where Double(number.intValue) == number.doubleValue: expiresIn = number.intValue
        case let text as String where Int(text) != nil: expiresIn = Int(text)!
        default:
            throw FCMTokenError(endpoint: endpoint, .badAnswer, "answered 200 without a whole \"expires_in\"")
        }
        guard expiresIn > 0 && expiresIn <= FCMTokenSchedule.longestLifetime else {
            throw FCMTokenError(
                endpoint: endpoint,
                .badAnswer,
                "answered a token that expires in \(expiresIn) s (not from 1 s to a day)"
            )
        }
        return (token, expiresIn)
    }

    /// The TLS server name for `host`: none for an IP address (RFC 6066 §3).
    static func sniName(_ host: String) -> String? {
        (try? SocketAddress(ipAddress: host, port: 0)) == nil ? host : nil
    }

    static func spoken(_ amount: TimeAmount) -> String {
        let milliseconds = amount.nanoseconds / 1_000_000
        return milliseconds % 1000 == 0 ? "\(milliseconds / 1000) s" : "\(milliseconds) ms"
    }

    /// Reads the answer's head and body and completes `answer` at its end; a connection that
    /// closes before then fails it.
    final class AnswerReader: ChannelInboundHandler {
        typealias InboundIn = HTTPClientResponsePart
        private let answer: EventLoopPromise<Answer>
        private var status: Int?
        private var body: ByteBuffer?

        init(answer: EventLoopPromise<Answer>) { self.answer = answer }

        /// A token's answer is a few hundred bytes: past this it is not one.
        static let longestAnswer = 64 * 1024

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                status = Int(head.status.code)
                body = context.channel.allocator.buffer(capacity: 512)
            case .body(var part):
                guard (body?.readableBytes ?? 0) + part.readableBytes <= Self.longestAnswer else {
                    answer.fail(TooLong())
                    context.close(promise: nil)
                    return
                }
                body?.writeBuffer(&part)
            case .end:
                if let status, let body { answer.succeed(Answer(status: status, body: body)) }
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            answer.fail(ClosedEarly())
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            answer.fail(error)
            context.close(promise: nil)
        }
    }

    struct ClosedEarly: Error, CustomStringConvertible {
        var description: String { "the connection closed before the answer ended" }
    }

    struct TooLong: Error, CustomStringConvertible {
        var description: String { "an answer longer than \(AnswerReader.longestAnswer / 1024) KiB" }
    }
}

/// Why no access token came from a token endpoint: the endpoint, what kind of failure, and what
/// it said.
package struct FCMTokenError: Error, Sendable, Equatable, CustomStringConvertible {
    package enum Kind: Sendable, Equatable {
        /// The `token_uri` cannot be used.
        case badURI
        /// Nothing to talk to: refused, unreachable, TLS failed.
        case unreachable
        /// No whole answer in time.
        case noAnswer
        /// An answer google-auth would retry (408, 429, 5xx, a server error).
        case unavailable
        /// A refusal of the assertion or the request (4xx): trying again will not help.
        case refused
        /// A 200 whose body holds no usable token.
        case badAnswer
    }

    package var endpoint: String
    package var kind: Kind
    package var detail: String

    package init(endpoint: String, _ kind: Kind, _ detail: String) {
        self.endpoint = endpoint
        self.kind = kind
        self.detail = detail
    }

    /// Whether asking again may get a token.
    package var isTransient: Bool { kind == .unreachable || kind == .noAnswer || kind == .unavailable }

    package var description: String { "token endpoint \(endpoint) \(detail)" }
}
