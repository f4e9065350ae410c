// MARK: The turn's start

extension LoadConnectionState {
    /// What a turn does before it sends: waits for the start time, resets streams past their
    /// timeout, proves the peer alive when lost work waits. A step, or `nil` to go on sending.
    mutating func startTurn(now: UInt64) -> Step? {
        inTurnStart = true
        if notBefore != 0 {
            // Ready early (SETTINGS exchanged): `nextWakeUp` brings it back at the start.
            guard now >= notBefore else { return .wait }
            notBefore = 0
            capacityFreedAt = now
        }
        // A pass under way goes on to its end, even once nothing is left in flight.
        let scanDue = inFlight > 0 && now >= lastTimeoutScan + Self.timeoutScanInterval
        if timeoutScanPosition > 0 || scanDue, let step = resetOverdue(now: now) { return step }
        if let epoch = proofNeeded(now: now) { return .ping(epoch) }
        if noStreamSince > 0, now >= noStreamSince + streamTimeout { return endForWantOfStreams() }
        if atCapacity { capacityFreedAt = now }
        inTurnStart = false
        return nil
    }

    /// A PING's epoch to send, when notifications lost elsewhere wait for a connection whose
    /// peer is alive since the loss, and this one has not shown it (`NotificationFeed`). A PING
    /// unanswered for the stream timeout stands as an answer: the notifications are sent, and a
    /// dead connection costs them a try as before — the wait is bounded.
    mutating func proofNeeded(now: UInt64) -> UInt64? {
        if let ping = proofPing {
            guard now - min(now, ping.sentAt) >= streamTimeout else { return nil }
            proofPing = nil
            provenEpoch = max(provenEpoch, ping.epoch)
        }
        guard feed.startedWaiting > 0 else { return nil }
        let epoch = feed.lossEpoch
        guard epoch > provenEpoch else { return nil }
        proofPing = (epoch, now)
        return epoch
    }

    /// The next stream unanswered for the stream timeout, reset and settled as timed out; the
    /// next call goes on from the slot after it (one pass over the slots however many time out),
    /// and the pass ends by noting the time.
    fileprivate mutating func resetOverdue(now: UInt64) -> Step? {
        while timeoutScanPosition < slots.count {
            let index = timeoutScanPosition
            timeoutScanPosition += 1
            guard let entry = slots[index], now - entry.sentAt >= streamTimeout else { continue }
            _ = release(tag: UInt64(index))
            return .reset(stream: entry.stream, started: settle(entry, after: .timedOut, now: now))
        }
        timeoutScanPosition = 0
        lastTimeoutScan = now
        return nil
    }
}
