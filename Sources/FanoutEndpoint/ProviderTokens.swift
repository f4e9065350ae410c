import Crypto
import Foundation
import NIOConcurrencyHelpers

/// APNs provider tokens for token auth (docs/apns.md, "Auth"): an ES256 JWT signed with the
/// team's `.p8` key, sent as `authorization: bearer <jwt>`, signed once and reused until it is
/// `refreshInterval` old (APNs: no more often than every 20 minutes, no less than every 60).
///
/// ```
///   base64url({"alg":"ES256","kid":"<key id>"}) . base64url({"iss":"<team id>","iat":<seconds>}) . base64url(r ‖ s)
/// ```
public final class ProviderTokens: Sendable {
    public let keyID: String
    public let teamID: String
    public let refreshInterval: Duration
    /// The key's raw scalar (swift-crypto's key type is not `Sendable`); a key is made from it
    /// for each signature, once per refresh.
    private let keyBytes: Data
    private let now: @Sendable () -> Int64
    private let state = NIOLockedValueBox<(value: String, issuedAt: Int64, generation: Int)?>(nil)

    /// The refresh intervals APNs allows.
    public static let allowedRefresh: ClosedRange<Duration> = .seconds(20 * 60) ... .seconds(60 * 60)

    /// A signer for the key in `pem` (an APNs `.p8`: a PKCS#8 P-256 private key).
    public init(
        pem: String,
        keyID: String,
        teamID: String,
        refreshInterval: Duration = .seconds(50 * 60),
        now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) }
    ) throws {
        keyBytes = try P256.Signing.PrivateKey(pemRepresentation: pem).rawRepresentation
        self.keyID = keyID
        self.teamID = teamID
        self.refreshInterval = refreshInterval
        self.now = now
    }

    /// The `authorization` value to send now, and its generation: a connection that saw an
    /// older generation rebuilds its fields.
    public func current() -> (value: String, generation: Int) {
        state.withLockedValue { state in
            let time = now()
            if let state, time - state.issuedAt < refreshInterval.components.seconds {
                return (state.value, state.generation)
            }
            let generation = (state?.generation ?? 0) + 1
            let value = "bearer " + sign(issuedAt: time)
            state = (value, time, generation)
            return (value, generation)
        }
    }

    /// A JWT issued at `issuedAt` (UNIX seconds).
    public func sign(issuedAt: Int64) -> String {
        let header = Self.base64URL(Data(#"{"alg":"ES256","kid":"\#(keyID)"}"#.utf8))
        let claims = Self.base64URL(Data(#"{"iss":"\#(teamID)","iat":\#(issuedAt)}"#.utf8))
        let input = header + "." + claims
        let key = try! P256.Signing.PrivateKey(rawRepresentation: keyBytes)  // checked in init
        let signature = (try? key.signature(for: Data(input.utf8)).rawRepresentation) ?? Data()
        return input + "." + Self.base64URL(signature)
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
