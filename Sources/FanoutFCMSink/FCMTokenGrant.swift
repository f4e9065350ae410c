import Crypto
import FanoutFCMAuth
import Foundation
import _CryptoExtras

/// The sink's token endpoint: an OAuth2 jwt-bearer grant (RFC 7523) as Google's
/// `oauth2.googleapis.com/token` answers it (docs/fcm.md, "OAuth2").
///
/// ```
///   POST /token   content-type: application/x-www-form-urlencoded
///   grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=HEADER.CLAIMS.SIGNATURE
///
///   HEADER  {"alg":"RS256","typ":"JWT","kid":"<private_key_id>"}
///   CLAIMS  {"iss":"<client_email>","scope":"… https://www.googleapis.com/auth/cloud-platform …",
///            "aud":"https://oauth2.googleapis.com/token","iat":T,"exp":T+3600}
///
///   200 {"access_token":"ya29.…","expires_in":3599,"token_type":"Bearer"}
///   400 {"error":"invalid_grant","error_description":"Invalid JWT Signature."}
/// ```
///
/// The assertion must be signed (RS256) by the service account's key, issued by its e-mail, for
/// Google's token endpoint or this one, with a scope that reaches FCM, and within its hour. Each
/// refusal is Google's OAuth error for it where one is recorded (docs/fcm.md); the sink logs which.
/// Not on the hot path: an SDK asks once an hour.
public enum FCMTokenGrant {
    /// The grant type of a signed assertion.
    public static let jwtBearer = FCMAssertion.grantType
    /// The audience google-auth writes whatever the file's `token_uri` (docs/fcm.md).
    public static let googleAudience = FCMAssertion.googleAudience
    /// Scopes that reach FCM: firebase-admin asks for cloud-platform among others.
    static let scopes: Set<Substring> = [
        "https://www.googleapis.com/auth/cloud-platform", "https://www.googleapis.com/auth/firebase.messaging",
    ]
    /// How far in the future an `iat` may be (the two clocks' skew).
    static let skew = 300
    /// An assertion lives at most an hour.
    static let longestAssertion = FCMAssertion.longestLifetime

    /// A refusal: the OAuth error, its description, and what the sink's log says.
    public struct Refusal: Error, Equatable, Sendable, CustomStringConvertible {
        public var error: String
        public var errorDescription: String
        /// The check that failed, for the log: "the assertion's signature does not verify …".
        public var reason: String
        public var status = 400

        public var description: String { "\(status) \(error): \(reason)" }

        /// `{"error":"…","error_description":"…"}`.
        public var body: String {
            "{\"error\":\(FCMServiceAccount.quoted(error)),\"error_description\":\(FCMServiceAccount.quoted(errorDescription))}"
        }

        static func invalidGrant(_ description: String, _ reason: String) -> Refusal {
            Refusal(error: "invalid_grant", errorDescription: description, reason: reason)
        }

        /// A form without a parameter the grant needs, or with one twice.
        static func invalidRequest(_ description: String, _ reason: String) -> Refusal {
            Refusal(error: "invalid_request", errorDescription: description, reason: reason)
        }

        /// A parameter the grant needs, missing.
        static func missing(_ parameter: String) -> Refusal {
            invalidRequest("Missing required parameter: \(parameter)", "no \(parameter) in the form")
        }
        static let timeDescription =
            "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim."
    }

    /// Checks a token request's form against `account`; `now` is the wall clock in UNIX seconds.
    /// `tokenURI` is where the sink's endpoint is (an assertion may name it as its audience).
    public static func check(
        form: String,
        account: FCMServiceAccount,
        tokenURI: String?,
        now: Int
    ) -> Result<Void, Refusal> {
        let (fields, repeated) = Self.form(form)
        // RFC 6749 §3.1: "Request and response parameters MUST NOT be included more than once."
        if let repeated {
            return .failure(
                .invalidRequest("Duplicate parameter: \(repeated)", "\(repeated) given more than once in the form")
            )
        }
        guard let grant = fields["grant_type"] else { return .failure(.missing("grant_type")) }
        guard grant == jwtBearer else {
            return .failure(
                Refusal(
                    error: "unsupported_grant_type",
                    errorDescription: "Invalid grant_type: \(grant)",
                    reason: "grant_type \(grant), not \(jwtBearer)"
                )
            )
        }
        guard let assertion = fields["assertion"] else { return .failure(.missing("assertion")) }
        let parts = assertion.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerData = Base64URL.decode(parts[0]),
            let claimsData = Base64URL.decode(parts[1]),
            let signature = Base64URL.decode(parts[2]),
            let header = try? JSONSerialization.jsonObject(with: headerData) as? [String: Any],
            let claims = try? JSONSerialization.jsonObject(with: claimsData) as? [String: Any]
        else {
            return .failure(
                .invalidGrant(
                    "Invalid JWT: the assertion is not a JWT.",
                    "the assertion is not three base64url parts of JSON"
                )
            )
        }
        guard header["alg"] as? String == "RS256" else {
            return .failure(
                .invalidGrant(
                    "Invalid JWT Signature.",
                    "the assertion's alg is \(header["alg"] ?? "absent"), not RS256"
                )
            )
        }
        let signed = Data(assertion.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        guard
            account.publicKey.isValidSignature(
                .init(rawRepresentation: signature),
                for: SHA256.hash(data: signed),
                padding: .insecurePKCS1v1_5
            )
        else {
            return .failure(
                .invalidGrant(
                    "Invalid JWT Signature.",
                    "the assertion's signature does not verify with \(account.clientEmail)'s key \(account.privateKeyID)"
                )
            )
        }
        guard let issuer = claims["iss"] as? String, issuer == account.clientEmail else {
            return .failure(
                .invalidGrant(
                    "Invalid grant: account not found",
                    "iss is \(claims["iss"] ?? "absent"), not \(account.clientEmail)"
                )
            )
        }
        let audience = claims["aud"] as? String
        guard let audience, audience == googleAudience || audience == tokenURI else {
            return .failure(
                .invalidGrant(
                    "Invalid JWT: Failed audience check.",
                    "aud is \(audience ?? "absent"), neither \(googleAudience) nor \(tokenURI ?? "this endpoint")"
                )
            )
        }
        let scope = (claims["scope"] as? String)?.split(separator: " ") ?? []
        guard scope.contains(where: scopes.contains) else {
            return .failure(
                Refusal(
                    error: "invalid_scope",
                    errorDescription: "Invalid OAuth scope or ID token audience provided.",
                    reason:
                        "scope \(scope.joined(separator: " ")) reaches no FCM scope (cloud-platform or firebase.messaging)"
                )
            )
        }
        guard let issued = (claims["iat"] as? NSNumber)?.intValue, let expires = (claims["exp"] as? NSNumber)?.intValue
        else {
            return .failure(.invalidGrant(Refusal.timeDescription, "no numeric iat and exp"))
        }
        guard issued <= now + skew, expires > now, expires > issued, expires - issued <= longestAssertion else {
            return .failure(
                .invalidGrant(
                    Refusal.timeDescription,
                    "iat \(issued), exp \(expires) at \(now): valid from at most \(skew) s ahead, until after now, for at most \(longestAssertion) s"
                )
            )
        }
        return .success(())
    }

    /// `{"access_token":"…","expires_in":N,"token_type":"Bearer"}`.
    public static func tokenBody(_ token: String, expiresIn seconds: Int) -> String {
        "{\"access_token\":\(FCMServiceAccount.quoted(token)),\"expires_in\":\(seconds),\"token_type\":\"Bearer\"}"
    }

    /// An `application/x-www-form-urlencoded` body's fields, decoded, and the first name given
    /// more than once, if one was.
    static func form(_ text: String) -> (fields: [String: String], repeated: String?) {
        var fields = [String: String]()
        var repeated: String?
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decoded(_ part: Substring) -> String {
                part.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(part)
            }
            let name = decoded(parts[0])
            if fields[name] != nil {
                repeated = repeated ?? name
            } else {
                fields[name] = parts.count > 1 ? decoded(parts[1]) : ""
            }
        }
        return (fields, repeated)
    }
}
