import Foundation

/// `fanout send`'s answer-ids.json: a bounded, uniform sample of the ids the endpoint answered
/// with — each `apns-unique-id` (by which APNs' Push Notifications Console shows a
/// notification's history, development environment) and the answer's `apns-id` (by which a
/// Fanout sink shows it at `/deliveries/ID`). Version 1.
public struct AnswerIDDocument: Codable, Sendable, Equatable {
    public static let fileName = "answer-ids.json"
    public static let currentVersion = 1

    public var version: Int
    /// Each connection looked at one answer in this many.
    public var lookedAtEvery: Int
    /// The most ids the sample keeps.
    public var capacity: Int
    /// Answers looked at that carried an `apns-unique-id` (a Fanout sink sends one to a timed
    /// request, `--apns-id timed`; APNs' development environment to every request).
    public var answersSeen: Int
    /// The sample: the first `capacity` seen, then each later one kept with an equal chance.
    public var ids: [Entry]

    public struct Entry: Codable, Sendable, Equatable {
        /// The answer's `apns-id`; `null` when it had none.
        public var apnsID: String?
        public var uniqueID: String

        public init(apnsID: String?, uniqueID: String) {
            self.apnsID = apnsID
            self.uniqueID = uniqueID
        }

        enum CodingKeys: String, CodingKey {
            case apnsID = "apns_id"
            case uniqueID = "apns_unique_id"
        }
    }

    public init(lookedAtEvery: Int, capacity: Int, answersSeen: Int, ids: [Entry]) {
        version = Self.currentVersion
        self.lookedAtEvery = lookedAtEvery
        self.capacity = capacity
        self.answersSeen = answersSeen
        self.ids = ids
    }

    enum CodingKeys: String, CodingKey {
        case version
        case lookedAtEvery = "looked_at_every"
        case capacity
        case answersSeen = "answers_seen"
        case ids
    }

    /// Reads `directory/answer-ids.json`.
    public static func read(in directory: String) throws(ResultsError) -> AnswerIDDocument {
        let path = directory + "/" + fileName
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ResultsError(.unreadable, "\(path): cannot be read")
        }
        try DuplicateKeyScan.refuse(data, at: path)
        do {
            let document = try JSONDecoder().decode(AnswerIDDocument.self, from: data)
            guard document.version == currentVersion else {
                throw ResultsError(
                    .version,
                    "\(path): version \(document.version); this Fanout reads \(currentVersion)"
                )
            }
            return document
        } catch let error as ResultsError {
            throw error
        } catch {
            throw ResultsError(.notADocument, "\(path) is not an answer-ids document: \(error)")
        }
    }

    /// Writes `directory/answer-ids.json`, replacing the one there.
    public func write(in directory: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try encoder.encode(self).write(to: URL(fileURLWithPath: directory + "/" + Self.fileName), options: .atomic)
    }
}
