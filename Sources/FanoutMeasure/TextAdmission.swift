/// Who holds a `TextEndpoint`'s connections, and whom a newcomer evicts when they are all
/// taken. Nothing is refused: one address may hold at most its share (half the connections,
/// rounded up), and a newcomer past a limit closes the least recently active connection of the
/// address the limit is about. (Issue 61, review: 64 silent connections from one address kept
/// every scraper's `/stats` answered 503 for as long as they were renewed.)
///
/// ```
///   newcomer from A ──► A holds its share? ── yes ──► evict A's least recently active
///                            │ no
///                            ▼
///                      all connections held? ── yes ──► evict the least recently active of
///                            │ no                       the address holding the most
///                            ▼
///                         admitted
/// ```
/// "Active" is the connect and each answer: a scraper's kept-alive connection, answered a
/// moment ago, is the last to go; one that connected and sent nothing is the first. A text
/// endpoint's answer takes microseconds, so nothing worth keeping is cut mid-exchange.
struct TextAdmission {
    /// A connection, by the id its endpoint gave it.
    struct Holder: Equatable {
        var id: Int
        var address: String
        /// The admission's clock at its connect or its last answer.
        fileprivate var active: UInt64
    }

    /// What admitting a newcomer did.
    enum Outcome: Equatable {
        case admitted
        /// Admitted in place of `victim`, which the endpoint closes.
        case evicted(victim: Holder, Limit)
    }

    /// Which limit the newcomer met.
    enum Limit: Equatable {
        /// Its address held its share.
        case share
        /// Every connection was held; the victim's address held the most.
        case total
    }

    let maxConnections: Int
    let share: Int
    /// Each address's connections, least recently active first.
    private var holders: [String: [Holder]] = [:]
    private(set) var count = 0
    private var clock: UInt64 = 0

    init(maxConnections: Int) {
        self.maxConnections = max(1, maxConnections)
        share = Self.share(of: maxConnections)
    }

    /// What one address may hold of `maxConnections`: half, rounded up, at least 1.
    static func share(of maxConnections: Int) -> Int { (max(1, maxConnections) + 1) / 2 }

    /// Admits connection `id` from `address`, evicting one when a limit says so.
    mutating func admit(_ id: Int, from address: String) -> Outcome {
        var outcome = Outcome.admitted
        if holders[address, default: []].count >= share {
            outcome = .evicted(victim: holders[address]!.removeFirst(), .share)
            count -= 1
        } else if count >= maxConnections, let busiest = busiestAddress() {
            outcome = .evicted(victim: holders[busiest]!.removeFirst(), .total)
            count -= 1
            if holders[busiest]!.isEmpty { holders[busiest] = nil }
        }
        clock &+= 1
        holders[address, default: []].append(Holder(id: id, address: address, active: clock))
        count += 1
        return outcome
    }

    /// Connection `id` was answered: it is the most recently active of its address.
    mutating func answered(_ id: Int, from address: String) {
        guard let index = holders[address]?.firstIndex(where: { $0.id == id }) else { return }
        var holder = holders[address]!.remove(at: index)
        clock &+= 1
        holder.active = clock
        holders[address]!.append(holder)
    }

    /// Connection `id` closed (an evicted one was removed when it was chosen).
    mutating func closed(_ id: Int, from address: String) {
        guard let index = holders[address]?.firstIndex(where: { $0.id == id }) else { return }
        holders[address]!.remove(at: index)
        count -= 1
        if holders[address]!.isEmpty { holders[address] = nil }
    }

    /// Connections `address` holds now.
    func held(by address: String) -> Int { holders[address]?.count ?? 0 }

    /// The address holding the most connections; among equals, the one whose least recently
    /// active connection is the oldest.
    private func busiestAddress() -> String? {
        holders.min { first, second in
            first.value.count != second.value.count
                ? first.value.count > second.value.count
                : first.value[0].active < second.value[0].active
        }?.key
    }
}
