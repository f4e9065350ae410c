import FanoutAPNs
import FanoutHPACK
import FanoutHTTP2
import FanoutMeasure
import FanoutScenarioTerms
import NIOCore

/// What an answer says and how it goes into the connection's bytes: the apns-id (the request's,
/// echoed when it is a canonical UUID, else one made from the seed), a timed request's
/// `apns-unique-id` (when its answer was written and what the scenario held it: `TimedAPNsID`),
/// a 410's body dated by the clock, and the response itself. Reused for every answer: the ids
/// live in scratch storage and nothing is allocated per answer.
///
/// ```
///   request apns-id ─ canonical? ─ yes ─► echoed (a timed one's send time believed within 10 s)
///                                  └ no ─► made from the seed
///   answer ─► :status · apns-id · [apns-unique-id: written at, held] · [body: {"reason":…}]
/// ```
struct AnswerWriter {
    /// An answer to write: its stream, what it says, and what its lateness is timed by.
    struct Answer {
        var stream: UInt32
        var rejection: APNsReason?
        /// The notification's digest hash, counted when it is accepted.
        var digestHash: UInt64
        /// When it was due, and how long before its read it was sent (0: unknown).
        var due: UInt64
        var transit: UInt64 = 0
        /// What the scenario held it (a timed request learns it in `apns-unique-id`).
        var held: UInt64 = 0
        /// With the device fleet, a 410's: when APNs learnt the app was gone (0: now).
        var unregisteredSince: UInt64 = 0
    }

    private var ids: APNsIDGenerator
    /// The apns-id of the answer being written, and a timed request's `apns-unique-id`.
    private let idStorage = ScratchBytes(count: 36)
    private let uniqueIDStorage = ScratchBytes(count: 36)
    private var timestampedBody = ByteBuffer()
    private let clock: SinkClock
    /// The wall clock minus the uptime clock, in nanoseconds (a 410's timestamp).
    private let wallOffset: Int64
    /// Half the wire's round trip: a timed answer is written when the wire hands it on.
    private let wireOneWay: UInt64
    /// Whether every accepted answer carries an `apns-unique-id` (with the device fleet:
    /// `uniqueID(of:into:)`), not only a timed request's.
    private let everyUniqueID: Bool

    init(seed: UInt64, clock: SinkClock, wallOffset: Int64, wireOneWay: UInt64, everyUniqueID: Bool = false) {
        self.everyUniqueID = everyUniqueID
        ids = APNsIDGenerator(seed: seed)
        self.clock = clock
        self.wallOffset = wallOffset
        self.wireOneWay = wireOneWay
    }

    /// The apns-id of the answer being written: 36 bytes of text.
    var apnsID: UnsafeRawBufferPointer { UnsafeRawBufferPointer(idStorage.bytes) }

    /// Takes the request's apns-id when it is a canonical UUID, else makes one; a timed one's
    /// send time (`TimedAPNsID`) goes into `sentAt` when `isBelievable` at `now`, else
    /// `untimed` counts it. Returns whether it echoed the request's.
    mutating func takeID(
        _ fields: APNsRequestCheck.Fields,
        in bytes: UnsafeRawBufferPointer,
        now: UInt64,
        sentAt: inout UInt64,
        untimed: inout Int
    ) -> Bool {
        let id = APNsRequestCheck.view(fields.apnsID, bytes)
        guard takeID(id) else { return false }
        if let time = TimedAPNsID.sendTime(in: id) {
            if Self.isBelievable(sentAt: time, now: now) { sentAt = time } else { untimed += 1 }
        }
        return true
    }

    /// Takes `id` when it is a canonical UUID's 36 bytes, else makes one (a broadcast's
    /// `apns-request-id`, echoed or made). Returns whether it took `id`.
    @discardableResult
    mutating func takeID(_ id: UnsafeRawBufferPointer) -> Bool {
        guard id.count == 36, APNsRequestCheck.isCanonicalUUID(id) else {
            ids.write(into: idStorage.bytes)
            return false
        }
        idStorage.bytes.copyMemory(from: id)
        return true
    }

    /// Keeps the apns-id with a held answer, and takes it back when the answer is due.
    func hold(into entry: inout PendingResponse) {
        withUnsafeMutableBytes(of: &entry.id) { $0.copyMemory(from: apnsID) }
    }

    func restore(from entry: PendingResponse) {
        var id = entry.id
        withUnsafeBytes(of: &id) { idStorage.bytes.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[..<36])) }
    }

    /// Writes `answer` with the apns-id taken last. Returns whether it counts as answered: a
    /// 200 whose stream is no longer there was not written; a rejection always counts.
    mutating func write(_ answer: Answer, _ connection: inout HTTP2Writer) -> Bool {
        // A timed request learns when its answer was written and what the scenario held it.
        var uniqueID: UnsafeRawBufferPointer?
        if answer.transit > 0 {
            // Written when the wire will hand the answer on; held the wire's two ways too.
            let bits = TimedAPNsID.answerBits(writtenAt: clock.uptime() + wireOneWay, held: answer.held + wireOneWay)
            UUIDText.write(bits, into: uniqueIDStorage.bytes)
            uniqueID = UnsafeRawBufferPointer(uniqueIDStorage.bytes)
        } else if everyUniqueID && answer.rejection == nil {
            Self.uniqueID(of: apnsID, into: uniqueIDStorage.bytes)
            uniqueID = UnsafeRawBufferPointer(uniqueIDStorage.bytes)
        }
        guard let rejection = answer.rejection else {
            let fields = SinkResponseFields(status: 200, apnsID: apnsID, isError: false, uniqueID: uniqueID)
            return connection.respond(stream: answer.stream, fields, body: nil)
        }
        let fields = SinkResponseFields(status: rejection.status, apnsID: apnsID, isError: true, uniqueID: uniqueID)
        if rejection.status == 410 {
            // The fleet's uninstalled device: when APNs learnt it; else now.
            let nanoseconds =
                answer.unregisteredSince == 0 ? clock.wall() : Int64(answer.unregisteredSince) + wallOffset
            timestampedBody.clear()
            APNsErrorBody.write(rejection, timestamp: nanoseconds / 1_000_000, into: &timestampedBody)
            connection.respond(stream: answer.stream, fields, body: timestampedBody)
        } else {
            connection.respond(stream: answer.stream, fields, body: SinkErrorBody.bodies[rejection])
        }
        return true
    }

    /// The `apns-unique-id` of an accepted notification's answer with the device fleet, as
    /// APNs's development environment gives one with every answer (a timed request's carries
    /// its times instead): its apns-id with the first hex digit's high bit flipped (0↔8, 1↔9,
    /// …, 7↔f), in the id's own case.
    ///
    /// ```
    ///   apns-id         6f4a1c2e-0b3d-4e5f-8a9b-0c1d2e3f4a5b
    ///   apns-unique-id  ef4a1c2e-0b3d-4e5f-8a9b-0c1d2e3f4a5b
    /// ```
    ///
    /// One to one and its own inverse: `/deliveries/` finds a notification by either id with no
    /// table, and nothing is allocated; one digit, not all 32, because every answer pays for it
    /// (all 32 cost 520 instructions a request, measured with the cost gate's workload).
    /// `id` and `out` are 36 bytes (a canonical UUID's text).
    static func uniqueID(of id: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) {
        out.copyMemory(from: UnsafeRawBufferPointer(rebasing: id[..<36]))
        let first = id[0]
        // The digit's value ('0'…'9' → 0…9, 'a'…'f' and 'A'…'F' → 10…15), its high bit flipped.
        let value = ((first & 0x0F) &+ 9 &* (first >> 6)) ^ 8
        guard value >= 10 else {
            out[0] = UInt8(ascii: "0") &+ value
            return
        }
        // A letter in the id's case: the first letter it has says which (lowercase if none).
        var uppercase = false
        for index in 0..<36 where id[index] >= UInt8(ascii: "A") {
            uppercase = id[index] <= UInt8(ascii: "F")
            break
        }
        out[0] = (uppercase ? UInt8(ascii: "A") : UInt8(ascii: "a")) &+ value &- 10
    }

    /// A send time further back than this is taken as this long ago (µs in a held entry's 32 bits).
    static let longestTransit: UInt64 = 3_600_000_000_000

    /// How far before its read a timed apns-id's send time may lie to be believed: 10 s. A
    /// request waits in at most the sender's and the sink's socket buffers (a few MB each: tens
    /// of thousands of requests, well under a second at the sink's rate) and the sink's read
    /// backlog; an id older than this is not a send time of this host's clock but a client's
    /// invention (the host tag is derived from the world-readable boot id), and would make the
    /// sink's own "lateness from the send" read whatever the client chose. One from after its
    /// read (the same clock: honest ids cannot be) is not believed either.
    static let timedIDBound: UInt64 = 10_000_000_000
    static let timedIDBoundText = "10 s"

    /// Whether a timed apns-id's send time (`TimedAPNsID`, uptime nanoseconds) fits the sink's
    /// own clock at `now`, the time its request is handled.
    @inline(__always)
    static func isBelievable(sentAt: UInt64, now: UInt64) -> Bool {
        sentAt <= now && now - sentAt <= timedIDBound
    }
}

/// A response's header fields (`:status`, `apns-id`, and for errors `content-type`), encoded
/// from reused bytes.
struct SinkResponseFields: HTTP2HeaderFields {
    var status: Int
    /// 36 bytes of the request's or a generated apns-id.
    var apnsID: UnsafeRawBufferPointer
    var isError: Bool
    /// 36 bytes of an `apns-unique-id` for a timed request's answer (`TimedAPNsID`), else `nil`.
    var uniqueID: UnsafeRawBufferPointer? = nil

    func encode(with encoder: inout HPACKEncoder, into block: inout OutputBuffer) {
        // The three digits on the stack: a table of them would be a lazily made global.
        let status = min(max(status, 100), 599)
        var digits = (
            UInt8(ascii: "0") + UInt8(status / 100), UInt8(ascii: "0") + UInt8(status / 10 % 10),
            UInt8(ascii: "0") + UInt8(status % 10)
        )
        withUnsafeBytes(of: &digits) { encoder.encode(name: Self.statusName, value: $0, into: &block) }
        // A value that never repeats: neither indexed nor Huffman-coded (coding 36 bytes per
        // response to save 9 was 6% of the sink's time under h2load), as the sender writes :path.
        // Neither name is in a table (the sink indexes neither): no look-up.
        encoder.encodeLiteral(name: Self.apnsIDName, value: apnsID, into: &block)
        if let uniqueID { encoder.encodeLiteral(name: Self.uniqueIDName, value: uniqueID, into: &block) }
        if isError { encoder.encode(name: Self.contentTypeName, value: Self.json, into: &block) }
    }

    static var statusName: UnsafeRawBufferPointer { view(":status") }
    static var apnsIDName: UnsafeRawBufferPointer { view(APNsRequest.Header.apnsID) }
    static var uniqueIDName: UnsafeRawBufferPointer { view(TimedAPNsID.answerHeader) }
    static var contentTypeName: UnsafeRawBufferPointer { view("content-type") }
    static var json: UnsafeRawBufferPointer { view("application/json") }

    private static func view(_ text: StaticString) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount)
    }
}

/// Error bodies made once per reason (`APNsErrorBody`); 410's carries a timestamp and is
/// written per response.
enum SinkErrorBody {
    static let bodies: [APNsReason: ByteBuffer] = Dictionary(
        uniqueKeysWithValues: APNsReason.allCases.map { reason in
            var body = ByteBuffer()
            APNsErrorBody.write(reason, into: &body)
            return (reason, body)
        }
    )
}

/// Version-4 UUIDs as text from a seeded generator: no Foundation, no allocation.
struct APNsIDGenerator {
    private var random: SinkRandom

    init(seed: UInt64) {
        random = SinkRandom(seed: seed)
    }

    private mutating func next() -> UInt64 { random.next() }

    /// Writes `xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx` (uppercase, as APNs) into 36 bytes.
    mutating func write(into out: UnsafeMutableRawBufferPointer) {
        let high = next()
        UUIDText.write(UUIDText.version4((high, next())), uppercase: true, into: out)
    }
}

/// Bytes owned for as long as a connection lives (the apns-id being answered).
final class ScratchBytes {
    let bytes: UnsafeMutableRawBufferPointer

    init(count: Int) {
        bytes = .allocate(byteCount: count, alignment: 8)
        bytes.initializeMemory(as: UInt8.self, repeating: 0)
    }

    deinit {
        bytes.deallocate()
    }
}
