/// What happened to one notification behind APNs, and when (the model's clock).
struct DeliveryEvent: Equatable {
    enum Kind: UInt8, CaseIterable {
        case received, delivered, deliveredFromStorage, storedOffline, storedPower
        case discardedUnregistered, discardedUnregisteredFromStorage, discardedDisabled
        case discardedDisabledFromStorage, discardedExpired, discardedReplaced, forgotten

        /// Apple's Console name (ours for `discardedReplaced` and `forgotten`).
        var name: String {
            switch self {
            case .received: "Received by APNs"
            case .delivered: "Delivered to Device"
            case .deliveredFromStorage: "Delivered to Device (From Storage)"
            case .storedOffline: "Stored – Device Offline"
            case .storedPower: "Stored – Power Considerations"
            case .discardedUnregistered: "Discarded – Token Unregistered"
            case .discardedUnregisteredFromStorage: "Discarded – Token Unregistered (From Storage)"
            case .discardedDisabled: "Discarded – Disabled"
            case .discardedDisabledFromStorage: "Discarded – Disabled (From Storage)"
            case .discardedExpired: "Discarded – Expired"
            case .discardedReplaced: "Discarded – Replaced by a newer notification (Fanout's)"
            case .forgotten: "Forgotten: the sink's store was full (Fanout's)"
            }
        }
    }

    var kind: Kind
    var time: UInt64
}

/// The histories of the most recent notifications, by apns-id, in a ring of `capacity` records
/// allocated once: a notification's record is written when APNs accepts it and added to when it
/// is stored and when it is delivered or discarded, until newer ones overwrite it. At most three
/// events a notification: received, stored, and what became of it.
///
/// ```
///   record (56 bytes): id (16, the apns-id's 128 bits) · token hash (8) · 3 times (24) · 3 kinds · count
///   ring:  [ r0 | r1 | … | r(capacity−1) ]   next ─► overwrites the oldest
/// ```
struct DeliveryHistory: ~Copyable {
    struct Record {
        var id: (UInt64, UInt64) = (0, 0)
        var token: UInt64 = 0
        var times: (UInt64, UInt64, UInt64) = (0, 0, 0)
        var kinds: (UInt8, UInt8, UInt8) = (0, 0, 0)
        var count: UInt8 = 0
    }

    private let records: UnsafeMutablePointer<Record>
    let capacity: Int
    private var next = 0

    init(capacity: Int) {
        self.capacity = max(1, capacity)
        records = .allocate(capacity: self.capacity)
        records.initialize(repeating: Record(), count: self.capacity)
    }

    deinit {
        records.deinitialize(count: capacity)
        records.deallocate()
    }

    /// Starts the record of notification `id` for `token`; returns its place for `add`.
    mutating func start(id: (UInt64, UInt64), token: UInt64, _ event: DeliveryEvent) -> Int {
        let place = next
        next = (next + 1) % capacity
        records[place] = Record(id: id, token: token)
        add(event, at: place, token: token)
        return place
    }

    /// Adds `event` to the record at `place`, if it is still `token`'s and has room.
    mutating func add(_ event: DeliveryEvent, at place: Int, token: UInt64) {
        guard place >= 0 && place < capacity, records[place].token == token else { return }
        switch records[place].count {
        case 0: (records[place].times.0, records[place].kinds.0) = (event.time, event.kind.rawValue)
        case 1: (records[place].times.1, records[place].kinds.1) = (event.time, event.kind.rawValue)
        case 2: (records[place].times.2, records[place].kinds.2) = (event.time, event.kind.rawValue)
        default: return
        }
        records[place].count += 1
    }

    /// The events of notification `id`, oldest first, if it is among the recent ones.
    func events(of id: (UInt64, UInt64)) -> [DeliveryEvent]? {
        // From the newest back: an id sent twice shows its latest notification.
        for step in 1...capacity {
            let record = records[(next - step + capacity) % capacity]
            guard record.id == id && record.count > 0 else { continue }
            let all = [
                (record.times.0, record.kinds.0), (record.times.1, record.kinds.1), (record.times.2, record.kinds.2),
            ]
            return all.prefix(Int(record.count)).map { DeliveryEvent(kind: Kind(rawValue: $0.1)!, time: $0.0) }
        }
        return nil
    }

    typealias Kind = DeliveryEvent.Kind

    /// An apns-id's 128 bits from its 36-character text (`8-4-4-4-12` hex, either case); `nil`
    /// for anything else. (0, 0) is no id: a record of it is never found.
    static func id(_ text: UnsafeRawBufferPointer) -> (UInt64, UInt64)? {
        guard text.count == 36 else { return nil }
        var high: UInt64 = 0
        var low: UInt64 = 0
        var digits = 0
        for (index, byte) in text.enumerated() {
            if index == 8 || index == 13 || index == 18 || index == 23 {
                guard byte == UInt8(ascii: "-") else { return nil }
                continue
            }
            let value: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): value = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            if digits < 16 { high = high << 4 | UInt64(value) } else { low = low << 4 | UInt64(value) }
            digits += 1
        }
        return (high, low)
    }
}
