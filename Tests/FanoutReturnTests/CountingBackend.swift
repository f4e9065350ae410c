import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// The provider's backend as a test writes it: an HTTP/1.1 server on a loopback port that
/// counts every request it gets — its arrival on the uptime clock, its path, its event and
/// action — and answers 200 after `serviceTime` (none by default), at most `workers` at once
/// (`nil`: no limit): a backend of known capacity `workers / serviceTime`.
final class CountingBackend: Sendable {
    struct Arrival: Sendable {
        var time: UInt64
        var method: String
        var path: String
        var event: String
        var action: String
        var token: String
        var bodyBytes: Int
    }

    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    private let arrivals = NIOLockedValueBox<[Arrival]>([])
    let port: Int

    init(serviceTime: TimeAmount? = nil, workers: Int? = nil, threads: Int = 1) throws {
        group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
        let arrivals = arrivals
        let queue = workers.map { WorkerQueue(workers: $0) }
        channel = try ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(
                        Handler(arrivals: arrivals, serviceTime: serviceTime, queue: queue)
                    )
                }
            }
            .bind(host: "127.0.0.1", port: 0).wait()
        port = channel.localAddress!.port!
    }

    var url: String { "http://127.0.0.1:\(port)" }

    /// Every request counted so far.
    var all: [Arrival] { arrivals.withLockedValue { $0 } }
    var count: Int { arrivals.withLockedValue { $0.count } }

    func close() {
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
