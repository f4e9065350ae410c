import Crypto
import Foundation
import NIOSSL
import SwiftASN1
import X509

/// Certificates for the sink's TLS: a self-signed pair made at start-up so that clients have
/// something to trust, and the bundle ids a client's push certificate speaks for.
public enum SinkCertificates {
    /// The files `writeSelfSigned` made.
    public struct Files: Sendable, Hashable {
        public var certificate: String
        public var key: String
    }

    /// Makes a P-256 key and a certificate signing itself for `hosts` (names and IP addresses,
    /// in its subject alternative names), valid from a minute ago for a year; writes them to
    /// `directory` (made if missing) as `cert.pem` and `key.pem`, the key readable by its owner
    /// only. A client trusts the sink with `cert.pem` as its CA file.
    /// `validity` replaces that year (tests make expired certificates with it).
    public static func writeSelfSigned(
        into directory: String,
        hosts: [String],
        validity: Range<Date>? = nil
    ) throws -> Files {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName {
            OrganizationName("Fanout")
            CommonName("Fanout mock APNs")
        }
        var alternativeNames: [GeneralName] = []
        for host in Set(hosts + ["localhost", "127.0.0.1", "::1"]).sorted() {
            if let address = try? SocketAddressBytes(host) {
                alternativeNames.append(.ipAddress(ASN1OctetString(contentBytes: ArraySlice(address.bytes))))
            } else {
                alternativeNames.append(.dnsName(host))
            }
        }
        let now = Date()
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: Certificate.PublicKey(key.publicKey),
            notValidBefore: validity?.lowerBound ?? now - 60,
            notValidAfter: validity?.upperBound ?? now + 365 * 24 * 3600,
            issuer: name,
            subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                // Its own trust anchor: OpenSSL-based clients want a CA to trust.
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(digitalSignature: true, keyCertSign: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames(alternativeNames)
            },
            issuerPrivateKey: Certificate.PrivateKey(key)
        )
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        // `tls/` as well as `tls`: one slash between the folder and the file (it said `tls//cert.pem`).
        let folder = directory as NSString
        let files = Files(
            certificate: folder.appendingPathComponent("cert.pem"),
            key: folder.appendingPathComponent("key.pem")
        )
        try Data((try certificate.serializeAsPEM().pemString + "\n").utf8).write(
            to: URL(fileURLWithPath: files.certificate)
        )
        let written = FileManager.default.createFile(
            atPath: files.key,
            contents: Data((key.pemRepresentation + "\n").utf8),
            attributes: [.posixPermissions: 0o600]
        )
        guard written else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: files.key])
        }
        return files
    }

    /// The bundle ids a push certificate speaks for: its subject's UID attributes (Apple puts
    /// the bundle id there), else what its common name says after `Push Services: ` (as in
    /// "Apple Push Services: com.example.app"). Empty when it names none.
    static func topics(of certificate: NIOSSLCertificate) -> [String] {
        guard let der = try? certificate.toDERBytes(), let parsed = try? Certificate(derEncoded: der) else {
            return []
        }
        var userIDs: [String] = []
        var commonNames: [String] = []
        for relativeName in parsed.subject {
            for attribute in relativeName {
                guard let value = String(attribute.value) else { continue }
                if attribute.type == userID { userIDs.append(value) }
                if attribute.type == .RDNAttributeType.commonName { commonNames.append(value) }
            }
        }
        if !userIDs.isEmpty { return userIDs }
        return commonNames.compactMap { name in
            name.range(of: "Push Services: ").map { String(name[$0.upperBound...]) }
        }
    }

    /// 0.9.2342.19200300.100.1.1, the `UID` attribute.
    private static let userID: ASN1ObjectIdentifier = [0, 9, 2342, 19_200_300, 100, 1, 1]
}

/// An IPv4 or IPv6 address in network byte order.
private struct SocketAddressBytes {
    var bytes: [UInt8]

    init(_ text: String) throws {
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
        } else if inet_pton(AF_INET6, text, &v6) == 1 {
            bytes = withUnsafeBytes(of: &v6) { Array($0) }
        } else {
            throw CocoaError(.formatting)
        }
    }
}
