import Atomics
import Dispatch
import FanoutAPNs
import NIOConcurrencyHelpers

/// A token set being read: batches of parsed tokens, handed from a reader on its own Dispatch
/// queue to any number of consumers.
///
/// ```
///            free batches ◄──────────────── recycle(_:) ◄─┐
///  reader ──► parse into a free batch ──► ready ──► next() ──► consumer
/// ```
/// Both queues are bounded and lock-free (`BatchQueue`); `batchCount` batches circulate, so
/// memory is bounded by `batchCount × batchBytes` whatever the set's size, and a slow consumer
/// holds the reader back (backpressure). Consumers must recycle every batch they take.
public final class TokenStream: Sendable {
    private let ready: BatchQueue
    /// Batches waiting for the reader (internal: a test sees the reader park on it).
    let free: BatchQueue
    private let cancelled = ManagedAtomic<Bool>(false)
    /// Wakes a reader waiting on a quiet pipe or FIFO when the stream is cancelled.
    private let wake: TokenWake?
    private let finished = DispatchSemaphore(value: 0)
    private let result = NIOLockedValueBox<TokenStreamSummary?>(nil)

    /// Opens `source` and starts reading it. A file that cannot be opened, or a regular binary
    /// file whose header is wrong, fails here rather than at the first `next()`; a pipe or FIFO
    /// is told text or binary by the reader (its first bytes may be long in coming), whose
    /// summary then holds a wrong header.
    public init(_ source: TokenSource, configuration: TokenReaderConfiguration = .init()) throws(TokenSetError) {
        let count = max(2, configuration.batchCount)
        ready = BatchQueue(capacity: count)
        free = BatchQueue(capacity: count)
        for _ in 0..<count {
            _ = free.tryPush(
                TokenBatch(byteCapacity: configuration.batchBytes, tokenCapacity: configuration.batchTokens)
            )
        }
        let input = try TokenInput.open(source, configuration: configuration)
        wake = input.waits ? try TokenWake() : nil
        let reader = TokenReader(
            input: input,
            configuration: configuration,
            ready: ready,
            free: free,
            cancelled: cancelled,
            wake: wake
        )
        let result = self.result
        let finished = self.finished
        let ready = self.ready
        DispatchQueue(label: "fanout.tokens.reader").async {
            let summary = reader.run()
            result.withLockedValue { $0 = summary }
            ready.close()
            finished.signal()
        }
    }

    /// The next batch, waiting for the reader if need be; `nil` once every token has been
    /// handed out (or reading failed or was cancelled: see `summary`).
    public func next() -> TokenBatch? { ready.pop() }

    /// The next batch if one is ready now; never waits.
    public func tryNext() -> TokenBatch? { ready.tryPop() }

    /// Gives a batch back to the reader once its tokens are used.
    public func recycle(_ batch: TokenBatch) {
        batch.removeAll()
        _ = free.tryPush(batch)
    }

    /// Stops reading; `next()` drains what was already read, then ends. The reader stops
    /// whether or not anyone drains: closing both queues ends its waits.
    public func cancel() {
        cancelled.store(true, ordering: .releasing)
        wake?.wake()
        free.close()
        ready.close()
    }

    deinit {
        // A stream dropped before its end must not leave its reader waiting for a consumer.
        cancel()
    }

    /// What the reader saw, once it has finished (`nil` before).
    public var summary: TokenStreamSummary? { result.withLockedValue { $0 } }

    /// Waits at most `timeout` for the reader to finish and returns its summary.
    public func waitForSummary(timeout: Duration) -> TokenStreamSummary? {
        let (seconds, attoseconds) = timeout.components
        let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        if finished.wait(timeout: .now() + .nanoseconds(nanoseconds)) == .success { finished.signal() }
        return summary
    }
}
