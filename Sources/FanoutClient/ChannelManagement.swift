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
        let promise = loop.makePromise(of: Outcome.self)
        let channel = NIOLockedValueBox<(any Channel)?>(nil)
        let timer = loop.scheduleTask(in: TimeAmount(timeout)) {
            channel.withLockedValue { $0?.close(promise: nil) }
        }
        let app = app
        let authority = connection.authority ?? connection.host
        let authorization = connection.providerTokens?.current().value
        connection.connect(
            on: loop,
            delegate: {
                ChannelRequests(requests: requests, app: app, authority: authority, authorization: authorization) {
                    promise.succeed(Outcome(answers: $0, failure: $1))
                }
            }
        ).whenComplete { result in
            switch result {
            case .success(let (opened, _)): channel.withLockedValue { $0 = opened }
            case .failure(let error):
                promise.succeed(
                    Outcome(
                        answers: Array(repeating: ChannelRequest.Answer(status: 0), count: requests.count),
                        failure: "cannot connect: \(error)"
                    )
                )
            }
        }
        let outcome = (try? promise.futureResult.wait()) ?? Outcome(answers: [], failure: "no outcome")
        timer.cancel()
        channel.withLockedValue { $0?.close(promise: nil) }
        return outcome
    }
}
