import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import Testing

@testable import FanoutHTTP2

/// Fanout's HTTP/2 against swift-nio-http2, in process: its server (a stream channel per
/// request, header validation on) answering Fanout's client, and its client asking Fanout's
/// server.
@Suite struct SwiftNIOHTTP2InteroperabilityTests {
    /// A swift-nio-http2 stream that answers 200 with the request body and its length.
    final class EchoStream: ChannelInboundHandler {
        typealias InboundIn = NIOHTTP2.HTTP2Frame.FramePayload
        typealias OutboundOut = NIOHTTP2.HTTP2Frame.FramePayload
        private var body = ByteBuffer()

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .headers(let headers) where headers.endStream: respond(context)
            case .data(let data):
                if case .byteBuffer(var bytes) = data.data { body.writeBuffer(&bytes) }
                if data.endStream { respond(context) }
            default: break
            }
        }

        private func respond(_ context: ChannelHandlerContext) {
            let headers = HPACKHeaders([(":status", "200"), ("x-body-length", "\(body.readableBytes)")])
            context.write(wrapOutboundOut(.headers(.init(headers: headers))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.data(.init(data: .byteBuffer(body), endStream: true))), promise: nil)
        }
    }

    @Test func fanoutClientAgainstASwiftNIOHTTP2Server() throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let server = try ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.configureHTTP2Pipeline(
                    mode: .server,
                    connectionConfiguration: .init(),
                    streamConfiguration: .init()
                ) { stream in
                    stream.eventLoop.makeCompletedFuture { try stream.pipeline.syncOperations.addHandler(EchoStream()) }
                }.map { _ in }
            }
            .bind(host: "127.0.0.1", port: 0).wait()
        defer { try? server.close().wait() }
        let fields = HTTP2Fields([
            (":method", "POST"), (":scheme", "http"), (":path", "/3/device/ab"), (":authority", "127.0.0.1"),
            ("apns-topic", "com.example.app"),
        ])
        let results = try sendRequests(
            port: server.localAddress!.port!,
            total: 1000,
            fields: fields,
            body: ByteBuffer(string: pollBody)
        )
        let (responses, resets, error) = results.snapshot
        #expect(error == nil)
        #expect(resets.isEmpty)
        #expect(responses.count == 1000)
        #expect(responses.values.allSatisfy { $0 == .init(status: 200, body: pollBody) })
    }

    /// A swift-nio-http2 client stream: sends one POST and records the response.
    final class RequestStream: ChannelInboundHandler {
        typealias InboundIn = NIOHTTP2.HTTP2Frame.FramePayload
        typealias OutboundOut = NIOHTTP2.HTTP2Frame.FramePayload
        let index: Int
        let results: ClientResults
        private var status = 0
        private var body = ByteBuffer()

        init(index: Int, results: ClientResults) {
            self.index = index
            self.results = results
        }

        func channelActive(context: ChannelHandlerContext) {
            let headers = HPACKHeaders([
                (":method", "POST"), (":scheme", "http"), (":path", "/3/device/\(index)"), (":authority", "localhost"),
            ])
            context.write(wrapOutboundOut(.headers(.init(headers: headers))), promise: nil)
            let body = ByteBuffer(string: "request \(index)")
            context.writeAndFlush(wrapOutboundOut(.data(.init(data: .byteBuffer(body), endStream: true))), promise: nil)
            context.fireChannelActive()
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .headers(let headers):
                status = headers.headers.first(name: ":status").flatMap { Int($0) } ?? 0
                if headers.endStream { finish() }
            case .data(let data):
                if case .byteBuffer(var bytes) = data.data { body.writeBuffer(&bytes) }
                if data.endStream { finish() }
            default: break
            }
        }

        private func finish() {
            results.record(UInt64(index), .init(status: status, body: String(buffer: body)))
        }
    }

    @Test func swiftNIOHTTP2ClientAgainstAFanoutServer() throws {
        let server = try FanoutServer()
        defer { server.stop() }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        // The HTTP/2 handler is in place before the first byte can arrive: the server speaks first.
        let configured = group.next().makePromise(of: NIOHTTP2Handler.StreamMultiplexer.self)
        let channel = try ClientBootstrap(group: group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let multiplexer = try channel.pipeline.syncOperations.configureHTTP2Pipeline(
                        mode: .client,
                        connectionConfiguration: .init(),
                        streamConfiguration: .init()
                    ) { $0.eventLoop.makeSucceededVoidFuture() }
                    configured.succeed(multiplexer)
                }
            }
            .connect(host: "127.0.0.1", port: server.port).wait()
        defer { try? channel.close().wait() }
        let multiplexer = try configured.futureResult.wait()
        let results = ClientResults()
        let total = 300
        var streams: [EventLoopFuture<any Channel>] = []
        for index in 0..<total {
            streams.append(
                multiplexer.createStreamChannel { stream in
                    stream.eventLoop.makeCompletedFuture {
                        try stream.pipeline.syncOperations.addHandler(RequestStream(index: index, results: results))
                    }
                }
            )
        }
        for stream in streams { try stream.flatMap { $0.closeFuture }.wait() }
        let responses = results.snapshot.responses
        #expect(responses.count == total)
        for index in 0..<total {
            #expect(responses[UInt64(index)] == .init(status: 200, body: "request \(index)"))
        }
    }
}
