/// What happened to one notification behind APNs, and when (the model's clock).
package struct DeliveryEvent: Equatable {
    package enum Kind: UInt8, CaseIterable {
        case received, delivered, deliveredFromStorage, storedOffline, storedPower
        case discardedUnregistered, discardedUnregisteredFromStorage, discardedDisabled
        case discardedDisabledFromStorage, discardedExpired, discardedReplaced, forgotten

        /// Apple's Console name (ours for `discardedReplaced` and `forgotten`).
        package var name: String {
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

    package var kind: Kind
    package var time: UInt64
}

/// The histories of the most recent notifications, by apns-id, in a ring of `capacity` records
/// allocated once: a notification's record is written when APNs accepts it and added to when it
/// is stored and when it is delivered or discarded, until newer ones overwrite it. At most three
/// events a notification: received, stored, and what became of it.
///
/// ```
///   record (80 bytes): id (36, the apns-id's text as answered) · token hash (8) · 3 times (24) · 3 kinds · count
///   ring:  [ r0 | r1 | … | r(capacity−1) ]   next ─► overwrites the oldest
/// ```
/// The id is kept as text, copied, not parsed: parsing it took 5% of the sink's time under
/// h2load with the fleet on (perf, 2026-11-26); a lookup compares it ignoring case.
package struct DeliveryHistory: ~Copyable {
    struct Record {
        var id: (UInt64, UInt64, UInt64, UInt64, UInt32) = (0, 0, 0, 0, 0)
        var token: UInt64 = 0
        var times: (UInt64, UInt64, UInt64) = (0, 0, 0)
        var kinds: (UInt8, UInt8, UInt8) = (0, 0, 0)
        var count: UInt8 = 0
    }

    /// An apns-id's length: `8-4-4-4-12` hex digits.
    package static let idLength = 36

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

    /// Starts the record of the notification answered with apns-id `id` (36 bytes) for `token`;
    /// returns its place for `add`.
    mutating func start(id: UnsafeRawBufferPointer, token: UInt64, _ event: DeliveryEvent) -> Int {
        let place = next
        next = next + 1 == capacity ? 0 : next + 1
        let record = records + place
        record.pointee.token = token
        record.pointee.count = 0
        withUnsafeMutableBytes(of: &record.pointee.id) { $0.copyMemory(from: id) }
        add(event, at: place, token: token)
        return place
    }

    /// Adds `event` to the record at `place`, if it is still `token`'s and has room.
    mutating func add(_ event: DeliveryEvent, at place: Int, token: UInt64) {
        guard place >= 0 && place < capacity else { return }
        let record = records + place
        guard record.pointee.token == token else { return }
        switch record.pointee.count {
        case 0: (record.pointee.times.0, record.pointee.kinds.0) = (event.time, event.kind.rawValue)
        case 1: (record.pointee.times.1, record.pointee.kinds.1) = (event.time, event.kind.rawValue)
        case 2: (record.pointee.times.2, record.pointee.kinds.2) = (event.time, event.kind.rawValue)
        default: return
        }
        record.pointee.count += 1
    }

    /// The apns-id of the record at `place`, if it is still `token`'s.
    func id(at place: Int, token: UInt64) -> String? {
        guard place >= 0 && place < capacity, records[place].token == token, records[place].count > 0 else {
            return nil
        }
        var record = records[place]
        return withUnsafeBytes(of: &record.id) { String(decoding: $0.prefix(Self.idLength), as: UTF8.self) }
    }

    /// The events of the notification whose apns-id is `id` (either case), if it is among the
    /// recent ones.
    func events(of id: UnsafeRawBufferPointer) -> [DeliveryEvent]? {
        guard id.count == Self.idLength else { return nil }
        // From the newest back: an id sent twice shows its latest notification.
        for step in 1...capacity {
            var record = records[(next - step + capacity) % capacity]
            guard record.count > 0 else { continue }
            let same = withUnsafeBytes(of: &record.id) { kept in
                (0..<Self.idLength).allSatisfy { kept[$0] | 0x20 == id[$0] | 0x20 }
            }
            guard same else { continue }
            let all = [
                (record.times.0, record.kinds.0), (record.times.1, record.kinds.1), (record.times.2, record.kinds.2),
            ]
            return all.prefix(Int(record.count)).map { DeliveryEvent(kind: Kind(rawValue: $0.1)!, time: $0.0) }
        }
        return nil
    }

    typealias Kind = DeliveryEvent.Kind
}
