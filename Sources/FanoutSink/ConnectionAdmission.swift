/// Which connections the sink serves: at most `total` open at once, and at most `perPeer` of
/// them from one address, so that one client (a runaway pool, a hostile neighbour) cannot take
/// every connection of a sink others share. A connection past either limit is refused in words
/// (`HTTP2Refusal`), not closed in silence.
///
/// ```
///   peer A ████████████████ 256 ── its 257th: "256 connections from A, the per-peer limit"
///   peer B ███ 3
///   total  ████████████████████ 1024 ── any 1025th: "1024 connections, the sink's limit"
/// ```
struct ConnectionAdmission: Sendable {
    /// Which limit turned a connection away.
    enum Limit: Sendable, Hashable {
        case total
        case perPeer
    }

    let total: Int
    let perPeer: Int
    /// Connections open now, in all and by peer address.
    private(set) var open = 0
    private var byPeer: [String: Int] = [:]

    init(total: Int, perPeer: Int) {
        self.total = total
        self.perPeer = perPeer
    }

    /// Counts a new connection from `peer` (its address, without the port) in, or names the
    /// limit it is past (then it is not counted).
    mutating func admit(peer: String) -> Limit? {
        if open >= total { return .total }
        let fromPeer = byPeer[peer, default: 0]
        if fromPeer >= perPeer { return .perPeer }
        open += 1
        byPeer[peer] = fromPeer + 1
        return nil
    }

    /// Counts an admitted connection from `peer` out.
    mutating func closed(peer: String) {
        open -= 1
        guard let fromPeer = byPeer[peer] else { return }
        byPeer[peer] = fromPeer > 1 ? fromPeer - 1 : nil
    }

    /// Connections open now from `peer`.
    func count(from peer: String) -> Int { byPeer[peer, default: 0] }

    /// The reason a connection from `peer` past `limit` is given (GOAWAY's debug data), which
    /// the sender prints after "the sink refused the connection: ".
    func reason(_ limit: Limit, peer: String) -> String {
        switch limit {
        case .total: "\(Self.prefix)\(total) connections, its limit"
        case .perPeer: "\(Self.prefix)\(perPeer) connections from \(peer), the per-peer limit"
        }
    }

    /// How a refusal's debug data starts: a client that knows it (`EndpointFailure`) says the
    /// sink refused it; any other reads it as it is.
    static let prefix = "fanout sink: "
}
