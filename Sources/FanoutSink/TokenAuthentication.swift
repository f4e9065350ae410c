import Crypto
import FanoutAPNs
import Foundation
import NIOConcurrencyHelpers

/// APNs token authentication (docs/apns.md, "Auth"): an ES256 JWT in
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
    /// Told why a token was refused, once per distinct fault (`TokenFaults`): what the 403's
    /// reason cannot say — which claim was wrong, and how.
    public var faults = TokenFaults()

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
        // The scheme in any case, compared in place: this runs for every request. Only letters
        // fold (a byte's 0x20 bit set is its lower case); the space must be a space, or NUL
        // (0x00 | 0x20) would pass for it, and a NUL in a field value is malformed (RFC 9113
        // §8.2.1).
        guard authorization.count > prefix,
            zip(authorization, UnsafeRawBufferPointer(start: bearer.utf8Start, count: prefix))
                .allSatisfy({ $0 == $1 || ($1 != UInt8(ascii: " ") && $0 | 0x20 == $1) })
        else { return .invalidProviderToken }
        let jwt = UnsafeRawBufferPointer(rebasing: authorization[prefix...])
        let time = now()
        if !state.token.isEmpty && jwt.elementsEqual(state.token) {
            return Self.age(of: state.tokenIssuedAt, at: time) > Self.maximumTokenAge ? .expiredProviderToken : nil
        }
        let token: ProviderToken
        do { token = try ProviderToken(jwt) } catch {
            faults.note(error)
            return .invalidProviderToken
        }
        guard let key = keys[token.keyID] else {
            faults.note(.unknownKey(keyID: token.keyID, known: keys.keys.sorted()))
            return .invalidProviderToken
        }
        guard token.teamID == key.teamID else {
            faults.note(.teamMismatch(issuer: token.teamID, keyID: token.keyID, keyTeam: key.teamID))
            return .invalidProviderToken
        }
        guard key.publicKey?.isValidSignature(token.signature, for: SHA256.hash(data: token.signedBytes)) == true else {
            faults.note(.signature(keyID: token.keyID))
            return .invalidProviderToken
        }
        if let bound = state.boundKeyID, bound != token.keyID { return .unrelatedKeyIdInToken }
        let age = Self.age(of: token.issuedAt, at: time)
        if age < -Self.maximumClockSkew {
            faults.note(.issuedInFuture(seconds: -age, allowedSkew: Self.maximumClockSkew))
            return .invalidProviderToken
        }
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
    /// `iat`, whole seconds (a fractional NumericDate rounded down).
    var issuedAt: Int64
    var signature: P256.Signing.ECDSASignature
    var signedBytes: [UInt8]

    /// Three base64url parts: a header with alg ES256 and a kid, claims with an iss string and
    /// an iat NumericDate, and a 64-byte raw signature; the error names the part or claim at
    /// fault. `iat` is RFC 7519's NumericDate (§2): a JSON number of seconds since 1970,
    /// integer or not (`1764140000.25` is one; `"1764140000"` and `true` are not).
    init(_ jwt: UnsafeRawBufferPointer) throws(ProviderTokenFault) {
        let parts = jwt.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3 else {
            throw .parts(parts.count)
        }
        guard let headerData = Self.base64URL(parts[0]), let header = Self.object(headerData) else {
            throw .headerNotJSON
        }
        guard let claimsData = Self.base64URL(parts[1]), let claims = Self.object(claimsData) else {
            throw .claimsNotJSON
        }
        guard let signatureBytes = Self.base64URL(parts[2]), signatureBytes.count == 64,
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes)
        else { throw .signatureNotES256 }
        guard header["alg"] as? String == "ES256" else {
            throw .algorithm(Self.describe(header["alg"]))
        }
        guard let keyID = header["kid"] as? String else {
            throw .keyID(Self.describe(header["kid"]))
        }
        // RFC 7515 §4.1.11: extensions named critical must be understood, or the JWS refused;
        // the sink understands none (APNs' tokens carry alg and kid only).
        if let critical = header["crit"] {
            throw .critical(Self.describe(critical))
        }
        guard let teamID = claims["iss"] as? String else {
            throw .issuer(Self.describe(claims["iss"]))
        }
        self.keyID = keyID
        self.teamID = teamID
        issuedAt = try Self.numericDate(claimsData, claims["iat"])
        self.signature = signature
        signedBytes = Array(jwt[..<(parts[1].endIndex)])
    }

    /// `iat` as a NumericDate: JSON's number, decoded by `JSONDecoder` into a `Double` (which,
    /// unlike `JSONSerialization`'s `NSNumber`, takes neither `true` nor a string for one).
    static func numericDate(_ claims: Data, _ value: Any?) throws(ProviderTokenFault) -> Int64 {
        struct IssuedAt: Decodable { var iat: Double }
        guard let seconds = try? JSONDecoder().decode(IssuedAt.self, from: claims).iat else {
            throw .issuedAtNotNumericDate(describe(value))
        }
        guard seconds.isFinite else {
            throw .issuedAtNoTime(seconds)
        }
        // Far outside Int64 (1e300): saturated, then judged as any time that old or new.
        if seconds >= 9.2e18 { return .max }
        if seconds <= -9.2e18 { return .min }
        return Int64(seconds.rounded(.down))
    }

    /// A claim's value as a message quotes it: `"1764140000"` (a string), `true`, `missing`.
    static func describe(_ value: Any?) -> String {
        guard let value else { return "missing" }
        if let text = value as? String { return "the string \"\(text.prefix(40))\"" }
        if let data = try? JSONSerialization.data(withJSONObject: [value], options: [.fragmentsAllowed]),
            let text = String(data: data, encoding: .utf8)
        {
            return String(text.dropFirst().dropLast().prefix(40))
        }
        return "\(type(of: value))"
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

/// Why a provider token is refused: the part or claim at fault, with what it held (claims
/// quoted as `ProviderToken.describe` quotes them), said as the rest of "the provider token is
/// refused: …".
public enum ProviderTokenFault: Error, Hashable, Sendable, CustomStringConvertible {
    /// Not three base64url parts.
    case parts(Int)
    case headerNotJSON
    case claimsNotJSON
    case signatureNotES256
    /// The header's alg, kid or crit, as quoted.
    case algorithm(String)
    case keyID(String)
    case critical(String)
    /// The iss claim as quoted.
    case issuer(String)
    /// The iat claim as quoted: no JSON number.
    case issuedAtNotNumericDate(String)
    /// A JSON number that is no time (infinite).
    case issuedAtNoTime(Double)
    /// The kid names none of the sink's keys (given, sorted).
    case unknownKey(keyID: String, known: [String])
    /// The iss is not the key's team.
    case teamMismatch(issuer: String, keyID: String, keyTeam: String)
    /// The signature is not the key's.
    case signature(keyID: String)
    /// iat this many seconds ahead of the sink's clock, past the skew it allows.
    case issuedInFuture(seconds: Int64, allowedSkew: Int64)

    public var description: String {
        switch self {
        case .parts(let count):
            "it is \(count) part\(count == 1 ? "" : "s"), not a JWT's three (header.claims.signature)"
        case .headerNotJSON: "its header is not base64url of a JSON object"
        case .claimsNotJSON: "its claims are not base64url of a JSON object"
        case .signatureNotES256: "its signature is not a 64-byte ES256 signature (r ‖ s)"
        case .algorithm(let alg): "its header's alg is \(alg), not \"ES256\""
        case .keyID(let kid): "its header's kid is \(kid), not a key id string"
        case .critical(let critical):
            "its header names \(critical) as crit: extensions the sink does not understand, so it must refuse the token (RFC 7515 §4.1.11)"
        case .issuer(let iss): "its iss claim is \(iss), not a team id string"
        case .issuedAtNotNumericDate(let iat):
            "its iat claim is \(iat), not a NumericDate (a JSON number of seconds since 1970, RFC 7519 §2)"
        case .issuedAtNoTime(let seconds): "its iat claim \(seconds) is no time (seconds since 1970)"
        case .unknownKey(let keyID, let known):
            "its kid \(keyID) names no key the sink was given (\(known.joined(separator: ", ")))"
        case .teamMismatch(let issuer, let keyID, let keyTeam):
            "its iss \(issuer) is not key \(keyID)'s team (\(keyTeam))"
        case .signature(let keyID): "its signature is not key \(keyID)'s over its header and claims"
        case .issuedInFuture(let seconds, let skew):
            "its iat is \(seconds) s in the future (the sink allows \(skew) s of clock skew)"
        }
    }
}

/// The distinct reasons provider tokens were refused, each said once to `report` (the sink
/// logs them on standard error) and counted: a provider sending the same bad token 100,000
/// times gets one line, with the count in `counts`.
public final class TokenFaults: Sendable {
    /// Each fault remembered and its count; the faults past the memory, counted together.
    private let seen = NIOLockedValueBox<(counts: [ProviderTokenFault: Int], unremembered: Int)>(([:], 0))
    private let report: @Sendable (String) -> Void
    /// Distinct faults remembered; past it, new ones are counted in `unremembered`.
    static let memory = 64

    public init(report: @escaping @Sendable (String) -> Void = { _ in }) { self.report = report }

    func note(_ fault: ProviderTokenFault) {
        let first = seen.withLockedValue { seen -> Bool in
            if let count = seen.counts[fault] {
                seen.counts[fault] = count + 1
                return false
            }
            guard seen.counts.count < Self.memory else {
                seen.unremembered += 1
                return false
            }
            seen.counts[fault] = 1
            return true
        }
        if first { report("403 InvalidProviderToken: the provider token is refused: \(fault)") }
    }

    /// Each distinct fault and how many tokens it refused.
    public var counts: [ProviderTokenFault: Int] { seen.withLockedValue { $0.counts } }
    /// Tokens refused for faults past the first `memory` distinct ones.
    public var unremembered: Int { seen.withLockedValue { $0.unremembered } }
}
