// MARK: Where the next notification comes from

extension LoadConnectionState {
    /// The next notification: one to send again, a retry whose time has come, one another
    /// connection handed back, or a new token (the open model: once its ticket falls in the
    /// pacing window, with the generator's lag and its wait for a stream).
    mutating func nextNotification(now: UInt64) -> (PendingNotification, UInt64?, StreamWait?)? {
        if let notification = held.resend.popLast() { return (notification, nil, nil) }
        if let retry = held.dueRetry(now: now) { return (retry, nil, nil) }
        if let started = feed.takeStarted(proven: proof.provenEpoch) { return (started, nil, nil) }
        if case .scheduleEnded = phase { return nil }
        if feed.isClosed {
            endSchedule()
            return nil
        }
        guard let tickets = openModel.tickets else { return nextToken(now: now).map { ($0, nil, nil) } }
        let horizon = openModel.pacing.horizon(now: now)
        // Its ticket is known to fall in a later window: no need to ask (an answer's turn).
        if openModel.waiting != nil, openModel.nextTicketAt > horizon { return nil }
        guard var notification = openModel.waiting.take() ?? nextToken(now: now) else { return nil }
        // Handed back after its first send: its time was kept, it needs no ticket.
        if notification.firstSentAt != 0 { return (notification, nil, nil) }
        let slot = openModel.slot
        switch tickets.claim(now: now, slot: slot, until: horizon) {
        case .due(let due):
            openModel.nextTicketAt = 0
            openModel.pacing.ticket { tickets.spacing(slot: slot) }
            // Sent early in its window: its latency counts from now, when it went out.
            notification.firstSentAt = min(due, now)
            // A wait for a stream, when streams were what was short (not writability, not the
            // connection itself: one opened after its tickets fell due waited for connecting).
            let freed = min(now, capacity.freedAt)
            let busyFrom = max(due, capacity.busySince)
            let waited =
                freed > busyFrom && capacity.busyStreams > 0
                ? StreamWait(nanoseconds: freed - busyFrom, streams: capacity.busyStreams) : nil
            return (notification, now - min(now, max(due, capacity.freedAt)), waited)
        case .notYet(let due):
            openModel.waiting = notification
            // Woken at the start of the ticket's pacing window; at the ticket's own time when
            // that start has passed (a ticket of another slot, free to take once overdue).
            let start = openModel.pacing.wake(for: due)
            openModel.nextTicketAt = start > now ? start : due
            return nil
        case .exhausted:
            openModel.waiting = notification
            endSchedule()
            return nil
        }
    }

    /// The batch's next token, or new work from the feed.
    fileprivate mutating func nextToken(now: UInt64) -> PendingNotification? {
        while true {
            if let current = held.batch {
                if let index = current.claim() {
                    if index == current.count - 1 { held.batch = nil }
                    return PendingNotification(batch: current, index: Int32(index), attempts: 0, firstSentAt: 0)
                }
                // Another connection claimed the rest.
                held.batch = nil
            }
            guard now >= held.starvedUntil else { return nil }
            held.starvedUntil = 0
            switch feed.take(proven: proof.provenEpoch) {
            case .returned(let notification):
                return notification
            case .batch(let next):
                held.batch = next
            case .notReady:
                held.starvedUntil = now + Self.feedPollInterval
                return nil
            case .finished:
                feedRanOut()
                // Its tickets are the other connections' now, without waiting.
                openModel.tickets?.retire(slot: openModel.slot)
                return nil
            }
        }
    }
}
