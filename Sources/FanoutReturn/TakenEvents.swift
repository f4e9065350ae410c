import FanoutDevices

/// The events one tick took from the fleet's shards, copied out while each shard's lock is
/// held — the token, apns-id and path bytes into one array, the rest into records — so that
/// the requests are made after the lock is let go. Both arrays keep their capacity from tick to
/// tick: copying allocates nothing once they have grown to a tick's most.
struct TakenEvents {
    private struct Record {
        var kind: ReturnEventKind
        var due: UInt64
        var deliveredAt: UInt64
        var action: Int?
        var start: Int
        var token: Int
        var id: Int
        var path: Int?
    }

    private var records: [Record] = []
    private var bytes: [UInt8] = []

    mutating func removeAll(keepingCapacity: Bool) {
        records.removeAll(keepingCapacity: keepingCapacity)
        bytes.removeAll(keepingCapacity: keepingCapacity)
    }

    mutating func append(_ event: ReturnEventView) {
        let start = bytes.count
        bytes.append(contentsOf: event.token)
        bytes.append(contentsOf: event.id)
        if let path = event.path { bytes.append(contentsOf: path) }
        records.append(
            Record(
                kind: event.kind,
                due: event.due,
                deliveredAt: event.deliveredAt,
                action: event.action,
                start: start,
                token: event.token.count,
                id: event.id.count,
                path: event.path?.count
            )
        )
    }

    /// Each event as the fleet gave it, its bytes valid inside `body` only.
    func visit(_ body: (ReturnEventView) -> Void) {
        bytes.withUnsafeBytes { bytes in
            for record in records {
                let token = record.start..<(record.start + record.token)
                let id = token.upperBound..<(token.upperBound + record.id)
                let path = record.path.map { id.upperBound..<(id.upperBound + $0) }
                body(
                    ReturnEventView(
                        kind: record.kind,
                        due: record.due,
                        deliveredAt: record.deliveredAt,
                        action: record.action,
                        token: UnsafeRawBufferPointer(rebasing: bytes[token]),
                        id: UnsafeRawBufferPointer(rebasing: bytes[id]),
                        path: path.map { UnsafeRawBufferPointer(rebasing: bytes[$0]) }
                    )
                )
            }
        }
    }
}
