import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// The provider's backend as a test writes it: an HTTP/1.1 server on a loopback port that
/// counts every request it gets — its arrival on the uptime clock, its path, its event and
/// action — and answers 200 after `serviceTime` (none by default), at most `workers` at once
/// (`nil`: no limit): a backend of known capacity `workers / serviceTime`.
public final class CountingBackend: Sendable {
    public struct Arrival: Sendable {
        public var time: UInt64
        public var method: String
        public var path: String
        public var event: String
        public var action: String
        public var token: String
        public var bodyBytes: Int
    }

    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    private let arrivals = NIOLockedValueBox<[Arrival]>([])
    private let connections = NIOLockedValueBox<(open: Int, peak: Int, total: Int)>((0, 0, 0))
    public let port: Int

    public init(serviceTime: TimeAmount? = nil, workers: Int? = nil, threads: Int = 1) throws {
        group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
        let arrivals = arrivals
        let connections = connections
        let queue = workers.map { WorkerQueue(workers: $0) }
        channel = try ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                connections.withLockedValue {
                    $0.open += 1
                    $0.total += 1
                    $0.peak = max($0.peak, $0.open)
                }
                channel.closeFuture.whenComplete { _ in connections.withLockedValue { $0.open -= 1 } }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(
                        Handler(arrivals: arrivals, serviceTime: serviceTime, queue: queue)
                    )
                }
            }
            .bind(host: "127.0.0.1", port: 0).wait()
        port = channel.localAddress!.port!
    }

    public var url: String { "http://127.0.0.1:\(port)" }

    /// Every request counted so far.
    public var all: [Arrival] { arrivals.withLockedValue { $0 } }
    public var count: Int { arrivals.withLockedValue { $0.count } }
    /// The most connections open at once, and all that were opened.
    public var peakConnections: Int { connections.withLockedValue { $0.peak } }
    public var totalConnections: Int { connections.withLockedValue { $0.total } }

    public func close() {
        try? channel.close().wait()
        try? group.syncShutdownGracefully()
    }

    /// `workers` requests served at once over every connection; the rest wait their turn, in order.
    final class WorkerQueue: Sendable {
        private let state: NIOLockedValueBox<(busy: Int, waiting: [@Sendable () -> Void])>
        let workers: Int

        init(workers: Int) {
            self.workers = workers
            state = NIOLockedValueBox((0, []))
        }

        /// Runs `start` when a worker is free; the caller calls `done` when it finished.
        func enter(_ start: @escaping @Sendable () -> Void) {
            let now = state.withLockedValue { state -> Bool in
                if state.busy < workers {
                    state.busy += 1
                    return true
                }
                state.waiting.append(start)
                return false
            }
            if now { start() }
        }

        func done() {
            let next = state.withLockedValue { state -> (@Sendable () -> Void)? in
                if state.waiting.isEmpty {
                    state.busy -= 1
                    return nil
                }
                return state.waiting.removeFirst()
            }
            next?()
        }
    }

    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        let arrivals: NIOLockedValueBox<[Arrival]>
        let serviceTime: TimeAmount?
        let queue: WorkerQueue?
        var arrival: Arrival?

        init(arrivals: NIOLockedValueBox<[Arrival]>, serviceTime: TimeAmount?, queue: WorkerQueue?) {
            self.arrivals = arrivals
            self.serviceTime = serviceTime
            self.queue = queue
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                arrival = Arrival(
                    time: NIODeadline.now().uptimeNanoseconds,
                    method: head.method.rawValue,
                    path: head.uri,
                    event: head.headers.first(name: "x-fanout-event") ?? "",
                    action: head.headers.first(name: "x-fanout-action") ?? "",
                    token: head.headers.first(name: "x-fanout-token") ?? "",
                    bodyBytes: 0
                )
            case .body(let body):
                arrival?.bodyBytes += body.readableBytes
            case .end:
                guard let arrival else { return }
                self.arrival = nil
                arrivals.withLockedValue { $0.append(arrival) }
                let loop = context.eventLoop
                let bound = NIOLoopBound((self, context), eventLoop: loop)
                let answer: @Sendable () -> Void = {
                    loop.execute {
                        let (handler, context) = bound.value
                        handler.respond(context)
                    }
                }
                guard let serviceTime else { return respond(context) }
                if let queue {
                    queue.enter {
                        loop.scheduleTask(in: serviceTime) {
                            answer()
                            queue.done()
                        }
                    }
                } else {
                    loop.scheduleTask(in: serviceTime) { answer() }
                }
            }
        }

        func respond(_ context: ChannelHandlerContext) {
            var headers = HTTPHeaders()
            headers.add(name: "content-length", value: "2")
            context.write(
                wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))),
                promise: nil
            )
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: "ok")))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }
}
