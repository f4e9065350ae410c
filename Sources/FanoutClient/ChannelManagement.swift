import FanoutHTTP2
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// The channel-management endpoint of a broadcast run (docs/apns.md, "Broadcast channels"):
/// creates its channels before the run and deletes them after, over one connection each time
/// (`ChannelRequests`).
public struct ChannelManagement: Sendable {
    /// Where and how to connect: host, port, transport, `:authority` and token auth, as a
    /// run's; its headers and payload are not used.
    public var connection: LoadConfiguration
    /// The bundle id whose channels these are.
    public var app: String
    /// How long one batch of requests may take before what is unanswered counts as failed.
    public var timeout: Duration = .seconds(60)

    public init(connection: LoadConfiguration, app: String) {
        self.connection = connection
        self.app = app
    }

    /// What a batch of requests got: an answer per request (status 0: none came), and why the
    /// connection failed, when it did.
    public struct Outcome: Sendable {
        public var answers: [ChannelRequest.Answer]
        public var failure: String?
    }

    /// Sends `requests` and waits for their answers (at most `timeout`).
    public func perform(_ requests: [ChannelRequest]) -> Outcome {
        guard !requests.isEmpty else { return Outcome(answers: [], failure: nil) }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let loop = group.next()
        // The delegate reports when its connection ends, and a connection that never connected
        // ends too (its handlers are removed): which of the two comes first is NIO's to say. A
        // failed connect is the outcome whenever there was one; the delegate's only after a
        // connect that succeeded.
        let ended = loop.makePromise(of: Outcome.self)
        let channel = NIOLockedValueBox<(any Channel)?>(nil)
        let timer = loop.scheduleTask(in: TimeAmount(timeout)) {
            channel.withLockedValue { $0?.close(promise: nil) }
        }
        let app = app
        let authority = connection.endpoint.authority ?? connection.endpoint.host
        let scheme = connection.endpoint.scheme
        let authorization = connection.endpoint.providerTokens?.current().value
        let unanswered = Array(repeating: ChannelRequest.Answer(status: 0), count: requests.count)
        let result = connection.endpoint.connect(
            on: loop,
            configuration: connection.shape.http2,
            delegate: {
                ChannelRequests(
                    requests: requests,
                    app: app,
                    authority: authority,
                    scheme: scheme,
                    authorization: authorization
                ) { ended.succeed(Outcome(answers: $0, failure: $1)) }
            }
        )
        .flatMap { opened, _ in
            channel.withLockedValue { $0 = opened }
            return ended.futureResult
        }
        .recover { error in
            let failed = Outcome(answers: unanswered, failure: "cannot connect: \(error)")
            ended.succeed(failed)  // a promise no connection will fulfil is still fulfilled
            return failed
        }
        let outcome = (try? result.wait()) ?? Outcome(answers: unanswered, failure: "no outcome")
        timer.cancel()
        channel.withLockedValue { $0?.close(promise: nil) }
        return outcome
    }
}
