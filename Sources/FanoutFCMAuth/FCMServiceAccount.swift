import Crypto
import Foundation
import _CryptoExtras

/// The service account a sink's token endpoint knows (docs/fcm.md, "OAuth2"): its e-mail, key id
/// and RSA key. The sink verifies the RS256 assertions an SDK signs with the account's private
/// key, so it holds the key whole: made fresh (`generated`) and written out as the file the
/// Firebase console downloads, with a `token_uri` that points at the sink, or read from such a
/// file (`init(file:)`).
///
/// ```
///   {"type": "service_account", "project_id": "P", "private_key_id": "…",
///    "private_key": "-----BEGIN PRIVATE KEY-----\n…", "client_email": "fanout@P.iam.gserviceaccount.com",
///    "token_uri": "http://127.0.0.1:PORT/token", …}
/// ```
public struct FCMServiceAccount: Sendable {
    public let projectID: String
    public let clientEmail: String
    public let privateKeyID: String
    package let privateKey: _RSA.Signing.PrivateKey
    /// What verifies the account's assertions.
    package let publicKey: _RSA.Signing.PublicKey
    /// Where the account's assertions are exchanged for access tokens: the file's `token_uri`
    /// (`nil` for an account made here, whose file the sink writes with its own).
    public private(set) var tokenURI: String?

    /// A new account for `project` with a new 2048-bit key.
    public static func generated(project: String) throws -> FCMServiceAccount {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let id = SHA256.hash(data: key.publicKey.derRepresentation).prefix(20).map { String(format: "%02x", $0) }
        return FCMServiceAccount(
            projectID: project,
            clientEmail: "fanout-sink@\(project).iam.gserviceaccount.com",
            privateKeyID: id.joined(),
            privateKey: key
        )
    }

    init(projectID: String, clientEmail: String, privateKeyID: String, privateKey: _RSA.Signing.PrivateKey) {
        self.projectID = projectID
        self.clientEmail = clientEmail
        self.privateKeyID = privateKeyID
        self.privateKey = privateKey
        publicKey = privateKey.publicKey
    }

    /// Why a service-account file cannot be used, with the file and the field.
    public struct FileError: Error, CustomStringConvertible, Sendable {
        public var path: String
        public var problem: String
        public var description: String { "\(path): \(problem)" }
    }

    /// Reads a service-account file: `type` `service_account`, `project_id`, `client_email`,
    /// `private_key_id` and an RSA `private_key` in PEM (PKCS#8 or PKCS#1), as google-auth needs
    /// them.
    public init(file path: String) throws(FileError) {
        let object: [String: Any]
        do {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            guard let parsed = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                throw FileError(path: path, problem: "not a JSON object")
            }
            object = parsed
        } catch let error as FileError {
            throw error
        } catch {
            throw FileError(path: path, problem: "cannot read it as JSON: \(error.localizedDescription)")
        }
        func field(_ name: String) throws(FileError) -> String {
            guard let value = object[name] as? String, !value.isEmpty else {
                throw FileError(path: path, problem: "no \"\(name)\" string")
            }
            return value
        }
        guard try field("type") == "service_account" else {
            throw FileError(path: path, problem: "\"type\" is \(object["type"] ?? "absent"), not \"service_account\"")
        }
        let pem = try field("private_key")
        let key: _RSA.Signing.PrivateKey
        do { key = try _RSA.Signing.PrivateKey(pemRepresentation: pem) } catch {
            throw FileError(path: path, problem: "\"private_key\" is not an RSA private key in PEM: \(error)")
        }
        self.init(
            projectID: try field("project_id"),
            clientEmail: try field("client_email"),
            privateKeyID: try field("private_key_id"),
            privateKey: key
        )
        tokenURI = object["token_uri"] as? String
    }

    /// The account as the Firebase console writes it, its `token_uri` the sink's token endpoint.
    public func json(tokenURI: String) -> String {
        let fields: [(String, String)] = [
            ("type", "service_account"), ("project_id", projectID), ("private_key_id", privateKeyID),
            ("private_key", privateKey.pkcs8PEMRepresentation + "\n"), ("client_email", clientEmail),
            ("client_id", "100000000000000000000"), ("auth_uri", "https://accounts.google.com/o/oauth2/auth"),
            ("token_uri", tokenURI), ("universe_domain", "googleapis.com"),
        ]
        let members = fields.map { name, value in "  \(Self.quoted(name)): \(Self.quoted(value))" }
        return "{\n" + members.joined(separator: ",\n") + "\n}\n"
    }

    /// A JSON string literal of `text`.
    package static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    out += String(format: "\\u%04x", scalar.value)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
