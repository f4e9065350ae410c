import FanoutFiles
import FanoutMeasure
import Foundation

extension SummaryDocument {
    /// The document as the file holds it.
    public func data() throws -> Data { try JSONDocument.data(self) }

    /// Reads `path`: a summary this Fanout writes or reads, or an error that says which file and
    /// what is wrong (an older or newer schema by its number, a missing or mistyped key by its
    /// path in the document).
    public static func read(_ path: String) throws(ResultsError) -> SummaryDocument {
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw ResultsError(.unreadable, "cannot read \(path): \(error.reason)")
        }
        try DuplicateKeyScan.refuse(data, at: path)
        struct Version: Decodable {
            var schemaVersion: Int?
            enum CodingKeys: String, CodingKey { case schemaVersion = "schema_version" }
        }
        let decoder = JSONDecoder()
        let version: Int
        do {
            guard let found = try decoder.decode(Version.self, from: data).schemaVersion else {
                throw ResultsError(.notADocument, "\(path): schema_version is missing: not a Fanout summary")
            }
            version = found
        } catch let error as ResultsError {
            throw error
        } catch {
            throw ResultsError(.notADocument, "\(path): not a JSON object (\(DocumentError.describe(error)))")
        }
        let readable = SummaryDocument.readableSchemaVersions
        guard version >= readable.lowerBound else {
            throw ResultsError(
                .version,
                "\(path): written by an older fanout (schema \(version)); this one reads schemas \(readable.lowerBound) to \(readable.upperBound)"
            )
        }
        guard version <= readable.upperBound else {
            throw ResultsError(
                .version,
                "\(path): written by a newer fanout (schema \(version)); this one reads schemas \(readable.lowerBound) to \(readable.upperBound)"
            )
        }
        do { return try decoder.decode(SummaryDocument.self, from: data) } catch {
            throw ResultsError(.malformed, "\(path): \(DocumentError.describe(error))")
        }
    }
}

/// How Fanout writes its JSON files: pretty, keys sorted, a newline at the end.
public enum JSONDocument {
    public static func data(_ document: some Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return try encoder.encode(document) + Data("\n".utf8)
    }
}

/// A decoding error said the way a person fixes the file: where in the document, and what.
package enum DocumentError {
    package static func describe(_ error: any Error) -> String {
        func path(_ codingPath: [any CodingKey]) -> String {
            codingPath.isEmpty
                ? "the document"
                : codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
                    .replacingOccurrences(of: ".[", with: "[")
        }
        guard let error = error as? DecodingError else { return "\(error)" }
        switch error {
        case .keyNotFound(let key, let context): return "\(path(context.codingPath + [key])) is missing"
        case .valueNotFound(_, let context): return "\(path(context.codingPath)) is null"
        case .typeMismatch(let type, let context): return "\(path(context.codingPath)) is not \(Self.kind(type))"
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty ? "not JSON" : "\(path(context.codingPath)): \(context.debugDescription)"
        @unknown default: return "\(error)"
        }
    }

    private static func kind(_ type: Any.Type) -> String {
        switch type {
        case is Int.Type: "a whole number"
        case is Double.Type: "a number"
        case is String.Type: "a string"
        case is Bool.Type: "true or false"
        default: "what it should be (\(type))"
        }
    }
}
