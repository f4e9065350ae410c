import FanoutTestSupport
import Testing

/// OpenSSL, which the command tests use to make keys and certificates nobody here wrote.
enum OpenSSL {
    /// Runs `openssl arguments…`, requiring it to succeed.
    static func run(_ arguments: [String]) throws {
        let result = try PeerProcess.run("openssl", arguments)
        try #require(result.status == 0, "openssl \(arguments.joined(separator: " ")): \(result.errors)")
    }

    /// A P-256 private key in PKCS#8 PEM at `path`: what an APNs `.p8` holds.
    static func makeP256Key(at path: String) throws {
        try run(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", path])
    }
}
