import Atomics
import Dispatch
import FanoutEndpoint
import NIOConcurrencyHelpers

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
