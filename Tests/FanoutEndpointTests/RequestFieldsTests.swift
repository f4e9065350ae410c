import FanoutAPNs
import FanoutHPACK
import FanoutHTTP2
import FanoutRandom
import NIOCore
import Testing

@testable import FanoutEndpoint

/// A request's header block as a server's HPACK decoder reads it: `:path`, `apns-id` when the
/// run generates them, then the run's shared fields.
struct RequestFieldsTests {
    /// The block `encoder` makes of `fields`, read by `decoder` (both keep their dynamic tables
    /// from block to block, as on a connection).
    static func decode(
        _ fields: APNsRequestFields,
        with encoder: inout HPACKEncoder,
        _ decoder: inout HPACKDecoder
    ) throws -> [(String, String)] {
        var block = OutputBuffer()
        fields.encode(with: &encoder, into: &block)
        var decoded: [(String, String)] = []
        try decoder.decode(block.bytes) { name, value, _ in
            decoded.append((String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self)))
        }
        return decoded
    }

    @Test func apnsIDsAreVersion4UUIDsInCanonicalForm() throws {
        let endpoint = APNsEndpoint(
            host: "127.0.0.1",
            port: 1,
            headers: try NotificationHeaders(topic: "com.example.app", generatesAPNsID: true)
        )
        var fields = APNsRequestFields(shared: endpoint.sharedFields(authorization: nil), generatesID: true)
        var encoder = HPACKEncoder()
        var decoder = HPACKDecoder()
        var random = SeededRandom(seed: 11)
        var seen: Set<String> = []
        let token = Array("00fc13adff785122b4ad28809a3420982341241421348097878e577c991de8f0".utf8)
        for _ in 0..<500 {
            token.withUnsafeBytes { fields.select(token: $0) }
            let bits = fields.select(id: (random.next(), random.next()))
            let decoded = try Self.decode(fields, with: &encoder, &decoder)
            #expect(
                decoded.map(\.0) == [
                    ":path", ":method", ":scheme", ":authority", "apns-topic", "apns-push-type", "apns-id",
                ]
            )
            // Pseudo-fields first (RFC 9113 §8.3): a server resets a stream that breaks this.
            let names = decoded.map(\.0)
            #expect(names.firstIndex { !$0.hasPrefix(":") }! > names.lastIndex { $0.hasPrefix(":") }!)
            let id = decoded[6].1
            #expect(
                id.wholeMatch(of: /[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/) != nil,
                "\(id)"
            )
            // The text is the bits, high half first.
            let hex = id.replacingOccurrences(of: "-", with: "")
            #expect(hex == String(format: "%016llx%016llx", bits.high, bits.low))
            seen.insert(id)
        }
        #expect(seen.count == 500)
    }

    /// A broadcast names its app in the path and its channel in `apns-channel-id`, with no
    /// apns-topic and no apns-id (docs/apns.md, "Broadcast channels").
    @Test func aBroadcastRequestHasTheAppsPathAndTheChannelInItsField() throws {
        let headers = try NotificationHeaders(
            topic: "com.example.app.push-type.liveactivity",
            pushType: .liveactivity,
            expiration: 0,
            generatesAPNsID: true
        )
        var endpoint = APNsEndpoint(host: "127.0.0.1", port: 1, headers: headers)
        endpoint.broadcastApp = "com.example.app"
        var fields = APNsRequestFields(
            shared: endpoint.sharedFields(authorization: nil),
            generatesID: true,
            broadcastApp: "com.example.app"
        )
        var encoder = HPACKEncoder()
        var decoder = HPACKDecoder()
        for channel in ["q7nE0wM1pS2o3Lr9Yx2bUg==", "AAAA", String(repeating: "QUJD", count: 16)] {
            Array(channel.utf8).withUnsafeBytes { fields.select(token: $0) }
            fields.select(id: (1, 2))
            let decoded = try Self.decode(fields, with: &encoder, &decoder)
            #expect(
                decoded.map(\.0) == [
                    ":path", ":method", ":scheme", ":authority", "apns-push-type", "apns-expiration",
                    "apns-channel-id", "apns-request-id",
                ]
            )
            #expect(decoded.first { $0.0 == ":path" }?.1 == "/4/broadcasts/apps/com.example.app")
            #expect(decoded.first { $0.0 == "apns-channel-id" }?.1 == channel)
            #expect(decoded.first { $0.0 == "apns-push-type" }?.1 == "liveactivity")
            #expect(!decoded.contains { $0.0 == "apns-topic" || $0.0 == "apns-id" })
        }
    }

    @Test func withoutGenerationThereIsNoAPNsID() throws {
        let endpoint = APNsEndpoint(
            host: "127.0.0.1",
            port: 1,
            headers: try NotificationHeaders(topic: "com.example.app")
        )
        var fields = APNsRequestFields(shared: endpoint.sharedFields(authorization: nil))
        Array("ab".utf8).withUnsafeBytes { fields.select(token: $0) }
        var encoder = HPACKEncoder()
        var decoder = HPACKDecoder()
        let decoded = try Self.decode(fields, with: &encoder, &decoder)
        #expect(!decoded.contains { $0.0 == "apns-id" })
        #expect(decoded.first?.1 == "/3/device/ab")
    }
}

/// The HEADERS bytes a plan takes for Fanout's own requests (`CapacityPlan.Flow.defaultHeaderBytes`)
/// are what Fanout's encoder writes once its table holds the run's fields: a 64-digit token's
/// `:path` (76 bytes, literal), the shared fields (a byte each), the apns-id when one is sent.
@Suite struct SteadyHeaderBytesTests {
    static func steadyBytes(generatesID: Bool, authorization: String?) throws -> Int {
        let endpoint = APNsEndpoint(
            host: "api.push.apple.com",
            port: 443,
            headers: try NotificationHeaders(topic: "com.example.app", generatesAPNsID: generatesID)
        )
        var fields = APNsRequestFields(
            shared: endpoint.sharedFields(authorization: authorization),
            generatesID: generatesID
        )
        var encoder = HPACKEncoder()
        var sizes: [Int] = []
        let token = Array(String(repeating: "ab", count: 32).utf8)
        for round in 0..<3 {
            var block = OutputBuffer()
            token.withUnsafeBytes { fields.select(token: $0) }
            if generatesID { fields.select(id: (UInt64(round) &* 0x9E37, UInt64(round))) }
            fields.encode(with: &encoder, into: &block)
            sizes.append(block.count)
        }
        #expect(sizes[1] == sizes[2])
        return sizes[2]
    }

    @Test func theDefaultIsFanoutsOwnRequestInSteadyState() throws {
        let plain = try Self.steadyBytes(generatesID: false, authorization: nil)
        let withID = try Self.steadyBytes(generatesID: true, authorization: nil)
        let withToken = try Self.steadyBytes(
            generatesID: true,
            authorization: "bearer " + String(repeating: "x", count: 200)
        )
        print("steady HEADERS bytes: \(plain) plain, \(withID) with apns-id, \(withToken) with apns-id and a token")
        #expect(plain == 81)
    }

    /// An FCM send (`CapacityPlan.Flow.defaultFCMHeaderBytes`): the project's path and the
    /// bearer are the same on every request, so each field is a byte once indexed.
    @Test func anFCMSendIsAByteAField() throws {
        var endpoint = APNsEndpoint(
            host: "fcm.googleapis.com",
            port: 443,
            headers: try NotificationHeaders(topic: "fcm")
        )
        endpoint.fcm = FCMDestination(
            project: "my-project",
            authorizations: FixedAuthorization("Bearer ya29." + String(repeating: "x", count: 200))
        )
        let authorization = endpoint.authorizations?.authorization()
        let fields = APNsRequestFields(
            shared: endpoint.sharedFields(authorization: authorization?.value),
            fixedPath: endpoint.fcm!.path
        )
        var encoder = HPACKEncoder()
        var sizes: [Int] = []
        for _ in 0..<3 {
            var block = OutputBuffer()
            fields.encode(with: &encoder, into: &block)
            sizes.append(block.count)
        }
        #expect(sizes[1] == sizes[2])
        #expect(sizes[2] == 6)
    }
}
