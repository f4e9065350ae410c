import Crypto
import Foundation
import Testing
import _CryptoExtras

@testable import FanoutFCMAuth
@testable import FanoutFCMSink

/// The token endpoint's jwt-bearer grant: assertions signed here with the account's key, as
/// google-auth signs them (docs/fcm.md, "OAuth2"), each claim broken in turn.
@Suite struct FCMTokenGrantTests {
    static let account = try! FCMServiceAccount.generated(project: "fanout-test")
    static let now = 1_800_000_000
    static let tokenURI = "http://127.0.0.1:9/token"

    static func claims(_ change: (inout [String: Any]) -> Void = { _ in }) -> [String: Any] {
        var claims: [String: Any] = [
            "iss": account.clientEmail, "aud": FCMTokenGrant.googleAudience, "iat": now, "exp": now + 3600,
            "scope": "https://www.googleapis.com/auth/cloud-platform https://www.googleapis.com/auth/userinfo.email",
        ]
        change(&claims)
        return claims
    }

    static func assertion(
        _ claims: [String: Any],
        header: [String: Any] = ["alg": "RS256", "typ": "JWT"],
        key: _RSA.Signing.PrivateKey = account.privateKey
    ) throws -> String {
        let head = Base64URL.encode(try JSONSerialization.data(withJSONObject: header))
        let body = Base64URL.encode(try JSONSerialization.data(withJSONObject: claims))
        let signature = try key.signature(
            for: SHA256.hash(data: Data("\(head).\(body)".utf8)),
            padding: .insecurePKCS1v1_5
        )
        return "\(head).\(body).\(Base64URL.encode(signature.rawRepresentation))"
    }

    static func form(_ assertion: String, grant: String = FCMTokenGrant.jwtBearer) -> String {
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~"))
        return "assertion=\(assertion.addingPercentEncoding(withAllowedCharacters: allowed)!)&grant_type="
            + grant.addingPercentEncoding(withAllowedCharacters: allowed)!
    }

    static func check(_ form: String) -> Result<Void, FCMTokenGrant.Refusal> {
        FCMTokenGrant.check(form: form, account: account, tokenURI: tokenURI, now: now)
    }

    @Test func anAssertionAsGoogleAuthSignsItIsGranted() throws {
        #expect(throws: Never.self) { try Self.check(Self.form(Self.assertion(Self.claims()))).get() }
        // The sink's own endpoint as the audience, and FCM's narrow scope.
        let own = try Self.assertion(
            Self.claims {
                $0["aud"] = Self.tokenURI
                $0["scope"] = "https://www.googleapis.com/auth/firebase.messaging"
            }
        )
        #expect(throws: Never.self) { try Self.check(Self.form(own)).get() }
    }

    @Test func aTokenBodyIsWhatGoogleAuthReads() throws {
        let body = FCMTokenGrant.tokenBody("ya29.x", expiresIn: 3599)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
        #expect(object["access_token"] as? String == "ya29.x")
        #expect(object["expires_in"] as? Int == 3599)
        #expect(object["token_type"] as? String == "Bearer")
    }

    static func refusal(_ form: String) -> FCMTokenGrant.Refusal? {
        if case .failure(let refusal) = check(form) { return refusal }
        return nil
    }

    @Test func aSignatureByAnotherKeyIsRefused() throws {
        let other = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let refusal = try #require(Self.refusal(Self.form(Self.assertion(Self.claims(), key: other))))
        #expect(refusal.error == "invalid_grant")
        #expect(refusal.errorDescription == "Invalid JWT Signature.")
        // A signature over other bytes: the claims changed after signing.
        let signed = try Self.assertion(Self.claims())
        let parts = signed.split(separator: ".")
        let forged =
            "\(parts[0]).\(Base64URL.encode(try JSONSerialization.data(withJSONObject: Self.claims { $0["iss"] = "x" }))).\(parts[2])"
        #expect(Self.refusal(Self.form(forged))?.errorDescription == "Invalid JWT Signature.")
    }

    @Test func anAssertionNotRS256IsRefused() throws {
        let refusal = try #require(Self.refusal(Self.form(Self.assertion(Self.claims(), header: ["alg": "none"]))))
        #expect(refusal.errorDescription == "Invalid JWT Signature.")
        #expect(refusal.reason == "the assertion's alg is none, not RS256")
    }

    @Test(arguments: [
        ("iss", "Invalid grant: account not found"), ("aud", "Invalid JWT: Failed audience check."),
    ])
    func aClaimNamingAnotherIsRefused(claim: String, description: String) throws {
        let refusal = try #require(Self.refusal(Self.form(Self.assertion(Self.claims { $0[claim] = "someone@else" }))))
        #expect(refusal.error == "invalid_grant")
        #expect(refusal.errorDescription == description)
    }

    @Test func aScopeThatDoesNotReachFCMIsRefused() throws {
        let refusal = try #require(
            Self.refusal(
                Self.form(
                    Self.assertion(Self.claims { $0["scope"] = "https://www.googleapis.com/auth/userinfo.email" })
                )
            )
        )
        #expect(refusal.error == "invalid_scope")
    }

    @Test(arguments: [
        (-3600 - 10, -10),  // expired
        (400, 3000),  // issued past the skew
        (0, 3601),  // longer than an hour
        (0, 0),  // ends as it starts
    ])
    func anAssertionOutsideItsHourIsRefused(issued: Int, expires: Int) throws {
        let claims = Self.claims {
            $0["iat"] = Self.now + issued
            $0["exp"] = Self.now + expires
        }
        let refusal = try #require(Self.refusal(Self.form(Self.assertion(claims))), "iat +\(issued), exp +\(expires)")
        #expect(refusal.errorDescription == FCMTokenGrant.Refusal.timeDescription)
    }

    @Test func aFormWithoutTheGrantOrTheAssertionIsRefused() throws {
        #expect(Self.refusal("assertion=x")?.error == "invalid_request")
        #expect(Self.refusal(Self.form("x", grant: "client_credentials"))?.error == "unsupported_grant_type")
        #expect(Self.refusal("grant_type=\(FCMTokenGrant.jwtBearer)")?.error == "invalid_request")
        #expect(Self.refusal(Self.form("not.a.jwt"))?.error == "invalid_grant")
        #expect(Self.refusal(Self.form("onlyonepart"))?.error == "invalid_grant")
        // A parameter given twice (RFC 6749 §3.1), however good the first.
        let twice = try Self.form(Self.assertion(Self.claims())) + "&grant_type=client_credentials"
        #expect(
            Self.refusal(twice)
                == FCMTokenGrant.Refusal(
                    error: "invalid_request",
                    errorDescription: "Duplicate parameter: grant_type",
                    reason: "grant_type given more than once in the form"
                )
        )
    }

    @Test func theAccountFileIsReadBackWithItsKey() throws {
        let folder = NSTemporaryDirectory() + "fanout-fcm-account-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/service-account.json"
        try Self.account.json(tokenURI: Self.tokenURI).write(toFile: path, atomically: true, encoding: .utf8)
        let read = try FCMServiceAccount(file: path)
        #expect(read.clientEmail == Self.account.clientEmail)
        #expect(read.privateKeyID == Self.account.privateKeyID)
        #expect(read.projectID == "fanout-test")
        // The key read back verifies what the original signs.
        #expect(throws: Never.self) {
            try FCMTokenGrant.check(
                form: Self.form(Self.assertion(Self.claims())),
                account: read,
                tokenURI: nil,
                now: Self.now
            ).get()
        }
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any]
        )
        #expect(object["token_uri"] as? String == Self.tokenURI)
        #expect(object["type"] as? String == "service_account")
    }

    @Test func aFileThatIsNoServiceAccountIsNamedWithWhatIsWrong() throws {
        let folder = NSTemporaryDirectory() + "fanout-fcm-account-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for (text, problem) in [
            ("[1]", "not a JSON object"), (#"{"type":"user"}"#, #""type" is user, not "service_account""#),
            (#"{"type":"service_account"}"#, #"no "private_key" string"#), ("{", "cannot read it as JSON"),
        ] {
            let path = folder + "/account.json"
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            #expect {
                try FCMServiceAccount(file: path)
            } throws: { error in
                guard let error = error as? FCMServiceAccount.FileError else { return false }
                return error.path == path && error.problem.hasPrefix(problem)
            }
        }
    }
}

/// The sender's assertion (`FCMAssertion`, FanoutFCMAuth) and the sink's grant are one
/// grant: what the one signs, the other takes.
@Suite struct SenderAssertionGrantTests {
    @Test func theSinkGrantsWhatTheSenderSigns() throws {
        let account = try FCMServiceAccount.generated(project: "fanout-test")
        let now = 1_800_000_000
        let assertion = try FCMAssertion.signed(by: account, issuedAt: now)
        #expect(throws: Never.self) {
            try FCMTokenGrant.check(form: FCMAssertion.form(assertion), account: account, tokenURI: nil, now: now + 10)
                .get()
        }
        // And refuses it past its hour.
        guard
            case .failure(let late) = FCMTokenGrant.check(
                form: FCMAssertion.form(assertion),
                account: account,
                tokenURI: nil,
                now: now + 3600
            )
        else {
            Issue.record("an assertion past its hour was granted")
            return
        }
        #expect(late.errorDescription == FCMTokenGrant.Refusal.timeDescription)
    }
}
