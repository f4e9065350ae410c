// The sink's provider-token (JWT) verifier fed arbitrary tokens.
//
//   input := mode(1) rest
//
// mode even: `rest` is the authorization value as sent.
// mode odd:  `rest` is header JSON, 0x00, claims JSON: the harness base64url-encodes them and
//            signs them with the configured key, so every input reaches the claims and the
//            clock arithmetic behind a valid signature (where Int64.min once trapped).
//
// Each value is checked twice on one connection, as a client reusing its token would. Nothing
// may trap, and a token accepted must have been issued at most an hour before the sink's clock
// and at most `maximumClockSkew` after it.
import Crypto
import Foundation
import FuzzSupport

@testable import FanoutSink

let header = #"{"alg":"ES256","kid":"ABC123DEFG"}"#
let claims = [
    #"{"iss":"DEF123GHIJ","iat":1700000000}"#, #"{"iss":"DEF123GHIJ","iat":-9223372036854775808}"#,
    #"{"iss":"DEF123GHIJ","iat":4102444800}"#, #"{"iss":"DEF123GHIJ","iat":1.7e9}"#,
]
var seeds = claims.map { [1] + Array(header.utf8) + [0] + Array($0.utf8) }
seeds.append([0] + Array(signed(Array(header.utf8), Array(claims[0].utf8)).utf8))
runFuzzer(seeds: seeds, test)

/// The sink's side: one configured key and a clock that stands still.
enum Verifier {
    static let now: Int64 = 1_700_000_000
    /// Made once: deriving the public key is a scalar multiplication, as costly as a signature.
    /// (Not `Sendable` in swift-crypto; libFuzzer calls `test` on one thread, and the key is
    /// never mutated.)
    nonisolated(unsafe) static let privateKey = try! P256.Signing.PrivateKey(
        rawRepresentation: [UInt8](repeating: 7, count: 32)
    )
    static let authentication = TokenAuthentication(
        keys: [.init(keyID: "ABC123DEFG", teamID: "DEF123GHIJ", publicKey: privateKey.publicKey)],
        now: { now }
    )
}

func test(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    var input = FuzzInput(start, count)
    let authorization: [UInt8]
    if input.byte() & 1 == 0 {
        authorization = Array(input.bytes)
    } else {
        let parts = input.bytes.split(separator: 0, maxSplits: 1, omittingEmptySubsequences: false)
        authorization = Array(signed(Array(parts[0]), parts.count > 1 ? Array(parts[1]) : []).utf8)
    }
    var state = TokenAuthentication.ConnectionState()
    authorization.withUnsafeBytes { value in
        for _ in 0..<2 {
            guard Verifier.authentication.check(value, state: &state) == nil else { continue }
            let issuedAt = state.tokenIssuedAt
            precondition(
                issuedAt <= Verifier.now + TokenAuthentication.maximumClockSkew
                    && issuedAt >= Verifier.now - TokenAuthentication.maximumTokenAge,
                "accepted a token issued at \(issuedAt), the clock being \(Verifier.now)"
            )
        }
    }
    return 0
}

/// `bearer HEADER.CLAIMS.SIGNATURE`, signed with the configured key.
func signed(_ header: [UInt8], _ claims: [UInt8]) -> String {
    let signedPart = base64URL(header) + "." + base64URL(claims)
    let signature = try! Verifier.privateKey.signature(for: Data(signedPart.utf8))
    return "bearer " + signedPart + "." + base64URL(Array(signature.rawRepresentation))
}

func base64URL(_ bytes: [UInt8]) -> String {
    Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        .replacingOccurrences(of: "=", with: "")
}
