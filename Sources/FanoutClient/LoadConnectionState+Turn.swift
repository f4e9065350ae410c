// MARK: The turn's start

extension LoadConnectionState {
    /// What a turn does before it sends: waits for the start time, resets streams past their
    /// timeout, proves the peer alive when lost work waits. A step, or `nil` to go on sending.
    mutating func startTurn(now: UInt64) -> Step? {
        inTurnStart = true
        if case .beforeStart(let notBefore) = phase {
            // Ready early (SETTINGS exchanged): `nextWakeUp` brings it back at the start.
            guard now >= notBefore else { return .wait }
            begin()
            capacity.freedAt = now
        }
        if streams.scanDue(now: now), let entry = streams.nextOverdue(now: now, timeout: streamTimeout) {
            return .reset(stream: entry.stream, started: settle(entry, after: .timedOut, now: now))
        }
        if let epoch = proof.needed(now: now, feed: feed, timeout: streamTimeout) { return .ping(epoch) }
        if capacity.noStreamSince > 0, now >= capacity.noStreamSince + streamTimeout { return endForWantOfStreams() }
        if capacity.atCapacity { capacity.freedAt = now }
        inTurnStart = false
        return nil
    }
}
