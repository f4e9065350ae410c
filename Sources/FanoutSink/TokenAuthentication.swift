import Crypto
import FanoutAPNs
import Foundation

/// APNs token authentication (shared/APNS.md, "Auth"): an ES256 JWT in
/// `authorization: bearer <jwt>`, checked against the keys the sink is given.
///
/// ```
///   base64url({"alg":"ES256","kid":"<key id>"}) . base64url({"iss":"<team id>","iat":<seconds>}) . base64url(r ‖ s)
/// ```
/// Rules, in order: a missing field is MissingProviderToken; anything but a well-formed ES256
/// JWT naming a known key, issued by that key's team, with a valid signature, is
/// InvalidProviderToken; a key other than the one of the connection's first accepted token is
/// UnrelatedKeyIdInToken (a connection is bound to its first key and team); `iat` more than
/// `maximumClockSkew` (60 s) in the future is InvalidProviderToken (a token from the future
/// would never expire); `iat` more than an hour old is ExpiredProviderToken; a new token less than 20 minutes after the connection's
/// previous one is TooManyProviderTokenUpdates (429). A token already accepted on the
/// connection is recognised by its bytes and not verified again: the signature check runs once
/// per token, not per request.
public struct TokenAuthentication: Sendable {
    /// A provider key: its id, its team, and its public key.
    public struct Key: Sendable {
        public var keyID: String
        public var teamID: String
        /// The public key in X9.63 form (swift-crypto's key type is not `Sendable`).
        public var publicKeyX963: [UInt8]

        public init(keyID: String, teamID: String, publicKey: P256.Signing.PublicKey) {
            self.keyID = keyID
            self.teamID = teamID
            publicKeyX963 = Array(publicKey.x963Representation)
        }

        var publicKey: P256.Signing.PublicKey? { try? P256.Signing.PublicKey(x963Representation: publicKeyX963) }

        /// A key from PEM text: a public key, or an APNs `.p8` (PKCS#8 private key), whose
        /// public half is used.
        public init(keyID: String, teamID: String, pem: String) throws {
            let publicKey: P256.Signing.PublicKey
            if pem.contains("PRIVATE KEY") {
                publicKey = try P256.Signing.PrivateKey(pemRepresentation: pem).publicKey
            } else {
                publicKey = try P256.Signing.PublicKey(pemRepresentation: pem)
            }
            self.init(keyID: keyID, teamID: teamID, publicKey: publicKey)
        }
    }

    public var keys: [String: Key]
    /// The time in UNIX seconds: injectable so the hour and 20-minute rules can be tested.
    public var now: @Sendable () -> Int64

    /// How old `iat` may be.
    public static let maximumTokenAge: Int64 = 3600
    /// How far in the future `iat` may be: the provider's clock may run a little ahead.
    public static let maximumClockSkew: Int64 = 60
    /// How soon after the previous one a connection may present a new token.
    public static let minimumRefreshInterval: Int64 = 1200

    public init(keys: [Key], now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) }) {
        self.keys = Dictionary(keys.map { ($0.keyID, $0) }, uniquingKeysWith: { _, last in last })
        self.now = now
    }

    /// One connection's authentication state: the key and team it is bound to and the token in use.
    struct ConnectionState {
        var boundKeyID: String?
        var token: [UInt8] = []
        var tokenIssuedAt: Int64 = 0
        var tokenAcceptedAt: Int64 = 0
    }

    /// Checks the `authorization` value (`nil` when absent) for one request.
    func check(_ authorization: UnsafeRawBufferPointer?, state: inout ConnectionState) -> APNsReason? {
        guard let authorization, !authorization.isEmpty else { return .missingProviderToken }
        let bearer: StaticString = "bearer "
        let prefix = bearer.utf8CodeUnitCount
        // The scheme in any case, compared in place: this runs for every request.
        guard authorization.count > prefix,
            zip(authorization, UnsafeRawBufferPointer(start: bearer.utf8Start, count: prefix))
                .allSatisfy({ $0 | 0x20 == $1 })
        else { return .invalidProviderToken }
        let jwt = UnsafeRawBufferPointer(rebasing: authorization[prefix...])
        let time = now()
        if !state.token.isEmpty && jwt.elementsEqual(state.token) {
            return Self.age(of: state.tokenIssuedAt, at: time) > Self.maximumTokenAge ? .expiredProviderToken : nil
        }
        guard let token = ProviderToken(jwt), let key = keys[token.keyID], token.teamID == key.teamID,
            key.publicKey?.isValidSignature(token.signature, for: SHA256.hash(data: token.signedBytes)) == true
        else { return .invalidProviderToken }
        if let bound = state.boundKeyID, bound != token.keyID { return .unrelatedKeyIdInToken }
        let age = Self.age(of: token.issuedAt, at: time)
        if age < -Self.maximumClockSkew { return .invalidProviderToken }
        if age > Self.maximumTokenAge { return .expiredProviderToken }
        if !state.token.isEmpty && time - state.tokenAcceptedAt < Self.minimumRefreshInterval {
            return .tooManyProviderTokenUpdates
        }
        state.boundKeyID = token.keyID
        state.token = Array(jwt)
        state.tokenIssuedAt = token.issuedAt
        state.tokenAcceptedAt = time
        return nil
    }

    /// `time − issuedAt` in seconds, saturated: `iat` is the peer's number, and no value of it
    /// may trap the sink (Int64.min once did).
    static func age(of issuedAt: Int64, at time: Int64) -> Int64 {
        let (age, overflow) = time.subtractingReportingOverflow(issuedAt)
        guard overflow else { return age }
        return issuedAt < 0 ? .max : .min
    }
}

/// A JWT taken apart: the claims APNs uses and the signature over `header.claims`.
struct ProviderToken {
    var keyID: String
    var teamID: String
    var issuedAt: Int64
    var signature: P256.Signing.ECDSASignature
    var signedBytes: [UInt8]

    /// `nil` unless `jwt` is three base64url parts, a header with alg ES256 and a kid, claims
    /// with iss and an integer iat, and a 64-byte raw signature.
    init?(_ jwt: UnsafeRawBufferPointer) {
        let parts = jwt.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3,
            let header = Self.object(Self.base64URL(parts[0])),
            let claims = Self.object(Self.base64URL(parts[1])),
            let signatureBytes = Self.base64URL(parts[2]), signatureBytes.count == 64,
            header["alg"] as? String == "ES256",
            let keyID = header["kid"] as? String,
            let teamID = claims["iss"] as? String,
            let issuedAt = (claims["iat"] as? NSNumber).flatMap({ Int64(exactly: $0.doubleValue) }),
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes)
        else { return nil }
        self.keyID = keyID
        self.teamID = teamID
        self.issuedAt = issuedAt
        self.signature = signature
        signedBytes = Array(jwt[..<(parts[1].endIndex)])
    }

    static func base64URL(_ text: Slice<UnsafeRawBufferPointer>) -> Data? {
        var base64 = String(decoding: text, as: UTF8.self)
            .replacingOccurrences(of: "-", with: "+")
            .replacingOccurrences(of: "_", with: "/")
        while base64.utf8.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64)
    }

    static func object(_ data: Data?) -> [String: Any]? {
        data.flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
    }
}
