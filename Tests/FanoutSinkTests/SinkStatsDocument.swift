import Foundation

/// What the tests read of the sink's `/stats` document (`SinkStatistics.json()`, written by
/// `SinkAdmin`'s encodable types, which have no decoder of their own).
struct SinkStatsDocument: Decodable {
    var requests: Int
    var accepted: Int
    var byStatus: [String: Int]
    var byReason: [String: Int]
    var connections: Connections
    var digest: Digest
    var openConnections: [Connection]

    struct Connections: Decodable, Equatable {
        var opened: Int
        var closed: Int
        var open: Int
    }

    struct Digest: Decodable {
        var count: Int
    }

    struct Connection: Decodable, CustomStringConvertible {
        var id: Int
        var peer: String
        var requests: Int
        var accepted: Int
        var byStatus: [String: Int]
        var byReason: [String: Int]

        enum CodingKeys: String, CodingKey {
            case id, peer, requests, accepted
            case byStatus = "by_status"
            case byReason = "by_reason"
        }

        var description: String { "#\(id) \(peer): \(requests) requests, \(accepted) accepted, \(byStatus)" }
    }

    enum CodingKeys: String, CodingKey {
        case requests, accepted, connections, digest
        case byStatus = "by_status"
        case byReason = "by_reason"
        case openConnections = "open_connections"
    }

    init(json: String) throws {
        self = try JSONDecoder().decode(Self.self, from: Data(json.utf8))
    }
}
