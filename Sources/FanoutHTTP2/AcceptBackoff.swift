import NIOCore

/// How a listener waits when accepting a connection fails — out of descriptors (EMFILE,
/// ENFILE) above all: the connection stays in the kernel's backlog, so accepting again at once
/// fails again at once, a core spent on nothing. Told each failure and each success with the
/// time, it says how long to pause and what to report; it reads no clock.
///
/// ```
///   accept fails ──► pause 10 ms, doubled for each failure in a row, at most 1 s
///                    the burst's first failure ─► reported (every failure is counted)
///   accept succeeds after failures ──► reported once: how many, over how long; pauses start again at 10 ms
/// ```
public struct AcceptBackoff: Sendable, Hashable {
    /// The first pause of a burst, and the longest.
    public static let firstPause: UInt64 = 10_000_000
    public static let longestPause: UInt64 = 1_000_000_000

    /// What a listener reports.
    public enum Event: Sendable, Hashable {
        /// An accept failed with `error`; accepting waits `pause` nanoseconds. `firstOfBurst`:
        /// the first since the last success (the one to log).
        case failed(error: String, pause: UInt64, firstOfBurst: Bool)
        /// An accept succeeded after `failures` in a row, the first of them `nanoseconds` ago.
        case recovered(failures: Int, nanoseconds: UInt64)
    }

    /// Failures since the last success.
    public private(set) var failures = 0
    private var burstStartedAt: UInt64 = 0
    private var pause: UInt64 = 0

    public init() {}

    /// An accept failed at `now` with `error`.
    public mutating func failed(_ error: String, now: UInt64) -> Event {
        if failures == 0 {
            burstStartedAt = now
            pause = Self.firstPause
        } else {
            pause = min(Self.longestPause, pause * 2)
        }
        failures += 1
        return .failed(error: error, pause: pause, firstOfBurst: failures == 1)
    }

    /// An accept succeeded at `now`: the end of a burst of failures, if there was one.
    public mutating func accepted(now: UInt64) -> Event? {
        guard failures > 0 else { return nil }
        defer { failures = 0 }
        return .recovered(failures: failures, nanoseconds: now - min(now, burstStartedAt))
    }
}

/// Carries out `AcceptBackoff` on a listening channel: an I/O error from accepting (NIO's
/// `ServerBootstrap.bind` adds no back-off of its own) holds the channel's reads for the
/// pause, and each event goes to `report`. It reads the time from its loop (`EventLoop.now`:
/// an embedded loop's made-up clock in tests).
final class AcceptPauseHandler: ChannelDuplexHandler {
    typealias InboundIn = any Channel
    typealias InboundOut = any Channel
    typealias OutboundIn = any Channel

    private var backoff = AcceptBackoff()
    private var resumeAt: NIODeadline?
    private var scheduledRead: Scheduled<Void>?
    private let report: (@Sendable (AcceptBackoff.Event) -> Void)?

    init(report: (@Sendable (AcceptBackoff.Event) -> Void)?) {
        self.report = report
    }

    func read(context: ChannelHandlerContext) {
        guard scheduledRead == nil else { return }
        if let resumeAt, context.eventLoop.now < resumeAt {
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            scheduledRead = context.eventLoop.scheduleTask(deadline: resumeAt) {
                let (handler, context) = bound.value
                handler.scheduledRead = nil
                handler.resumeAt = nil
                context.read()
            }
        } else {
            resumeAt = nil
            context.read()
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if backoff.failures > 0, let event = backoff.accepted(now: context.eventLoop.now.uptimeNanoseconds) {
            report?(event)
        }
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let error = error as? IOError else {
            context.fireErrorCaught(error)
            return
        }
        let now = context.eventLoop.now
        let event = backoff.failed(String(describing: error), now: now.uptimeNanoseconds)
        if case .failed(_, let pause, _) = event { resumeAt = now + .nanoseconds(Int64(pause)) }
        report?(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        scheduledRead?.cancel()
        scheduledRead = nil
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        scheduledRead?.cancel()
        scheduledRead = nil
    }
}
