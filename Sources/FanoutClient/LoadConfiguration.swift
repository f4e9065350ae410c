import FanoutAPNs
import FanoutHTTP2
import FanoutPayload
import NIOCore

/// The APNs request headers of a run besides the path (shared/APNS.md, "Request").
public struct NotificationHeaders: Sendable, Hashable {
    /// `apns-topic`: the bundle id plus the push type's suffix.
    public var topic: String
    public var pushType: APNsPushType
    /// `apns-priority`: 10, 5 or 1; `nil` leaves it out (APNs' default, 10).
    public var priority: Int?
    /// `apns-expiration` in UNIX seconds; `nil` leaves it out.
    public var expiration: Int?
    /// `apns-collapse-id`, at most 64 bytes.
    public var collapseID: String?
    /// Whether each notification gets an `apns-id` (a random version-4 UUID, the same on its
    /// retries, as a provider that tracks its notifications sends), or none (APNs makes one).
    public var generatesAPNsID = false

    public init(
        topic: String,
        pushType: APNsPushType = .alert,
        priority: Int? = nil,
        expiration: Int? = nil,
        collapseID: String? = nil,
        generatesAPNsID: Bool = false
    ) {
        self.topic = topic
        self.pushType = pushType
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
        self.generatesAPNsID = generatesAPNsID
    }
}

/// How load is offered: the closed model (each connection keeps its streams full) or the open
/// one (notifications due on a schedule, whatever the server does).
public struct LoadModel: Sendable {
    /// The open model: when each notification is due; latency is counted from that time.
    /// `nil` is the closed model.
    public var schedule: ArrivalSchedule?
    /// The closed model: after this long no new token is started; what is in flight finishes.
    public var duration: Duration?
    /// Notifications started in the run's first `warmUp` count in every outcome but not in
    /// the latency histograms or the throughput.
    public var warmUp: Duration = .zero
    /// The open model: a run in which the generator fell further behind its schedule than this
    /// (with a stream free to send on) is invalid.
    public var maxLag: Duration = .milliseconds(100)

    public init(schedule: ArrivalSchedule? = nil, duration: Duration? = nil, warmUp: Duration = .zero) {
        self.schedule = schedule
        self.duration = duration
        self.warmUp = warmUp
    }
}

/// How a run sends: where, how many connections and streams, with which headers and payload,
/// and how it treats failures.
public struct LoadConfiguration: Sendable {
    public var host: String
    public var port: Int
    public var transport: HTTP2Transport
    /// `:authority` (defaults to `host`).
    public var authority: String?
    public var headers: NotificationHeaders
    public var encoder: PayloadEncoder
    /// Connections kept open, spread over the event loops.
    public var connections: Int
    /// At most this many streams in flight on a connection, below the server's
    /// MAX_CONCURRENT_STREAMS, which is followed as it changes.
    public var streamsPerConnection: Int
    /// A request without an answer after this long is reset and tried again.
    public var streamTimeout: Duration
    /// Tries per notification before it fails: retryable answers (429, 5xx), timeouts, resets
    /// and lost connections each use one; REFUSED_STREAM (and streams a GOAWAY turned away)
    /// do not, as the server never saw them.
    public var maxAttempts: Int
    /// The first retry's delay, doubling with each further try, with full jitter.
    public var retryBackoff: Duration
    /// The longest retry delay.
    public var maxRetryBackoff: Duration
    /// How long the whole run may take before what is left is failed as cancelled.
    public var deadline: Duration?
    /// Open or closed, how long, the warm-up.
    public var model = LoadModel()
    /// Token auth: the provider tokens sent as `authorization`, renewed as they age.
    public var providerTokens: ProviderTokens?
    /// Where tokens answered 410 (Unregistered, ExpiredToken) are written, one per line, as a
    /// provider prunes them.
    public var goneTokens: TokenLineWriter?

    public init(
        host: String,
        port: Int,
        transport: HTTP2Transport = .cleartext,
        headers: NotificationHeaders,
        encoder: PayloadEncoder,
        connections: Int = 4,
        streamsPerConnection: Int = 1000
    ) {
        self.host = host
        self.port = port
        self.transport = transport
        self.headers = headers
        self.encoder = encoder
        self.connections = connections
        self.streamsPerConnection = streamsPerConnection
        streamTimeout = .seconds(30)
        maxAttempts = 3
        retryBackoff = .milliseconds(100)
        maxRetryBackoff = .seconds(5)
    }

    /// The header fields every request shares, in the order they are sent after `:path`.
    func sharedFields(authorization: String?) -> HTTP2Fields {
        var fields: [(name: String, value: String)] = [
            (":method", "POST"), (":scheme", "https"), (":authority", authority ?? host),
            ("apns-topic", headers.topic), ("apns-push-type", headers.pushType.rawValue),
        ]
        if let priority = headers.priority { fields.append(("apns-priority", String(priority))) }
        if let expiration = headers.expiration { fields.append(("apns-expiration", String(expiration))) }
        if let collapseID = headers.collapseID { fields.append(("apns-collapse-id", collapseID)) }
        var list = HTTP2Fields(fields)
        if let authorization { list.append(name: "authorization", value: authorization) }
        return list
    }
}

/// A request's fields: `:path` for its device (and its `apns-id`), written into reused bytes,
/// then the shared ones.
///
/// ```
///   :path /3/device/<token>      literal, not indexed, not Huffman-coded (a new value every
///                                request: coding 74 bytes to 56 cost more CPU than it saved)
///   :method POST … authorization  the run's fields, indexed once, then one byte each
///   apns-id 8-4-4-4-12           like :path, when the run generates them (lowercase UUID v4);
///                                last, as regular fields follow every pseudo-field (RFC 9113 §8.3)
/// ```
struct APNsRequestFields: HTTP2HeaderFields {
    var shared: HTTP2Fields
    private var path: [UInt8]
    private var pathLength = 0
    /// The canonical UUID text, 36 bytes, when the run sends an `apns-id`.
    private var id: [UInt8]?

    static let prefix: [UInt8] = Array("/3/device/".utf8)

    init(shared: HTTP2Fields, generatesID: Bool = false) {
        self.shared = shared
        path = Self.prefix + [UInt8](repeating: 0, count: DeviceTokenFormat.default.hexLengths.upperBound)
        id = generatesID ? Array("00000000-0000-4000-8000-000000000000".utf8) : nil
    }

    /// Writes `bits` as a version-4, variant-1 UUID (`xxxxxxxx-xxxx-4xxx-[89ab]xxx-xxxxxxxxxxxx`),
    /// setting those bits; returns the bits as written.
    @discardableResult
    mutating func select(id bits: (high: UInt64, low: UInt64)) -> (high: UInt64, low: UInt64) {
        let high = bits.high & ~0xF000 | 0x4000
        let low = bits.low & ~(0xC000_0000_0000_0000 as UInt64) | 0x8000_0000_0000_0000
        guard id != nil else { return (high, low) }
        let digits: StaticString = "0123456789abcdef"
        id!.withUnsafeMutableBufferPointer { text in
            var position = 35
            func put(_ value: UInt64, _ count: Int) {
                var value = value
                for _ in 0..<count {
                    if text[position] == UInt8(ascii: "-") { position -= 1 }
                    text[position] = digits.utf8Start[Int(value & 0xF)]
                    value >>= 4
                    position -= 1
                }
            }
            put(low, 16)
            put(high, 16)
        }
        return (high, low)
    }

    /// The `apns-id` last written, if the run sends them.
    var idText: String? { id.map { String(decoding: $0, as: UTF8.self) } }

    /// Points `:path` at `token`'s device.
    mutating func select(token: UnsafeRawBufferPointer) {
        let count = Self.prefix.count + token.count
        if path.count < count { path += [UInt8](repeating: 0, count: count - path.count) }
        path.withUnsafeMutableBytes { bytes in
            UnsafeMutableRawBufferPointer(rebasing: bytes[Self.prefix.count...]).copyMemory(from: token)
        }
        pathLength = count
    }

    func encode(with encoder: inout HPACKEncoder, into buffer: inout ByteBuffer) {
        path.withUnsafeBytes { path in
            let name: StaticString = ":path"
            encoder.encode(
                name: UnsafeRawBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount),
                value: UnsafeRawBufferPointer(rebasing: path[..<pathLength]),
                indexing: .withoutIndexing,
                huffman: .never,
                into: &buffer
            )
        }
        shared.encode(with: &encoder, into: &buffer)
        if let id {
            id.withUnsafeBytes { id in
                let name: StaticString = "apns-id"
                encoder.encode(
                    name: UnsafeRawBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount),
                    value: id,
                    indexing: .withoutIndexing,
                    huffman: .never,
                    into: &buffer
                )
            }
        }
    }
}
