import Crypto
import Foundation
import _CryptoExtras

/// The assertion a sender signs with its service account's key to ask a token endpoint for an
/// access token: a JWT of the OAuth2 jwt-bearer grant (RFC 7523), as google-auth signs it
/// (docs/fcm.md, "OAuth2"), and the form that carries it.
///
/// ```
///   HEADER  {"alg":"RS256","typ":"JWT","kid":"<private_key_id>"}
///   CLAIMS  {"iss":"<client_email>","scope":"https://www.googleapis.com/auth/firebase.messaging",
///            "aud":"https://oauth2.googleapis.com/token","iat":T,"exp":T+3600}
///   JWT     base64url(HEADER) "." base64url(CLAIMS) "." base64url(RSASSA-PKCS1-v1_5 SHA-256 signature)
///
///   POST token_uri   assertion=JWT&grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer
/// ```
///
/// The sink's token endpoint checks what this signs (`FCMTokenGrant` in FanoutFCMSink): the two
/// are one grant, written once for the sender and the mock.
public enum FCMAssertion {
    /// The grant type of a signed assertion.
    public static let grantType = "urn:ietf:params:oauth:grant-type:jwt-bearer"
    /// The audience google-auth writes, whatever the account's `token_uri`.
    public static let googleAudience = "https://oauth2.googleapis.com/token"
    /// FCM's own scope (firebase-admin asks for cloud-platform among others; either reaches FCM).
    public static let messagingScope = "https://www.googleapis.com/auth/firebase.messaging"
    /// An assertion lives at most an hour.
    public static let longestLifetime = 3600

    /// The assertion `account` signs at `issuedAt` (UNIX seconds), good for `lifetime` seconds.
    public static func signed(
        by account: FCMServiceAccount,
        scope: String = messagingScope,
        audience: String = googleAudience,
        issuedAt: Int,
        lifetime: Int = longestLifetime
    ) throws -> String {
        let quoted = FCMServiceAccount.quoted
        let header = #"{"alg":"RS256","typ":"JWT","kid":"# + quoted(account.privateKeyID) + "}"
        let claims =
            "{\"iss\":\(quoted(account.clientEmail)),\"scope\":\(quoted(scope)),\"aud\":\(quoted(audience)),"
            + "\"iat\":\(issuedAt),\"exp\":\(issuedAt + lifetime)}"
        let signed = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(claims.utf8))
        let signature = try account.privateKey.signature(
            for: SHA256.hash(data: Data(signed.utf8)),
            padding: .insecurePKCS1v1_5
        )
        return signed + "." + Base64URL.encode(signature.rawRepresentation)
    }

    /// The token request's body (`application/x-www-form-urlencoded`) for `assertion`.
    public static func form(_ assertion: String) -> String {
        // A JWT is base64url and dots: nothing in it needs escaping.
        "assertion=\(assertion)&grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer"
    }
}
