/// A broadcast run's work as a token set: `rounds` updates to each of `channels`, round by
/// round, so that each channel's updates go out in order.
///
/// Record `i` is channel `i mod K` in round `i / K` (K channels): its "token" is the channel id
/// as APNs writes it (base64 text, which the load engine puts in `apns-channel-id`), and its one
/// field is the update's Live Activity timestamp, `firstTimestamp + round` (UNIX seconds: a
/// template's `"timestamp": "{{field.1:int}}"` increases with every update of a channel, as
/// ActivityKit requires).
///
/// ```
///   sequence  token (apns-channel-id)      fields
///   0         q7nE0wM1pS2o3Lr9Yx2bUg==     \t1732000000     round 0
///   1         M2xk…                        \t1732000000
///   K         q7nE0wM1pS2o3Lr9Yx2bUg==     \t1732000001     round 1
/// ```
public struct ChannelRounds: Sendable, Hashable {
    /// The channel ids, base64 text.
    public var channels: [String]
    /// Updates per channel.
    public var rounds: Int
    /// The first round's timestamp, UNIX seconds.
    public var firstTimestamp: Int

    /// The longest channel id the reader takes (docs/apns.md, "Broadcast channels": 64).
    public static let maxIDLength = 64

    public init(channels: [String], rounds: Int, firstTimestamp: Int) {
        precondition(rounds >= 0 && firstTimestamp >= 0)
        self.channels = channels
        self.rounds = rounds
        self.firstTimestamp = firstTimestamp
    }

    /// Records in the set: every channel's every update.
    public var count: UInt64 { UInt64(channels.count) * UInt64(rounds) }
}

extension ChannelRounds {
    /// The channel ids of a `--channel-ids` file's `text`: one base64 id a line (blank lines and lines
    /// starting `#` skipped); a bad line is refused as `FILE:LINE: what`.
    public static func ids(in text: String, source path: String) throws(TokenSetError) -> [String] {
        var ids: [String] = []
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = String(raw.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
            if line.isEmpty || line.hasPrefix("#") { continue }
            if let problem = problem(with: line) {
                throw TokenSetError("\(problem): \(line)", source: path, line: index + 1)
            }
            ids.append(line)
        }
        if ids.isEmpty { throw TokenSetError("holds no channel id (one base64 id a line)", source: path) }
        return ids
    }

    /// What is wrong with `id` as an APNs channel id, if anything: base64 (`A–Z a–z 0–9 + /`,
    /// `=` padding at the end, a multiple of 4 characters), at most `maxIDLength` characters.
    public static func problem(with id: String) -> String? {
        let bytes = Array(id.utf8)
        if bytes.count > maxIDLength {
            return "a channel id is at most \(maxIDLength) characters, this one \(bytes.count)"
        }
        guard bytes.count % 4 == 0 else {
            return "a channel id is base64, a multiple of 4 characters, not \(bytes.count)"
        }
        let body = bytes.prefix { $0 != UInt8(ascii: "=") }
        let padding = bytes.count - body.count
        guard padding <= 2, bytes[body.count...].allSatisfy({ $0 == UInt8(ascii: "=") }) else {
            return "a channel id is base64: '=' only as padding at its end"
        }
        if let bad = body.first(where: { !isBase64($0) }) {
            return "a channel id is base64: '\(Character(Unicode.Scalar(bad)))' is not a base64 character"
        }
        return nil
    }

    private static func isBase64(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "+"), UInt8(ascii: "/"):
            true
        default: false
        }
    }
}
