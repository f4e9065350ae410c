import FanoutAPNs
import FanoutHPACK
import FanoutHTTP2
import NIOCore

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
///
/// A broadcast (docs/apns.md, "Broadcast channels") puts the channel where the device was: the
/// path is the app's, the same on every request, and the "token" (the channel id's base64) goes
/// in `apns-channel-id`; the id is `apns-request-id`, which APNs echoes.
///
/// ```
///   :path /4/broadcasts/apps/<bundle id>   literal, as above (one path for the run)
///   :method POST … authorization           the run's fields (no apns-topic: the path names the app)
///   apns-channel-id <base64>               literal, not indexed (a channel at a time)
///   apns-request-id 8-4-4-4-12             when the run generates ids
/// ```
///
/// An FCM send (docs/fcm.md, "Endpoint and request") has the token in its body: the path is the
/// project's, the same on every request, and nothing is written per request.
///
/// ```
///   :path /v1/projects/<project>/messages:send   indexed once, then one byte (as the run's
///                                                fields: 44 bytes of HEADERS became 6)
///   :method POST … content-type authorization    the run's fields
/// ```
package struct APNsRequestFields: HTTP2HeaderFields {
    package var shared: HTTP2Fields
    private var path: [UInt8]
    private var pathLength = 0
    /// The canonical UUID text, 36 bytes, when the run sends an `apns-id`.
    private var id: [UInt8]?
    /// Whether this request carries the id (a run that times some requests leaves it off the
    /// others).
    package var sendsID = true
    /// The channel id's bytes when the requests are broadcasts (`nil`: to devices).
    private var channel: [UInt8]?
    private var channelLength = 0
    /// An FCM send's: the token is in the body, and the path the same on every request.
    private var tokenInBody = false

    /// `/3/device/`'s length: the token's place in `path`.
    private static var prefixLength: Int { APNsRequest.devicePathPrefix.utf8CodeUnitCount }

    /// Fields to devices, or with `broadcastApp` broadcasts to that app's channels.
    package init(shared: HTTP2Fields, generatesID: Bool = false, broadcastApp: String? = nil) {
        self.shared = shared
        let prefix = APNsRequest.devicePathPrefix
        path =
            Array(UnsafeRawBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount))
            + [UInt8](repeating: 0, count: DeviceTokenFormat.default.hexLengths.upperBound)
        id = generatesID ? Array("00000000-0000-4000-8000-000000000000".utf8) : nil
        if let broadcastApp {
            path = Array("\(APNsRequest.broadcastPathPrefix)\(broadcastApp)".utf8)
            pathLength = path.count
            channel = [UInt8](repeating: 0, count: 64)
        }
    }

    /// Fields of FCM sends to `path` (`FCMDestination.path`): the same on every request.
    package init(shared: HTTP2Fields, fixedPath: String) {
        self.init(shared: shared)
        path = Array(fixedPath.utf8)
        pathLength = path.count
        tokenInBody = true
    }

    /// Writes `bits` as a version-4, variant-1 UUID (`xxxxxxxx-xxxx-4xxx-[89ab]xxx-xxxxxxxxxxxx`),
    /// setting those bits; returns the bits as written.
    @discardableResult
    package mutating func select(id bits: (high: UInt64, low: UInt64)) -> (high: UInt64, low: UInt64) {
        let written = UUIDText.version4(bits)
        select(uuid: written)
        return written
    }

    /// Writes `bits` as they are as the UUID's 32 hex digits (`TimedAPNsID` sets its version).
    package mutating func select(uuid bits: (high: UInt64, low: UInt64)) {
        guard id != nil else { return }
        id!.withUnsafeMutableBytes { UUIDText.write(bits, into: $0) }
    }

    /// Points `:path` at `token`'s device, or, for a broadcast, `apns-channel-id` at the
    /// channel whose id `token` holds.
    package mutating func select(token: UnsafeRawBufferPointer) {
        if channel != nil { return select(channel: token) }
        if tokenInBody { return }
        let count = Self.prefixLength + token.count
        if path.count < count { path += [UInt8](repeating: 0, count: count - path.count) }
        path.withUnsafeMutableBytes { bytes in
            UnsafeMutableRawBufferPointer(rebasing: bytes[Self.prefixLength...]).copyMemory(from: token)
        }
        pathLength = count
    }

    /// Points `apns-channel-id` at the channel whose base64 id `token` holds.
    @inline(never)
    private mutating func select(channel id: UnsafeRawBufferPointer) {
        if channel!.count < id.count { channel! += [UInt8](repeating: 0, count: id.count - channel!.count) }
        channel!.withUnsafeMutableBytes { $0.copyMemory(from: id) }
        channelLength = id.count
    }

    package func encode(with encoder: inout HPACKEncoder, into block: inout OutputBuffer) {
        path.withUnsafeBytes { path in
            let name: StaticString = ":path"
            encoder.encode(
                name: UnsafeRawBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount),
                value: UnsafeRawBufferPointer(rebasing: path[..<pathLength]),
                indexing: tokenInBody ? .incremental : .withoutIndexing,
                huffman: .never,
                into: &block
            )
        }
        shared.encode(with: &encoder, into: &block)
        // A broadcast's fields apart, so that a notification's fields are encoded as before,
        // behind one branch.
        if channel != nil { return encodeBroadcastFields(with: &encoder, into: &block) }
        if let id, sendsID {
            id.withUnsafeBytes { id in
                let name = APNsRequest.Header.apnsID
                encoder.encode(
                    name: UnsafeRawBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount),
                    value: id,
                    indexing: .withoutIndexing,
                    huffman: .never,
                    into: &block
                )
            }
        }
    }

    /// `apns-channel-id`, then `apns-request-id` when the run generates ids.
    @inline(never)
    private func encodeBroadcastFields(with encoder: inout HPACKEncoder, into block: inout OutputBuffer) {
        channel!.withUnsafeBytes { channel in
            let name = APNsRequest.Header.channelID
            encoder.encode(
                name: UnsafeRawBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount),
                value: UnsafeRawBufferPointer(rebasing: channel[..<channelLength]),
                indexing: .withoutIndexing,
                huffman: .never,
                into: &block
            )
        }
        guard let id, sendsID else { return }
        id.withUnsafeBytes { id in
            let name = APNsRequest.Header.requestID
            encoder.encode(
                name: UnsafeRawBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount),
                value: id,
                indexing: .withoutIndexing,
                huffman: .never,
                into: &block
            )
        }
    }
}
