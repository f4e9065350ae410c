import NIOCore
import NIOHTTP1
import NIOPosix

/// A small HTTP/1.1 server of text documents by path — the sink's `/stats` and `/metrics`, a
/// sender's `/metrics` — answering GET and HEAD (405 otherwise) one request at a time per
/// connection, keep-alive as the client asks.
public final class TextEndpoint: Sendable {
    /// What a path answers.
    public struct Answer: Sendable {
        public var status: HTTPResponseStatus
        public var type: String
        public var body: String

        public init(status: HTTPResponseStatus, type: String, body: String) {
            self.status = status
            self.type = type
            self.body = body
        }
    }

    /// Prometheus' text exposition format, 0.0.4.
    public static let prometheusType = "text/plain; version=0.0.4; charset=utf-8"
    public static let plainType = "text/plain; charset=utf-8"

    private let channel: any Channel

    /// Where it listens.
    public var localAddress: SocketAddress { channel.localAddress! }

    /// Listens on `host:port` (port 0: any free one); `answer` gets the path without its query,
    /// on an event loop of `group`.
    public init(
        host: String,
        port: Int,
        group: any EventLoopGroup,
        answer: @escaping @Sendable (_ path: String) -> Answer
    ) throws {
        channel = try ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(TextHandler(answer: answer))
                }
            }
            .bind(host: host, port: port)
            .wait()
    }

    public func close() {
        try? channel.close().wait()
    }
}

private final class TextHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let answer: @Sendable (String) -> TextEndpoint.Answer
    private var head: HTTPRequestHead?

    init(answer: @escaping @Sendable (String) -> TextEndpoint.Answer) {
        self.answer = answer
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): self.head = head
        case .body: break
        case .end:
            guard let head else { return }
            self.head = nil
            let reply =
                head.method == .GET || head.method == .HEAD
                ? answer(head.uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? "")
                : .init(status: .methodNotAllowed, type: TextEndpoint.plainType, body: "GET or HEAD only\n")
            var headers = HTTPHeaders()
            headers.add(name: "content-type", value: reply.type)
            headers.add(name: "content-length", value: String(reply.body.utf8.count))
            headers.add(name: "cache-control", value: "no-store")
            if !head.isKeepAlive { headers.add(name: "connection", value: "close") }
            let response = HTTPResponseHead(version: head.version, status: reply.status, headers: headers)
            context.write(wrapOutboundOut(.head(response)), promise: nil)
            if head.method != .HEAD {
                context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: reply.body)))), promise: nil)
            }
            let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
            if !head.isKeepAlive {
                let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
                written.whenComplete { _ in bound.value.close(promise: nil) }
            }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
