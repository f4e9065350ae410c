import FanoutNotation

/// Which connections the sink serves: at most `total` open at once, at most `perPeer` of them
/// from one address, and, once half the total is open, at most `idlePerPeer` from one address
/// that have not sent a request yet, so that one client (a runaway pool, a hostile neighbour)
/// cannot take every connection of a sink others share. A connection past a limit is turned
/// away (the APNs sink refuses it in words, `HTTP2Refusal`; the FCM sink, whose clients read no
/// such words, closes it), unless a connection that never sent a request can make room for it
/// (it is evicted: the APNs sink's GOAWAY, the FCM sink's close):
///
/// - at the total, the one that has waited longest, whoever it is from;
/// - at its own address's limit (`perPeer`, `idlePerPeer`), that address's oldest, once it has
///   waited `grace` without a request (`nil`: never): silent connections from an address cannot
///   lock out a client from the same address that sends (a NAT, a test runner's 127.0.0.1), and
///   a pool whose connections are still in their handshake is refused in words, not churned.
///
/// Below half the total, a pool opening all its connections before it sends on any (h2load
/// -c 200) is not held to `idlePerPeer`: nobody else is short of connections yet.
///
/// ```
///   peer A ████████████████ 256 ── its 257th: its oldest idle one (░) past the grace is
///                                  evicted for it; none: "256 connections from A, the
///                                  per-peer limit"
///   peer B ░░░░░░░░ 64 idle ──────  past half the total, its 65th idle: the same, or "64
///                                   connections from B that sent no authenticated request, …"
///   peer C ███ 3
///   total  ████████████████████ 1024 ── a 1025th: the oldest idle one is evicted for it;
///                                       none idle: "1024 connections, its limit"
/// ```
///
/// A connection stops being idle at its first request whose provider proved who it is (APNs's
/// rule 4, `SinkConnection.providerAuthenticated()`; with auth off, its first well-formed request): a
/// peer that cannot keeps its connections idle, and evictable, however many requests it sends.
///
/// A state machine over connection identities (`ID`) and the uptime clock's nanoseconds: the
/// sink keys it by channel.
package struct ConnectionAdmission<ID: Hashable & Sendable>: Sendable {
    /// Which limit turned a connection away, or had one evicted.
    package enum Limit: Sendable, Hashable {
        case total
        case perPeer
        case idlePerPeer
    }

    /// A connection that sent no request, closed to make room for a new one at `limit`.
    package struct Eviction: Sendable, Hashable {
        package var id: ID
        package var peer: String
        package var limit: Limit
    }

    /// What becomes of a new connection.
    package enum Decision: Sendable, Hashable {
        /// Served; `evicting`, when at a limit, is the connection to be closed for it. That
        /// one no longer counts.
        case admitted(evicting: Eviction?)
        /// Refused at `Limit`; not counted.
        case refused(Limit)
    }

    /// One address's connections.
    private struct Peer: Sendable {
        var open = 0
        /// Those of them that have sent no request.
        var idle = 0
        /// Those, oldest first (with stale entries).
        var idleOrder = IdleOrder<ID>()
    }

    /// A connection's address, and while it has sent no request, its admission (a sequence
    /// number: its place in the idle orders) and when it came (uptime nanoseconds).
    private struct Entry: Sendable {
        var peer: String
        var idleSince: (admission: UInt64, at: UInt64)?
    }

    package let total: Int
    package let perPeer: Int
    package let idlePerPeer: Int
    /// How long a connection may wait for its first request before a newcomer from its own
    /// address, at that address's limit, may have it evicted; `nil`: never.
    package let grace: Duration?
    private let graceNanoseconds: UInt64?
    /// Connections open now, in all.
    package private(set) var open = 0
    private var byPeer: [String: Peer] = [:]
    private var connections: [ID: Entry] = [:]
    /// Every idle connection, oldest first (with stale entries).
    private var idleOrder = IdleOrder<ID>()
    private var idleNow = 0
    private var admissions: UInt64 = 0

    /// The per-peer limits, given or by default (`fanout sink`'s and `fanout sink --service
    /// fcm`'s): one address may hold a quarter of `defaultTotal`, the total the open-file limit
    /// allows, and a quarter of that idle; an idle limit follows a per-peer one given.
    package static func peerLimits(
        perPeer: Int?,
        idlePerPeer: Int?,
        defaultTotal: Int
    ) -> (
        perPeer: Int, idlePerPeer: Int
    ) {
        let perPeer = perPeer ?? max(1, defaultTotal / 4)
        return (perPeer, idlePerPeer ?? max(1, perPeer / 4))
    }

    /// The grace by default: a provider's pool sends on a connection within a round trip of
    /// its SETTINGS; a second is a thousand loopback round trips and ten of a far continent.
    package static var defaultGrace: Duration { .seconds(1) }

    package init(total: Int, perPeer: Int, idlePerPeer: Int, grace: Duration? = Self.defaultGrace) {
        self.total = total
        self.perPeer = perPeer
        self.idlePerPeer = idlePerPeer
        self.grace = grace
        graceNanoseconds = grace.map { UInt64(max($0.wholeNanoseconds, 0)) }
    }

    /// Decides on a new connection `id` from `peer` (its address, without the port), arriving
    /// `now` (uptime nanoseconds): counted in as idle (it has sent no request yet) unless
    /// refused.
    package mutating func admit(_ id: ID, peer: String, now: UInt64) -> Decision {
        let full = open >= total
        if full && idleNow == 0 { return .refused(.total) }
        var eviction: Eviction?
        if let limit = limitMet(by: peer) {
            guard let graceNanoseconds, now >= graceNanoseconds,
                let victim = oldestIdle(of: peer, cameBy: now - graceNanoseconds)
            else {
                return .refused(limit)
            }
            eviction = Eviction(id: victim, peer: peer, limit: limit)
        } else if full, let victim = oldestIdle() {
            eviction = Eviction(id: victim.id, peer: victim.peer, limit: .total)
        }
        if let eviction { closed(eviction.id) }
        admissions += 1
        open += 1
        connections[id] = Entry(peer: peer, idleSince: (admissions, now))
        idleOrder.append(id, admissions)
        idleNow += 1
        byPeer[peer, default: Peer()].open += 1
        byPeer[peer, default: Peer()].idle += 1
        byPeer[peer, default: Peer()].idleOrder.append(id, admissions)
        return .admitted(evicting: eviction)
    }

    /// The limit of its own a new connection from `peer` would pass.
    private func limitMet(by peer: String) -> Limit? {
        guard let fromPeer = byPeer[peer] else { return nil }
        if fromPeer.open >= perPeer { return .perPeer }
        if fromPeer.idle >= idlePerPeer && 2 * open >= total { return .idlePerPeer }
        return nil
    }

    /// Connection `id` sent its first request: it is no longer idle (never evicted, not
    /// counted against `idlePerPeer`).
    package mutating func requestArrived(_ id: ID) {
        guard let entry = connections[id], entry.idleSince != nil else { return }
        connections[id]?.idleSince = nil
        byPeer[entry.peer]?.idle -= 1
        idleNow -= 1
        compactIfStale(entry.peer)
    }

    /// Connection `id` closed (or was evicted); one not counted is ignored.
    package mutating func closed(_ id: ID) {
        guard let entry = connections.removeValue(forKey: id) else { return }
        open -= 1
        if entry.idleSince != nil {
            idleNow -= 1
            byPeer[entry.peer]?.idle -= 1
        }
        if let fromPeer = byPeer[entry.peer], fromPeer.open > 1 {
            byPeer[entry.peer]?.open -= 1
        } else {
            byPeer[entry.peer] = nil
        }
        compactIfStale(entry.peer)
    }

    /// Connections open now from `peer`, and those of them that have sent no request.
    package func count(from peer: String) -> Int { byPeer[peer]?.open ?? 0 }
    package func idleCount(from peer: String) -> Int { byPeer[peer]?.idle ?? 0 }
    /// Connections open now that have sent no request.
    package var idle: Int { idleNow }
    /// Entries in the idle orders' storage, those eviction has passed and stale ones included
    /// (for tests: they stay small).
    package var idleQueueLength: Int { idleOrder.storage }
    package func idleQueueLength(of peer: String) -> Int { byPeer[peer]?.idleOrder.storage ?? 0 }

    /// The reason a connection from `peer` past `limit` is given (GOAWAY's debug data), which
    /// the sender prints after "the sink refused the connection: ".
    package func reason(_ limit: Limit, peer: String) -> String {
        switch limit {
        case .total: "\(Self.prefix)\(total) connections, its limit"
        case .perPeer: "\(Self.prefix)\(perPeer) connections from \(peer), the per-peer limit"
        case .idlePerPeer:
            "\(Self.prefix)\(idlePerPeer) connections from \(peer) that sent no authenticated request, the per-peer idle limit"
        }
    }

    /// Why `eviction`'s connection was closed for one from `newcomer` (address and port), as the
    /// sink's log says it after "evicted <its address>: ".
    package func reason(_ eviction: Eviction, newcomer: String) -> String {
        let limit = reason(eviction.limit, peer: eviction.peer).dropFirst(Self.prefix.count)
        return switch eviction.limit {
        case .total: "it sent no authenticated request, and \(newcomer) came to a sink at its \(limit)"
        case .perPeer, .idlePerPeer:
            "it sent no authenticated request in \(grace.map(DurationNotation.format) ?? "its life"), and \(newcomer) came at \(limit)"
        }
    }

    /// How a refusal's debug data starts: a client that knows it (`EndpointFailure`) says the
    /// sink refused it; any other reads it as it is.
    package static var prefix: String { "fanout sink: " }

    /// The idle connection admitted longest ago; `nil` when none is.
    private mutating func oldestIdle() -> (id: ID, peer: String)? {
        let connections = connections
        let oldest = idleOrder.popOldest { id, admission in connections[id]?.idleSince?.admission == admission }
        return oldest.flatMap { id in connections[id].map { (id, $0.peer) } }
    }

    /// `peer`'s idle connection admitted longest ago, if it came at or before `since`; `nil`
    /// when none did.
    private mutating func oldestIdle(of peer: String, cameBy since: UInt64) -> ID? {
        let connections = connections
        guard
            let oldest = byPeer[peer]?.idleOrder.oldest(where: { id, admission in
                connections[id]?.idleSince?.admission == admission
            }),
            let came = connections[oldest]?.idleSince?.at, came <= since
        else { return nil }
        return oldest
    }

    /// Keeps the idle orders, the sink's and `peer`'s, within a few times their idle connections.
    private mutating func compactIfStale(_ peer: String) {
        let connections = connections
        let isLive = { (id: ID, admission: UInt64) in connections[id]?.idleSince?.admission == admission }
        idleOrder.compact(live: idleNow, where: isLive)
        if let idle = byPeer[peer]?.idle { byPeer[peer]?.idleOrder.compact(live: idle, where: isLive) }
    }
}

/// Connections that had sent no request when admitted, oldest first, from `head` on: an entry
/// whose connection has since sent a request or closed is stale (its admission number no longer
/// matches) and is skipped, and dropped once stale ones would be half.
package struct IdleOrder<ID: Hashable & Sendable>: Sendable {
    private var entries: [(id: ID, admission: UInt64)] = []
    private var head = 0

    /// Entries held, those passed and stale ones included.
    package var storage: Int { entries.count }

    package mutating func append(_ id: ID, _ admission: UInt64) {
        entries.append((id, admission))
    }

    /// The oldest live entry's connection, left in place; stale ones before it are passed.
    package mutating func oldest(where isLive: (ID, UInt64) -> Bool) -> ID? {
        while head < entries.count {
            let entry = entries[head]
            if isLive(entry.id, entry.admission) { return entry.id }
            head += 1
        }
        return nil
    }

    /// The oldest live entry's connection, passed.
    package mutating func popOldest(where isLive: (ID, UInt64) -> Bool) -> ID? {
        guard let id = oldest(where: isLive) else { return nil }
        head += 1
        return id
    }

    /// Drops the entries passed once they are half of the storage, and stale ones once they
    /// would be half of the rest (each at least 64), so the storage stays within about four
    /// times the `live` entries whatever comes, goes or is evicted.
    package mutating func compact(live: Int, where isLive: (ID, UInt64) -> Bool) {
        if head >= 64 && 2 * head >= entries.count {
            entries.removeFirst(head)
            head = 0
        }
        let held = entries.count - head
        guard held >= 64, held > 2 * live else { return }
        entries = entries[head...].filter { isLive($0.id, $0.admission) }
        head = 0
    }
}
