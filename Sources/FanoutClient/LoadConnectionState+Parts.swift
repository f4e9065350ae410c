import FanoutEndpoint
import FanoutTokens
import NIOCore

// The parts a `LoadConnectionState` is made of, each owning one concern: the streams in flight,
// the work held off the wire, the open model's tickets, what the connection knows of its
// capacity, its peer's proof of life, and the outcomes waiting to be flushed. They decide
// nothing about the connection's phase: that is the state's.

extension LoadConnectionState {
    /// The notifications on the wire, by tag (a slot's index: the stream's tag on the
    /// connection), and the scan that resets those unanswered for the stream timeout.
    ///
    /// ```
    ///   reserve() ──► tag ──► fill(tag, entry) ──► release(tag) ──► entry (answered, reset)
    ///                   └──► unreserve(tag)   (not sent, or skipped)
    /// ```
    struct StreamSlots {
        private(set) var entries: [InFlight?]
        private var free: [Int]
        /// Notifications on the wire.
        private(set) var count = 0
        /// When the last timeout scan ended.
        private(set) var lastScan: UInt64
        /// Where the scan under way goes on (0: none is under way).
        private var scanPosition = 0

        init(capacity: Int, now: UInt64) {
            entries = [InFlight?](repeating: nil, count: capacity)
            free = Array((0..<capacity).reversed())
            lastScan = now
        }

        var freeCount: Int { free.count }

        /// A free slot's tag (the caller checked `freeCount`).
        mutating func reserve() -> Int { free.removeLast() }

        /// A reserved slot that nothing went out on is free again.
        mutating func unreserve(_ tag: Int) { free.append(tag) }

        mutating func fill(_ tag: Int, with entry: InFlight) {
            entries[tag] = entry
            count += 1
        }

        /// The entry on `tag`, whose slot is now free; `nil` for a tag not in flight (answered
        /// already, or reset).
        mutating func release(tag: UInt64) -> InFlight? {
            let slot = Int(tag)
            guard slot < entries.count, let entry = entries[slot] else { return nil }
            entries[slot] = nil
            free.append(slot)
            count -= 1
            return entry
        }

        /// Empties every slot, handing each entry to `body`.
        mutating func releaseAll(_ body: (InFlight) -> Void) {
            for index in entries.indices {
                guard let entry = entries[index] else { continue }
                entries[index] = nil
                body(entry)
            }
            free = Array((0..<entries.count).reversed())
            count = 0
        }

        /// Whether a timeout scan is due or under way (one under way goes on to its end, even
        /// once nothing is left in flight).
        func scanDue(now: UInt64) -> Bool {
            scanPosition > 0 || (count > 0 && now >= lastScan + LoadConnectionState.timeoutScanInterval)
        }

        /// The next entry unanswered for `timeout`, released; the next call goes on from the
        /// slot after it (one pass over the slots however many time out), and the pass ends by
        /// noting the time and returning `nil`.
        mutating func nextOverdue(now: UInt64, timeout: UInt64) -> InFlight? {
            while scanPosition < entries.count {
                let index = scanPosition
                scanPosition += 1
                guard let entry = entries[index], now - entry.sentAt >= timeout else { continue }
                return release(tag: UInt64(index))
            }
            scanPosition = 0
            lastScan = now
            return nil
        }
    }

    /// Work this connection holds off the wire: requests to send again at once, retries
    /// waiting for their backoff, and the batch it claims new tokens from.
    struct HeldWork {
        /// Sent again as soon as a stream is free (refused streams: the server never saw them).
        var resend: [PendingNotification] = []
        /// Waiting for their backoff to pass, earliest last.
        private(set) var retries: [(due: UInt64, notification: PendingNotification)] = []
        /// The batch this connection claims new tokens from, while it has unclaimed ones (other
        /// connections may claim from it too: `FeedBatch`). Let go of once it is spent: from then
        /// on in-flight notifications hold it, and the last to finish recycles it.
        var batch: FeedBatch?
        /// The feed had nothing ready: ask again at this time.
        var starvedUntil: UInt64 = 0
        /// The endpoint's quota holds every send until this time (`NotificationFeed.holdSends`):
        /// nothing here wakes the connection before it.
        var quotaHeldUntil: UInt64 = 0

        var isEmpty: Bool { resend.isEmpty && retries.isEmpty && batch == nil }

        /// When the earliest retry falls due.
        var nextRetry: UInt64? { retries.last?.due }

        mutating func retry(_ notification: PendingNotification, at due: UInt64) {
            let position = retries.firstIndex { $0.due < due } ?? retries.count
            retries.insert((due, notification), at: position)
        }

        /// The earliest retry, when its time has come.
        mutating func dueRetry(now: UInt64) -> PendingNotification? {
            guard let retry = retries.last, retry.due <= now else { return nil }
            retries.removeLast()
            return retry.notification
        }

        /// Everything held, for another connection: resends, retries, and the batch's
        /// unclaimed tokens.
        mutating func takeAll() -> [PendingNotification] {
            var all = resend
            all += retries.map(\.notification)
            if let batch {
                for index in batch.claimRest() {
                    all.append(PendingNotification(batch: batch, index: Int32(index), attempts: 0, firstSentAt: 0))
                }
            }
            resend.removeAll()
            retries.removeAll()
            batch = nil
            return all
        }
    }

    /// The open model's side of a connection: the schedule's tickets and the slot whose share
    /// it claims, the token taken before its ticket fell due, and the pacing window. In the
    /// closed model `tickets` is `nil` and only the window's answers are recorded.
    struct OpenModelSlot {
        /// The open model's schedule, `nil` for the closed model.
        let tickets: ArrivalTickets?
        /// The connection slot it fills: whose share of the tickets it claims.
        let slot: Int
        /// A new token taken before its ticket fell due; it goes out with the slot's next
        /// ticket. (A connection without a token claims no ticket: its slot's tickets then go,
        /// overdue, to connections that have tokens.)
        var waiting: PendingNotification?
        /// When to ask for the next ticket: the start of its pacing window (0: none is waited
        /// for).
        var nextTicketAt: UInt64 = 0
        /// The open model's tickets go out a window at a time (`PacingWindow`).
        var pacing: PacingWindow
    }

    /// What the connection knows of its room to send: writability, whether the last turn
    /// stopped for want of a stream, and the moments a stream wait is measured between.
    struct Capacity {
        var isWritable = true
        /// Whether the last turn stopped for want of a stream (or writability) rather than work:
        /// then only an answer (or a window) can let more go, and no timer is needed for retries
        /// or the feed.
        var atCapacity = false
        /// When a stream last came free after all were busy: a ticket due before then waited for
        /// the server, not for the generator.
        var freedAt: UInt64 = 0
        /// The streams in flight when the last turn stopped for want of one (the server's limit).
        var busyStreams = 0
        /// Since when every stream has been busy without a break (0: the last turn ended with a
        /// stream to spare and nothing to send on it). A ticket due before then waited for
        /// something else first (its connection, the generator): only the time after is a
        /// stream wait. A turn that frees a stream and fills it again is no break.
        var busySince: UInt64 = 0
        /// Since when the server has allowed no stream at all, nothing in flight (0: it allows
        /// some). RFC 9113 lets SETTINGS_MAX_CONCURRENT_STREAMS be 0 and a client wait for more;
        /// a connection that waits the stream timeout so ends (`Closure.noStreamAllowed`), or a
        /// run against such a server never ended.
        var noStreamSince: UInt64 = 0
    }

    /// The connection's proof that its peer is alive since a loss elsewhere (`NotificationFeed`):
    /// started notifications handed back after a loss are taken only once it covers the loss.
    struct PeerProof {
        /// The loss epoch (`NotificationFeed.lossEpoch`) this connection has shown its peer
        /// alive through.
        private(set) var provenEpoch: UInt64 = 0
        /// The epoch and send time of the PING that is to show it, while unacknowledged.
        private(set) var ping: (epoch: UInt64, sentAt: UInt64)?

        /// The peer answered a PING sent after loss `opaque`: it is alive since.
        mutating func acknowledged(_ opaque: UInt64) {
            guard let ping, ping.epoch == opaque else { return }
            self.ping = nil
            provenEpoch = max(provenEpoch, opaque)
        }

        /// A PING's epoch to send, when notifications lost elsewhere wait for a connection whose
        /// peer is alive since the loss, and this one has not shown it. A PING unanswered for
        /// `timeout` stands as an answer: the notifications are sent, and a dead connection
        /// costs them a try as before — the wait is bounded.
        mutating func needed(now: UInt64, feed: NotificationFeed, timeout: UInt64) -> UInt64? {
            if let ping {
                guard now - min(now, ping.sentAt) >= timeout else { return nil }
                self.ping = nil
                provenEpoch = max(provenEpoch, ping.epoch)
            }
            guard feed.startedWaiting > 0 else { return nil }
            let epoch = feed.lossEpoch
            guard epoch > provenEpoch else { return nil }
            ping = (epoch, now)
            return epoch
        }
    }

    /// The outcomes since the last flush to the run's statistics, and the tokens answered 410
    /// waiting for `--gone-tokens`.
    struct Ledger {
        var counts = LoadCounts()
        /// Tokens answered 410, one a line, waiting to be written (when `collectsGone`).
        var gone = ByteBuffer()
        let collectsGone: Bool
        /// What each gone line begins with (a campaign's halves write one file).
        let goneLabel: TokenLabel?
        private(set) var lastFlush: UInt64
        /// Requests sent here and already added to the run's statistics.
        private(set) var flushedRequests = 0

        init(collectsGone: Bool, goneLabel: TokenLabel? = nil, now: UInt64) {
            self.collectsGone = collectsGone
            self.goneLabel = goneLabel
            lastFlush = now
        }

        /// A token answered 410 (the caller checked `collectsGone`).
        mutating func keepGone(_ token: some Collection<UInt8>) {
            if let goneLabel { gone.writeString(goneLabel.prefix) }
            gone.writeBytes(token)
            gone.writeInteger(UInt8(ascii: "\n"))
        }

        /// Whether the counts are due to go to the run's statistics: every
        /// `LoadCounts.flushInterval` outcomes, and at least every `flushDelay`.
        func flushDue(now: UInt64) -> Bool {
            counts.finals >= LoadCounts.flushInterval || now >= lastFlush + LoadConnectionState.flushDelay
        }

        /// When the next flush falls due by time, while there is anything to flush.
        var nextFlush: UInt64? {
            counts.finals > 0 || counts.requests > 0 ? lastFlush + LoadConnectionState.flushDelay : nil
        }

        /// Whether this connection sent anything, flushed or not.
        var madeProgress: Bool { counts.requests > 0 || flushedRequests > 0 }

        /// Hands the counts to `deliver` (read in place: a copy kept past the call would make
        /// clearing them reallocate their arrays) and starts the next interval.
        mutating func flush(now: UInt64, _ deliver: (LoadCounts) -> Void) {
            lastFlush = now
            flushedRequests += counts.requests
            deliver(counts)
            counts.clear()
        }
    }

    /// The `authorization` in the connection's request fields, by generation: a renewal shows
    /// as a newer one (`AuthorizationSource`). After a refusal it is looked for at every turn
    /// until it comes.
    ///
    /// And the run's credentials as this connection's first answer judged them: refused there
    /// (an APNs 403 InvalidProviderToken, a bearer nothing renews), the connection sends nothing
    /// more until the run decides whether the endpoint refuses them on every connection (the run
    /// ends, unreachable) or took them on another (`release()`):
    ///
    /// ```
    ///   sending ──first answer refused the credentials──► withheld ──the run reached the
    ///      ▲                                                          endpoint elsewhere──┐
    ///      └──────────────────────────────────────────────────────────────────────────────┘
    /// ```
    struct AuthorizationWatch {
        let source: (any AuthorizationSource)?
        private(set) var generation: Int
        /// A refusal of `generation` was reported, and no newer one seen yet.
        private(set) var awaitsRenewal = false
        /// The first answer refused the credentials, and the run has not decided yet.
        private(set) var withheld = false
        /// When the fields last took a renewed value: a refusal of a request sent before it
        /// refused the value before (its answer was on its way), not the one sent now.
        private var renewedAt: UInt64 = 0

        init(source: (any AuthorizationSource)?, generation: Int) {
            self.source = source
            self.generation = generation
        }

        /// The new `authorization` when the source renewed it since the fields were made.
        mutating func renewed(now: UInt64) -> String? {
            guard let source, let current = source.authorization(), current.generation != generation else {
                return nil
            }
            generation = current.generation
            awaitsRenewal = false
            renewedAt = now
            return current.value
        }

        /// The connection's first answer refused the run's credentials.
        mutating func withhold() { withheld = true }

        /// The run reached the endpoint on another connection: the refusal was this one's.
        mutating func release() { withheld = false }

        /// Tells the source that its value of `generation` was refused, once, by a request sent
        /// at `sentAt` with it.
        mutating func refused(sentAt: UInt64) {
            // A request sent at the renewal's own moment went out in the turn that ended with it,
            // with the value before: strictly after.
            guard let source, !awaitsRenewal, sentAt > renewedAt else { return }
            awaitsRenewal = true
            source.refused(generation: generation)
        }
    }
}
