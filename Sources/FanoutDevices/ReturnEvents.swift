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
/// ```
///   heap [(due, slot)…] ─► records[slot]: kind, action, delivery time, path number
///                          texts[slot × 100 ..< +64]: the token   [+64 ..< +100]: the apns-id
///   paths: bytes[…] + (start, count) a path number, found again by its hash
/// ```
package struct ReturnEvents {
    struct Record {
        var deliveredAt: UInt64 = 0
        var kind = ReturnEventKind.media
        var action: UInt8 = Self.defaultAction
        var tokenLength: UInt8 = 0
        var idLength: UInt8 = 0
        var path: UInt16 = Self.noPath

        static let defaultAction: UInt8 = .max
        static let noPath: UInt16 = .max
    }

    /// Bytes of an event's texts: a token of up to 64 (APNs' 64 hex digits) and a 36-byte apns-id.
    static let tokenBytes = 64
    static let idBytes = 36
    static let textStride = tokenBytes + idBytes
    /// About what one waiting event takes: its heap entry, record, texts and free-list number.
    package static let bytesPerEvent = MemoryLayout<ReturnEvent>.stride + MemoryLayout<Record>.stride + textStride + 4
    /// The most distinct paths kept; an event naming another is sent to its kind's default path
    /// and counted (`pathsNotKept`).
    package static let pathCapacity = 4096

    private var heap = DueHeap<ReturnEvent>()
    private var records: [Record] = []
    private var texts: [UInt8] = []
    private var free: [UInt32] = []
    private var pathBytes: [UInt8] = []
    private var pathRanges: [Range<Int>] = []
    private var pathNumbers: [UInt64: UInt16] = [:]
    /// Events whose payload named a path when `pathCapacity` were kept already.
    package private(set) var pathsNotKept = 0
    /// Tokens longer than `tokenBytes`: their first 64 bytes are sent.
    package private(set) var tokensCut = 0

    init() {}

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
        let slot: Int
        if let reused = free.popLast() {
            slot = Int(reused)
        } else {
            slot = records.count
            records.append(Record())
            texts.append(contentsOf: repeatElement(0, count: Self.textStride))
        }
        var record = Record(deliveredAt: deliveredAt, kind: kind)
        record.action = action.map { UInt8($0) } ?? Record.defaultAction
        if token.count > Self.tokenBytes { tokensCut += 1 }
        record.tokenLength = UInt8(min(token.count, Self.tokenBytes))
        record.idLength = UInt8(min(id?.count ?? 0, Self.idBytes))
        let start = slot * Self.textStride
        texts.withUnsafeMutableBytes { texts in
            if record.tokenLength > 0 {
                (texts.baseAddress! + start).copyMemory(from: token.baseAddress!, byteCount: Int(record.tokenLength))
            }
            if let id, record.idLength > 0 {
                (texts.baseAddress! + start + Self.tokenBytes).copyMemory(
                    from: id.baseAddress!,
                    byteCount: Int(record.idLength)
                )
            }
        }
        if let path { record.path = number(of: path) }
        records[slot] = record
        latestDue = max(latestDue, due)
        heap.push(ReturnEvent(due: due, slot: UInt32(slot)))
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
        while taken < limit, let event = heap.popDue(now: now) {
            let slot = Int(event.slot)
            let record = records[slot]
            texts.withUnsafeBytes { texts in
                pathBytes.withUnsafeBytes { paths in
                    let start = slot * Self.textStride
                    let path =
                        record.path == Record.noPath
                        ? nil : UnsafeRawBufferPointer(rebasing: paths[pathRanges[Int(record.path)]])
                    body(
                        ReturnEventView(
                            kind: record.kind,
                            due: event.due,
                            deliveredAt: record.deliveredAt,
                            action: record.action == Record.defaultAction ? nil : Int(record.action),
                            token: UnsafeRawBufferPointer(rebasing: texts[start..<(start + Int(record.tokenLength))]),
                            id: UnsafeRawBufferPointer(
                                rebasing: texts[
                                    (start + Self.tokenBytes)..<(start + Self.tokenBytes + Int(record.idLength))
                                ]
                            ),
                            path: path
                        )
                    )
                }
            }
            free.append(event.slot)
            taken += 1
        }
        return taken
    }
}
