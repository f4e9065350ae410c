import FanoutTestSupport
import Foundation
import Testing

@testable import FanoutFCMAuth

/// The assertion a sender signs for its access token, checked by a JWT library nobody here wrote
/// (PyJWT with cryptography): the signature against the account's key, the claims as google-auth
/// writes them.
@Suite(.requires(.python3, .jwt, .cryptography)) struct FCMAssertionPeerTests {
    static let account = try! FCMServiceAccount.generated(project: "fanout-test")

    /// PyJWT's reading of `assertion` against `key`'s public half and `audience`; `nil` when it
    /// refused it.
    static func verified(
        _ assertion: String,
        key account: FCMServiceAccount = account,
        audience: String = FCMAssertion.googleAudience
    ) throws -> [String: Any]? {
        let folder = NSTemporaryDirectory() + "fanout-fcm-auth-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try account.publicKey.pemRepresentation.write(toFile: folder + "/key.pem", atomically: true, encoding: .utf8)
        let result = try PeerProcess.run(
            "python3",
            [PythonPeer.path("verify_assertion.py"), folder + "/key.pem", audience],
            input: Data(assertion.utf8)
        )
        guard result.status == 0 else { return nil }
        return try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any]
    }

    @Test func pyJWTVerifiesTheSignatureAndReadsGoogleAuthsClaims() throws {
        let now = Int(Date().timeIntervalSince1970)
        let assertion = try FCMAssertion.signed(by: Self.account, issuedAt: now)
        let read = try #require(try Self.verified(assertion))
        let header = try #require(read["header"] as? [String: String])
        #expect(header == ["alg": "RS256", "typ": "JWT", "kid": Self.account.privateKeyID])
        let claims = try #require(read["claims"] as? [String: Any])
        #expect(claims["iss"] as? String == Self.account.clientEmail)
        #expect(claims["aud"] as? String == "https://oauth2.googleapis.com/token")
        #expect(claims["scope"] as? String == "https://www.googleapis.com/auth/firebase.messaging")
        #expect(claims["iat"] as? Int == now)
        #expect(claims["exp"] as? Int == now + 3600)
    }

    @Test func anotherKeyOrAnotherAudienceIsRefusedByIt() throws {
        let now = Int(Date().timeIntervalSince1970)
        let assertion = try FCMAssertion.signed(by: Self.account, issuedAt: now)
        let other = try FCMServiceAccount.generated(project: "fanout-test")
        #expect(try Self.verified(assertion, key: other) == nil)
        #expect(try Self.verified(assertion, audience: "https://127.0.0.1/token") == nil)
        // Expired an hour ago.
        #expect(try Self.verified(try FCMAssertion.signed(by: Self.account, issuedAt: now - 7200)) == nil)
    }
}

@Suite struct FCMAssertionFormTests {
    @Test func theFormCarriesTheAssertionAndTheGrantTypeEncoded() throws {
        #expect(
            FCMAssertion.form("a.b.c")
                == "assertion=a.b.c&grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer"
        )
        // The form decodes to the grant type.
        let encoded = try #require(FCMAssertion.form("x").split(separator: "=").last)
        #expect(encoded.removingPercentEncoding == FCMAssertion.grantType)
    }
}
