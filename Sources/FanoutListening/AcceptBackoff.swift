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

extension AcceptBackoff.Event {
    /// What a listener's log says of the event: what happened ("accept failed", "accepting
    /// again") and the detail; `nil` for a failure that is not its burst's first (counted, not
    /// logged).
    public var logged: (kind: LimitKind, detail: String)? {
        switch self {
        case .failed(let error, let pause, let first):
            guard first else { return nil }
            let longest = AcceptBackoff.longestPause / 1_000_000
            return (
                .acceptFailed,
                "\(error); accepting again in \(pause / 1_000_000) ms, the pause doubling up to \(longest) ms while it fails"
            )
        case .recovered(let failures, let nanoseconds):
            return (.acceptingAgain, "after \(failures) failed accepts over \(nanoseconds / 1_000_000) ms")
        }
    }
}

/// Carries out `AcceptBackoff` on a listening channel: an I/O error from accepting (NIO's
/// `ServerBootstrap.bind` adds no back-off of its own) stops the channel reading for the pause,
/// and each event goes to `report`. It reads the time from its loop (`EventLoop.now`: an
/// embedded loop's made-up clock in tests).
///
/// NIO's server channel keeps its read pending after a failed accept, so it stays registered
/// for reading and is woken again at once: holding back `read` alone (NIO's own
/// `AcceptBackoffHandler`) does not stop it. Turning `autoRead` off unregisters it; turning it
/// back on when the pause is over registers it again.
public final class AcceptPauseHandler: ChannelDuplexHandler {
    public typealias InboundIn = any Channel
    public typealias InboundOut = any Channel
    public typealias OutboundIn = any Channel

    private var backoff = AcceptBackoff()
    /// The end of the pause, while one runs.
    private var resume: Scheduled<Void>?
    /// A read asked for during the pause: done when it ends.
    private var readWithheld = false
    private let report: (@Sendable (AcceptBackoff.Event) -> Void)?

    public init(report: (@Sendable (AcceptBackoff.Event) -> Void)?) {
        self.report = report
    }

    public func read(context: ChannelHandlerContext) {
        if resume == nil {
            context.read()
        } else {
            readWithheld = true
        }
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if backoff.failures > 0, let event = backoff.accepted(now: context.eventLoop.now.uptimeNanoseconds) {
            report?(event)
        }
        context.fireChannelRead(data)
    }

    public func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let error = error as? IOError else {
            context.fireErrorCaught(error)
            return
        }
        let now = context.eventLoop.now
        let event = backoff.failed(String(describing: error), now: now.uptimeNanoseconds)
        report?(event)
        guard case .failed(_, let pause, _) = event else { return }
        resume?.cancel()
        try? context.channel.syncOptions?.setOption(ChannelOptions.autoRead, value: false)
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        resume = context.eventLoop.scheduleTask(deadline: now + .nanoseconds(Int64(pause))) {
            let (handler, context) = bound.value
            handler.resume = nil
            try? context.channel.syncOptions?.setOption(ChannelOptions.autoRead, value: true)
            if handler.readWithheld {
                handler.readWithheld = false
                context.read()
            }
        }
    }

    public func channelInactive(context: ChannelHandlerContext) {
        resume?.cancel()
        resume = nil
        context.fireChannelInactive()
    }

    public func handlerRemoved(context: ChannelHandlerContext) {
        resume?.cancel()
        resume = nil
    }
}
