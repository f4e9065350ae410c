import Atomics
import Dispatch
import FanoutEndpoint
import FanoutHTTP2
import NIOConcurrencyHelpers
import NIOCore

/// What a run's callers and its driver share, and nothing else: whether the run is cancelled
/// or stopping (and why, since when), the channels open, and the connections' reports.
///
/// ```
///   LoadEngine (any thread)        RunControl                 RunDriver (the run's thread)
///   cancel() ─────────────────►  cancelled, channels  ◄────  isCancelled · opened(channel)
///   connections (endpointReached) ◄── reached ◄──────────────  reachedEndpoint() (wakes them)
///   interrupt(by:) ───────────►  stopped (cause, at)  ◄────  graceEnds · stop(.abort)
///                                endings  ◄── connections' reports (event loops) ──► wait
/// ```
///
/// The engine makes it and the driver; the driver holds this, never the engine.
final class RunControl: Sendable {
    /// Why a run stopped before its end.
    enum StopCause: Sendable {
        case signal(StopSignal)
        case abort(Abort)
    }

    /// How long an interrupted run waits for what is in flight to be answered before it closes
    /// its connections.
    static let interruptionGrace: Duration = .milliseconds(500)

    /// The run's work: interrupted when the run stops.
    let feed: NotificationFeed
    /// What the run waits on: its connections' reports, and `cancel()`.
    let endings = Endings()
    private let cancelled = ManagedAtomic(false)
    private let reached = ManagedAtomic(false)
    /// What stopped the run before its end and when (uptime ns); the first only.
    private let stopped = NIOLockedValueBox<(cause: StopCause, at: UInt64)?>(nil)
    private let channels = NIOLockedValueBox<[ObjectIdentifier: any Channel]>([:])

    init(feed: NotificationFeed) {
        self.feed = feed
    }

    /// Closes every connection; the run's wait hears it at once, even with none open.
    func cancel() {
        cancelled.store(true, ordering: .relaxed)
        for channel in channels.withLockedValue({ Array($0.values) }) { channel.close(promise: nil) }
        endings.wake()
    }

    var isCancelled: Bool { cancelled.load(ordering: .relaxed) }

    /// A connection had an accepted answer (`ConnectionPool.reached`): connections whose first
    /// answer refused the credentials send again. Each open connection is woken to look, and
    /// one opened meanwhile is woken by `opened(_:)`.
    func reachedEndpoint() {
        reached.store(true, ordering: .sequentiallyConsistent)
        for channel in channels.withLockedValue({ Array($0.values) }) {
            channel.pipeline.fireUserInboundEventTriggered(HTTP2WakeUp())
        }
    }

    var endpointReached: Bool { reached.load(ordering: .sequentiallyConsistent) }

    /// Stops the run because of `cause`: no new notification is sent, and the run's wait hears
    /// it. Only the first call counts.
    func stop(_ cause: StopCause) {
        let first = stopped.withLockedValue { stopped in
            guard stopped == nil else { return false }
            stopped = (cause, NIODeadline.now().uptimeNanoseconds)
            return true
        }
        guard first else { return }
        feed.interrupt()
        endings.wake()
    }

    /// What stopped the run and when (uptime ns), if something did.
    var stop: (cause: StopCause, at: UInt64)? { stopped.withLockedValue { $0 } }

    /// Whether a signal or an abort is stopping the run.
    var isStopping: Bool { stop != nil }

    /// When a stopped run's grace ends (uptime ns), if it was stopped.
    var graceEnds: UInt64? { stop.map { $0.at + UInt64(Self.interruptionGrace.wholeNanoseconds) } }

    /// A connection's channel is open: `cancel()` closes it until it closes; one opened while
    /// `cancel()` closed the others is closed now.
    func opened(_ channel: any Channel) {
        let key = ObjectIdentifier(channel)
        channels.withLockedValue { $0[key] = channel }
        channel.closeFuture.whenComplete { [channels] _ in
            channels.withLockedValue { _ = $0.removeValue(forKey: key) }
        }
        if isCancelled { channel.close(promise: nil) }
        if endpointReached { channel.pipeline.fireUserInboundEventTriggered(HTTP2WakeUp()) }
    }
}

/// What connections report to the run from their event loops.
enum Ending {
    /// `slot`'s delay passed and its connection is being opened.
    case opening(slot: Int)
    /// `slot`'s connection received its first answer; `refusal` when it refused the credentials.
    case answered(slot: Int, refusal: EndpointFailure?)
    /// `slot`'s connection ended (or could not be opened); `failure`, what kept it from an answer.
    case ended(slot: Int, madeProgress: Bool, failure: EndpointFailure?)
}

/// Connections' reports, posted from event loops and waited for by the run.
final class Endings: Sendable {
    private let ended = NIOLockedValueBox<[Ending]>([])
    private let signal = DispatchSemaphore(value: 0)

    func post(_ ending: Ending) {
        ended.withLockedValue { $0.append(ending) }
        signal.signal()
    }

    /// Ends the run's wait with nothing reported (`cancel()`).
    func wake() { signal.signal() }

    /// The reports so far, waiting up to `timeout` for one (or a `wake()`).
    func wait(upTo timeout: Duration) -> [Ending] {
        _ = signal.wait(timeout: .now() + .nanoseconds(Int(timeout.wholeNanoseconds)))
        return ended.withLockedValue { list in
            defer { list.removeAll() }
            return list
        }
    }
}

/// One connection attempt of a slot: its end is reported once, whether the connect failed or
/// the connection closed.
final class Attempt: Sendable {
    private let slot: Int
    private let endings: Endings
    private let reported = ManagedAtomic(false)

    init(slot: Int, endings: Endings) {
        self.slot = slot
        self.endings = endings
    }

    func end(madeProgress: Bool, failure: EndpointFailure?) {
        guard reported.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else { return }
        endings.post(.ended(slot: slot, madeProgress: madeProgress, failure: failure))
    }
}
