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
struct APNsRequestFields: HTTP2HeaderFields {
    var shared: HTTP2Fields
    private var path: [UInt8]
    private var pathLength = 0
    /// The canonical UUID text, 36 bytes, when the run sends an `apns-id`.
    private var id: [UInt8]?
    /// Whether this request carries the id (a run that times some requests leaves it off the
    /// others).
    var sendsID = true

    /// `/3/device/`'s length: the token's place in `path`.
    private static var prefixLength: Int { APNsRequest.devicePathPrefix.utf8CodeUnitCount }

    init(shared: HTTP2Fields, generatesID: Bool = false) {
        self.shared = shared
        let prefix = APNsRequest.devicePathPrefix
        path =
            Array(UnsafeRawBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount))
            + [UInt8](repeating: 0, count: DeviceTokenFormat.default.hexLengths.upperBound)
        id = generatesID ? Array("00000000-0000-4000-8000-000000000000".utf8) : nil
    }

    /// Writes `bits` as a version-4, variant-1 UUID (`xxxxxxxx-xxxx-4xxx-[89ab]xxx-xxxxxxxxxxxx`),
    /// setting those bits; returns the bits as written.
    @discardableResult
    mutating func select(id bits: (high: UInt64, low: UInt64)) -> (high: UInt64, low: UInt64) {
        let written = UUIDText.version4(bits)
        select(uuid: written)
        return written
    }

    /// Writes `bits` as they are as the UUID's 32 hex digits (`TimedAPNsID` sets its version).
    mutating func select(uuid bits: (high: UInt64, low: UInt64)) {
        guard id != nil else { return }
        id!.withUnsafeMutableBytes { UUIDText.write(bits, into: $0) }
    }

    /// Points `:path` at `token`'s device.
    mutating func select(token: UnsafeRawBufferPointer) {
        let count = Self.prefixLength + token.count
        if path.count < count { path += [UInt8](repeating: 0, count: count - path.count) }
        path.withUnsafeMutableBytes { bytes in
            UnsafeMutableRawBufferPointer(rebasing: bytes[Self.prefixLength...]).copyMemory(from: token)
        }
        pathLength = count
    }

    func encode(with encoder: inout HPACKEncoder, into block: inout OutputBuffer) {
        path.withUnsafeBytes { path in
            let name: StaticString = ":path"
            encoder.encode(
                name: UnsafeRawBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount),
                value: UnsafeRawBufferPointer(rebasing: path[..<pathLength]),
                indexing: .withoutIndexing,
                huffman: .never,
                into: &block
            )
        }
        shared.encode(with: &encoder, into: &block)
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
}
