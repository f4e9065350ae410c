import FanoutPush
import FanoutScenarioTerms

/// What a device does that reaches the backend, waiting for its time (a fleet's, per shard).
package enum ReturnEventKind: UInt8, Sendable, CaseIterable {
    /// The service extension downloads the notification's media at delivery.
    case media
    /// The device opens the notification: its action's request, then the app's launch fetches.
    case open
    /// A background action (the category file's): its one request, the app not opened.
    case background
}

/// An event in the heap: when, and where its record is.
package struct ReturnEvent: DueEntry {
    package var due: UInt64
    var slot: UInt32
}

/// One event as the return engine reads it, its bytes valid only inside `ReturnEvents.takeDue`.
package struct ReturnEventView {
    package var kind: ReturnEventKind
    package var due: UInt64
    /// When the device got the notification (uptime nanoseconds).
    package var deliveredAt: UInt64
    /// The action, an index of `EngagementSettings.actions` (`nil`: the default action).
    package var action: Int?
    /// The device token as the provider sent it.
    package var token: UnsafeRawBufferPointer
    /// The apns-id the service answered.
    package var id: UnsafeRawBufferPointer
    /// The path (and query) of the URL the payload gave the media or the action, as the JSON
    /// wrote it (`\/` for a slash, maybe), `nil`: none given.
    package var path: UnsafeRawBufferPointer?

    package init(
        kind: ReturnEventKind,
        due: UInt64,
        deliveredAt: UInt64,
        action: Int?,
        token: UnsafeRawBufferPointer,
        id: UnsafeRawBufferPointer,
        path: UnsafeRawBufferPointer?
    ) {
        self.kind = kind
        self.due = due
        self.deliveredAt = deliveredAt
        self.action = action
        self.token = token
        self.id = id
        self.path = path
    }
}

/// The return events a fleet's shard holds until they are due: a heap of (due, slot) over
/// records kept in slots that are reused, the token and apns-id texts of each in one byte
/// array (`textStride` a slot), and the paths the payloads named, each kept once. Holding an
/// event allocates nothing once the arrays have grown to the most events waiting at once: the
/// memory is what is due (`bytesPerEvent` an event), never what was sent.
///
/// A notification stored for a device that cannot take it yet has its events decided when it
/// is stored and parked (`park`): in slots, out of the heap, chained from the first; its
/// delivery puts them in the heap (`release`), its discard frees them (`drop`).
///
/// ```
///   heap [(due, slot)…] ─► records[slot]: kind, action, delivery time, path number, chain link
///                          texts[slot × stride + (0 ..< tokenBytes)]: the token
///                          texts[slot × stride + (tokenBytes ..< tokenBytes + 36)]: the apns-id
///   paths: bytes[…] + (start, count) a path number, found again by its hash
/// ```
package struct ReturnEvents {
    struct Record {
        /// When the device got the notification; while the event is parked (its notification
        /// stored), its delay from that delivery instead (the stride leaves no room for both).
        var deliveredAt: UInt64 = 0
        /// The next event parked for the same notification (`noSlot`: none).
        var next = ReturnEvents.noSlot
        var kind = ReturnEventKind.media
        var action: UInt8 = Self.noAction
        /// The action drawn that the payload did not carry (taken as the default), for counting
        /// at a parked event's release.
        var notCarried: UInt8 = Self.noAction
        var tokenLength: UInt16 = 0
        var idLength: UInt8 = 0
        /// The token was longer than `tokenBytes`: its first `tokenBytes` are sent.
        var tokenCut = false
        var path: UInt16 = Self.noPath

        static let noAction: UInt8 = .max
        static let noPath: UInt16 = .max
    }

    /// No slot: the end of a chain of parked events, or no events parked.
    package static let noSlot = UInt32.max

    /// Bytes of a token kept for its event: APNs' 64 hex digits; FCM's registration tokens
    /// (about 163 characters; Google documents no length, those seen are 140 to 200) 200.
    /// Longer tokens are cut and counted (`tokensCut`).
    package static func tokenBytes(for service: PushService) -> Int {
        switch service {
        case .apns: 64
        case .fcm: 200
        }
    }
    /// Bytes of an event's apns-id (36: a UUID's text).
    static let idBytes = 36
    /// About what one waiting event takes: its heap entry, record, texts and free-list number.
    package static func bytesPerEvent(tokenBytes: Int) -> Int {
        MemoryLayout<ReturnEvent>.stride + MemoryLayout<Record>.stride + tokenBytes + idBytes + 4
    }
    /// The most distinct paths kept; an event naming another is sent to its kind's default path
    /// and counted (`pathsNotKept`).
    package static let pathCapacity = 4096

    /// Bytes of a token kept for its event, and of a slot's texts.
    let tokenBytes: Int
    private let textStride: Int
    private var heap = DueHeap<ReturnEvent>()
    private var records: [Record] = []
    private var texts: [UInt8] = []
    private var free: [UInt32] = []
    private var pathBytes: [UInt8] = []
    private var pathRanges: [Range<Int>] = []
    private var pathNumbers: [UInt64: UInt16] = [:]
    /// Events whose payload named a path when `pathCapacity` were kept already.
    package private(set) var pathsNotKept = 0
    /// Events sent with a token longer than `tokenBytes`: its first `tokenBytes` went out.
    package private(set) var tokensCut = 0
    /// Events parked for stored notifications.
    package private(set) var parked = 0

    init(tokenBytes: Int = ReturnEvents.tokenBytes(for: .apns)) {
        self.tokenBytes = tokenBytes
        textStride = tokenBytes + Self.idBytes
    }

    /// Events waiting.
    package var count: Int { heap.count }
    /// When the earliest is due.
    package var earliest: UInt64? { heap.earliest }
    /// The latest due time of any event held so far (those sent too): a bound on the wave's end.
    package private(set) var latestDue: UInt64 = 0

    /// Holds an event until `due`; `path` is the path the payload named, as written there (JSON's
    /// `\/` unread: the request's writer reads it).
    mutating func add(
        _ kind: ReturnEventKind,
        due: UInt64,
        deliveredAt: UInt64,
        action: Int?,
        token: UnsafeRawBufferPointer,
        id: UnsafeRawBufferPointer?,
        path: UnsafeRawBufferPointer?
    ) {
        let slot = fill(
            Record(deliveredAt: deliveredAt, kind: kind),
            action: action,
            notCarried: nil,
            token: token,
            id: id,
            path: path
        )
        latestDue = max(latestDue, due)
        heap.push(ReturnEvent(due: due, slot: slot))
    }

    /// Parks an event of a stored notification, `after` its delivery, onto the front of the chain
    /// that begins at `next` (`noSlot`: none); returns the chain's new first slot.
    mutating func park(
        _ kind: ReturnEventKind,
        after: UInt64,
        action: Int?,
        notCarried: Int?,
        token: UnsafeRawBufferPointer,
        id: UnsafeRawBufferPointer?,
        path: UnsafeRawBufferPointer?,
        onto next: UInt32
    ) -> UInt32 {
        parked += 1
        return fill(
            Record(deliveredAt: after, next: next, kind: kind),
            action: action,
            notCarried: notCarried,
            token: token,
            id: id,
            path: path
        )
    }

    /// The first event parked in `chain`, its notification delivered at `deliveredAt`: held
    /// until its time, `chain` moved on to the next, and what it is told (its kind, action, and
    /// the action it drew but was not carried); `nil` at the chain's end.
    mutating func release(
        _ chain: inout UInt32,
        deliveredAt: UInt64
    ) -> (kind: ReturnEventKind, action: Int?, notCarried: Int?)? {
        guard chain != Self.noSlot else { return nil }
        let slot = chain
        var record = records[Int(slot)]
        let due = deliveredAt &+ record.deliveredAt
        chain = record.next
        record.deliveredAt = deliveredAt
        record.next = Self.noSlot
        records[Int(slot)] = record
        parked -= 1
        latestDue = max(latestDue, due)
        heap.push(ReturnEvent(due: due, slot: slot))
        return (record.kind, Self.index(record.action), Self.index(record.notCarried))
    }

    /// Frees the events parked from `first` on: their notification was not delivered.
    mutating func drop(_ first: UInt32) {
        var slot = first
        while slot != Self.noSlot {
            let next = records[Int(slot)].next
            records[Int(slot)].next = Self.noSlot
            free.append(slot)
            parked -= 1
            slot = next
        }
    }

    private static func index(_ action: UInt8) -> Int? { action == Record.noAction ? nil : Int(action) }

    /// Writes `record` and its texts into a free slot (a new one when none is free).
    private mutating func fill(
        _ record: Record,
        action: Int?,
        notCarried: Int?,
        token: UnsafeRawBufferPointer,
        id: UnsafeRawBufferPointer?,
        path: UnsafeRawBufferPointer?
    ) -> UInt32 {
        let slot: Int
        if let reused = free.popLast() {
            slot = Int(reused)
        } else {
            slot = records.count
            records.append(Record())
            texts.append(contentsOf: repeatElement(0, count: textStride))
        }
        var record = record
        record.action = action.map { UInt8($0) } ?? Record.noAction
        record.notCarried = notCarried.map { UInt8($0) } ?? Record.noAction
        record.tokenCut = token.count > tokenBytes
        record.tokenLength = UInt16(min(token.count, tokenBytes))
        record.idLength = UInt8(min(id?.count ?? 0, Self.idBytes))
        let start = slot * textStride
        let tokenBytes = tokenBytes
        texts.withUnsafeMutableBytes { texts in
            if record.tokenLength > 0 {
                (texts.baseAddress! + start).copyMemory(from: token.baseAddress!, byteCount: Int(record.tokenLength))
            }
            if let id, record.idLength > 0 {
                (texts.baseAddress! + start + tokenBytes).copyMemory(
                    from: id.baseAddress!,
                    byteCount: Int(record.idLength)
                )
            }
        }
        if let path { record.path = number(of: path) }
        records[slot] = record
        return UInt32(slot)
    }

    /// The number of `path` among those kept, keeping it when new (`Record.noPath`: no room).
    private mutating func number(of path: UnsafeRawBufferPointer) -> UInt16 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in path {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3
        }
        if let number = pathNumbers[hash], pathBytes[pathRanges[Int(number)]].elementsEqual(path) { return number }
        guard pathRanges.count < Self.pathCapacity else {
            pathsNotKept += 1
            return Record.noPath
        }
        let start = pathBytes.count
        pathBytes.append(contentsOf: path)
        let number = UInt16(pathRanges.count)
        pathRanges.append(start..<pathBytes.count)
        if pathNumbers[hash] == nil { pathNumbers[hash] = number }
        return number
    }

    /// Hands each event due at `now` to `body`, earliest first, at most `limit`; returns how many.
    mutating func takeDue(now: UInt64, limit: Int, _ body: (ReturnEventView) -> Void) -> Int {
        var taken = 0
        let (tokenBytes, textStride) = (tokenBytes, textStride)
        while taken < limit, let event = heap.popDue(now: now) {
            let slot = Int(event.slot)
            let record = records[slot]
            texts.withUnsafeBytes { texts in
                pathBytes.withUnsafeBytes { paths in
                    let start = slot * textStride
                    let path =
                        record.path == Record.noPath
                        ? nil : UnsafeRawBufferPointer(rebasing: paths[pathRanges[Int(record.path)]])
                    body(
                        ReturnEventView(
                            kind: record.kind,
                            due: event.due,
                            deliveredAt: record.deliveredAt,
                            action: Self.index(record.action),
                            token: UnsafeRawBufferPointer(rebasing: texts[start..<(start + Int(record.tokenLength))]),
                            id: UnsafeRawBufferPointer(
                                rebasing: texts[(start + tokenBytes)..<(start + tokenBytes + Int(record.idLength))]
                            ),
                            path: path
                        )
                    )
                }
            }
            if record.tokenCut { tokensCut += 1 }
            free.append(event.slot)
            taken += 1
        }
        return taken
    }
}
