/// Which connections the sink serves: at most `total` open at once, at most `perPeer` of them
/// from one address, and, once half the total is open, at most `idlePerPeer` from one address
/// that have not sent a request yet, so that one client (a runaway pool, a hostile neighbour)
/// cannot take every connection of a sink others share. A connection past a limit is refused in
/// words (`HTTP2Refusal`), not closed in silence; at the total, the connection that has waited
/// longest without sending a request makes room instead (it is evicted: GOAWAY), so connections
/// that never send a request cannot lock clients that do out. Below half the total, a pool
/// opening all its connections before it sends on any (h2load -c 200) is not held to
/// `idlePerPeer`: nobody else is short of connections yet.
///
/// ```
///   peer A ████████████████ 256 ── its 257th: "256 connections from A, the per-peer limit"
///   peer B ░░░░░░░░ 64 idle ──────  past half the total, its 65th idle: "64 connections from B
///                                   that sent no authenticated request, …"
///   peer C ███ 3
///   total  ████████████████████ 1024 ── a 1025th: the oldest idle one (░) is evicted for it;
///                                       none idle: "1024 connections, its limit"
/// ```
///
/// A connection stops being idle at its first request whose provider proved who it is (APNs's
/// rule 4, `SinkConnection.providerAuthenticated()`; with auth off, its first well-formed request): a
/// peer that cannot keeps its connections idle, and evictable, however many requests it sends.
///
/// A state machine over connection identities (`ID`): the sink keys it by channel.
struct ConnectionAdmission<ID: Hashable & Sendable>: Sendable {
    /// Which limit turned a connection away.
    enum Limit: Sendable, Hashable {
        case total
        case perPeer
        case idlePerPeer
    }

    /// What becomes of a new connection.
    enum Decision: Sendable, Hashable {
        /// Served; when the sink was at its total, `evicting` (a connection that has sent no
        /// request, the one that waited longest, and its peer) is to be closed for it. It no
        /// longer counts.
        case admitted(evicting: ID?, peer: String?)
        /// Refused at `Limit`; not counted.
        case refused(Limit)
    }

    let total: Int
    let perPeer: Int
    let idlePerPeer: Int
    /// Connections open now, in all.
    private(set) var open = 0
    /// Each peer's connections open, and how many of them have sent no request.
    private var byPeer: [String: (open: Int, idle: Int)] = [:]
    /// Each connection's peer and, while it has sent no request, the admission (a sequence
    /// number, not a time) that is its place in `idleQueue`.
    private var connections: [ID: (peer: String, idleSince: UInt64?)] = [:]
    /// Connections that had sent no request when admitted, oldest first, from `idleHead` on;
    /// an entry whose connection has since sent a request or closed is stale (its `since` no
    /// longer matches) and is skipped, and dropped when stale ones would be half.
    private var idleQueue: [(id: ID, since: UInt64)] = []
    private var idleHead = 0
    private var idleNow = 0
    private var admissions: UInt64 = 0

    init(total: Int, perPeer: Int, idlePerPeer: Int) {
        self.total = total
        self.perPeer = perPeer
        self.idlePerPeer = idlePerPeer
    }

    /// Decides on a new connection `id` from `peer` (its address, without the port): counted in
    /// as idle (it has sent no request yet) unless refused.
    mutating func admit(_ id: ID, peer: String) -> Decision {
        let full = open >= total
        if full && idleNow == 0 { return .refused(.total) }
        let fromPeer = byPeer[peer, default: (0, 0)]
        if fromPeer.open >= perPeer { return .refused(.perPeer) }
        if fromPeer.idle >= idlePerPeer && 2 * open >= total { return .refused(.idlePerPeer) }
        var evicted: (id: ID, peer: String)?
        if full {
            evicted = oldestIdle()
            if let evicted { closed(evicted.id) }
        }
        admissions += 1
        open += 1
        connections[id] = (peer, admissions)
        idleQueue.append((id, admissions))
        idleNow += 1
        byPeer[peer, default: (0, 0)].open += 1
        byPeer[peer, default: (0, 0)].idle += 1
        return .admitted(evicting: evicted?.id, peer: evicted?.peer)
    }

    /// Connection `id` sent its first request: it is no longer idle (never evicted, not
    /// counted against `idlePerPeer`).
    mutating func requestArrived(_ id: ID) {
        guard let entry = connections[id], entry.idleSince != nil else { return }
        connections[id] = (entry.peer, nil)
        byPeer[entry.peer]?.idle -= 1
        idleNow -= 1
        compactIfStale()
    }

    /// Connection `id` closed (or was evicted); one not counted is ignored.
    mutating func closed(_ id: ID) {
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
        compactIfStale()
    }

    /// Connections open now from `peer`, and those of them that have sent no request.
    func count(from peer: String) -> Int { byPeer[peer]?.open ?? 0 }
    func idleCount(from peer: String) -> Int { byPeer[peer]?.idle ?? 0 }
    /// Connections open now that have sent no request.
    var idle: Int { idleNow }
    /// Entries in the idle queue's storage, those eviction has passed and stale ones included
    /// (for tests: it stays small).
    var idleQueueLength: Int { idleQueue.count }

    /// The reason a connection from `peer` past `limit` is given (GOAWAY's debug data), which
    /// the sender prints after "the sink refused the connection: ".
    func reason(_ limit: Limit, peer: String) -> String {
        switch limit {
        case .total: "\(Self.prefix)\(total) connections, its limit"
        case .perPeer: "\(Self.prefix)\(perPeer) connections from \(peer), the per-peer limit"
        case .idlePerPeer:
            "\(Self.prefix)\(idlePerPeer) connections from \(peer) that sent no authenticated request, the per-peer idle limit"
        }
    }

    /// How a refusal's debug data starts: a client that knows it (`EndpointFailure`) says the
    /// sink refused it; any other reads it as it is.
    static var prefix: String { "fanout sink: " }

    /// The idle connection admitted longest ago (skipping stale entries); `nil` when none is.
    private mutating func oldestIdle() -> (id: ID, peer: String)? {
        while idleHead < idleQueue.count {
            let entry = idleQueue[idleHead]
            idleHead += 1
            if let connection = connections[entry.id], connection.idleSince == entry.since {
                return (entry.id, connection.peer)
            }
        }
        return nil
    }

    /// Drops the entries eviction has passed once they are half of the storage, and stale ones
    /// once they would be half of the rest (each at least 64), so the queue stays within about
    /// four times the idle connections whatever comes, goes or is evicted.
    private mutating func compactIfStale() {
        if idleHead >= 64 && 2 * idleHead >= idleQueue.count {
            idleQueue.removeFirst(idleHead)
            idleHead = 0
        }
        let entries = idleQueue.count - idleHead
        guard entries >= 64, entries > 2 * idleNow else { return }
        idleQueue = idleQueue[idleHead...].filter { entry in connections[entry.id]?.idleSince == entry.since }
        idleHead = 0
    }
}
