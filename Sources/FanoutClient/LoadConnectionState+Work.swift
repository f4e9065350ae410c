// MARK: Where the next notification comes from

extension LoadConnectionState {
    /// The next notification: one to send again, a retry whose time has come, one another
    /// connection handed back, or a new token (the open model: once its ticket falls in the
    /// pacing window, with the generator's lag and its wait for a stream).
    mutating func nextNotification(now: UInt64) -> (PendingNotification, UInt64?, StreamWait?)? {
        if let notification = resend.popLast() { return (notification, nil, nil) }
        if let retry = retries.last, retry.due <= now {
            retries.removeLast()
            return (retry.notification, nil, nil)
        }
        if let started = feed.takeStarted(proven: provenEpoch) { return (started, nil, nil) }
        if !scheduleEnded && feed.isClosed { endSchedule() }
        if scheduleEnded {
            feedFinished = true
            return nil
        }
        guard let tickets else { return nextToken(now: now).map { ($0, nil, nil) } }
        let horizon = pacing.horizon(now: now)
        // Its ticket is known to fall in a later window: no need to ask (an answer's turn).
        if waiting != nil, nextTicketAt > horizon { return nil }
        guard var notification = waiting.take() ?? nextToken(now: now) else { return nil }
        // Handed back after its first send: its time was kept, it needs no ticket.
        if notification.firstSentAt != 0 { return (notification, nil, nil) }
        switch tickets.claim(now: now, slot: slot, until: horizon) {
        case .due(let due):
            nextTicketAt = 0
            let slot = slot
            pacing.ticket { tickets.spacing(slot: slot) }
            // Sent early in its window: its latency counts from now, when it went out.
            notification.firstSentAt = min(due, now)
            // A wait for a stream, when streams were what was short (not writability, not the
            // connection itself: one opened after its tickets fell due waited for connecting).
            let freed = min(now, capacityFreedAt)
            let busyFrom = max(due, busySince)
            let waited =
                freed > busyFrom && capacityStreams > 0
                ? StreamWait(nanoseconds: freed - busyFrom, streams: capacityStreams) : nil
            return (notification, now - min(now, max(due, capacityFreedAt)), waited)
        case .notYet(let due):
            waiting = notification
            // Woken at the start of the ticket's pacing window; at the ticket's own time when
            // that start has passed (a ticket of another slot, free to take once overdue).
            let start = pacing.wake(for: due)
            nextTicketAt = start > now ? start : due
            return nil
        case .exhausted:
            waiting = notification
            endSchedule()
            feedFinished = true
            return nil
        }
    }

    /// The batch's next token, or new work from the feed.
    fileprivate mutating func nextToken(now: UInt64) -> PendingNotification? {
        while true {
            if let current = batch {
                if let index = current.claim() {
                    if index == current.count - 1 { batch = nil }
                    return PendingNotification(batch: current, index: Int32(index), attempts: 0, firstSentAt: 0)
                }
                // Another connection claimed the rest.
                batch = nil
            }
            guard now >= starvedUntil else { return nil }
            starvedUntil = 0
            switch feed.take(proven: provenEpoch) {
            case .returned(let notification):
                return notification
            case .batch(let next):
                batch = next
            case .notReady:
                starvedUntil = now + Self.feedPollInterval
                return nil
            case .finished:
                feedFinished = true
                // Its tickets are the other connections' now, without waiting.
                tickets?.retire(slot: slot)
                return nil
            }
        }
    }
}
