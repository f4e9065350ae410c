import Foundation
import Synchronization
import Testing

/// A program or Python module nobody here wrote that a test talks to (nghttpd, h2load, curl,
/// Python's h2): what `.requires(…)` names, so that a test is skipped by name with the reason
/// when its peer is missing, or fails when `FANOUT_REQUIRE_PEERS=1` (as CI sets) says every peer
/// must be there.
public struct Peer: Sendable, Hashable, CustomStringConvertible {
    enum Kind: Hashable {
        /// An executable looked up on PATH, as `PeerProcess` starts it.
        case program
        /// A module `python3 -c 'import NAME'` imports.
        case pythonModule
        /// A command that exits 0 where the capability is there (`arguments`, run once).
        case works([String])
    }

    let kind: Kind
    /// The program's name on PATH, or the module's import name.
    public let name: String

    /// A program found on PATH.
    public static func program(_ name: String) -> Peer { Peer(kind: .program, name: name) }

    /// A module python3 imports (the import name, not the PyPI name: `jwt` for PyJWT).
    public static func python(_ module: String) -> Peer { Peer(kind: .pythonModule, name: module) }

    public var description: String {
        switch kind {
        case .program: name
        case .pythonModule: "Python's \(name) module"
        case .works(let arguments): "\(name) (`\(arguments.joined(separator: " "))` exits 0)"
        }
    }

    /// Whether a missing peer fails the test that needs it instead of skipping it:
    /// `FANOUT_REQUIRE_PEERS=1`, which scripts/test.sh (CI's `.ci/run`) exports, so that CI never
    /// passes by skipping.
    public static let required: Bool = ProcessInfo.processInfo.environment["FANOUT_REQUIRE_PEERS"] == "1"

    /// Whether the peer is there: the program on PATH, the module importable by python3. Looked
    /// up once a run.
    public var isAvailable: Bool {
        if let known = Self.lookedUp.withLock({ $0[self] }) { return known }
        let found: Bool
        switch kind {
        case .program:
            found = Self.searchPath.contains { FileManager.default.isExecutableFile(atPath: $0 + "/" + name) }
        case .pythonModule:
            found =
                Peer.python3.isAvailable
                && (try? PeerProcess.run("python3", ["-c", "import \(name)"], timeout: .seconds(30)).status) == 0
        case .works(let arguments):
            found =
                (try? PeerProcess.run(arguments[0], Array(arguments.dropFirst()), timeout: .seconds(30)).status) == 0
        }
        Self.lookedUp.withLock { $0[self] = found }
        return found
    }

    private static let lookedUp = Mutex<[Peer: Bool]>([:])

    private static let searchPath: [String] =
        (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
}

extension Peer {
    // The programs the tests start (scripts/test.sh installs them).
    public static let nghttpd = program("nghttpd")
    public static let h2load = program("h2load")
    public static let nghttp = program("nghttp")
    public static let chromium = program("chromium")
    public static let prometheus = program("prometheus")
    public static let promtool = program("promtool")
    public static let curl = program("curl")
    public static let openssl = program("openssl")
    public static let valgrind = program("valgrind")
    public static let podman = program("podman")
    public static let python3 = program("python3")
    /// Real servers for the return wave's backend (Debian's).
    public static let nginx = program("nginx")
    public static let gunicorn = program("gunicorn")
    public static let checkJSONSchema = program("check-jsonschema")
    public static let kubernetesValidate = program("kubernetes-validate")
    /// New user, network and mount namespaces (`unshare -rnm`): refused where user namespaces
    /// are off (a container's default seccomp profile), not merely where unshare is missing.
    public static let namespaces = Peer(kind: .works(["unshare", "-rnm", "true"]), name: "user namespaces")

    // The Python modules the peer scripts in Tests/*/Peers import (PyPI names in scripts/test.sh).
    public static let h2 = python("h2")
    public static let hpack = python("hpack")
    public static let hyperframe = python("hyperframe")
    public static let jwt = python("jwt")
    public static let cryptography = python("cryptography")
    public static let prometheusClient = python("prometheus_client")
    public static let hdrh = python("hdrh")
    public static let jsonschema = python("jsonschema")
    public static let pillow = python("PIL")
    public static let yaml = python("yaml")
    public static let aioapns = python("aioapns")
    public static let firebaseAdmin = python("firebase_admin")
}

/// Skips a test whose peers are missing, saying which and why; fails it instead under
/// `FANOUT_REQUIRE_PEERS=1`. On a suite it applies to each test in it, so each skipped test is
/// named.
public struct PeerRequirement: TestTrait, SuiteTrait {
    public let peers: [Peer]
    public let sourceLocation: SourceLocation

    public var isRecursive: Bool { true }

    public func prepare(for test: Test) async throws {
        // A suite's tests are judged one by one (the trait is recursive), so each is named.
        guard !test.isSuite else { return }
        let missing = peers.filter { !$0.isAvailable }
        guard !missing.isEmpty else { return }
        if Peer.required { throw MissingPeers(peers: missing) }
        let reason = "needs \(missing.map(\.description).joined(separator: ", ")), not installed"
        try await ConditionTrait.disabled(Comment(rawValue: reason), sourceLocation: sourceLocation).prepare(for: test)
    }

    /// The peers a test needs that are missing while `FANOUT_REQUIRE_PEERS=1` says none may be.
    public struct MissingPeers: Error, CustomStringConvertible {
        public let peers: [Peer]
        public var description: String {
            "needs \(peers.map(\.description).joined(separator: ", ")), not installed "
                + "(FANOUT_REQUIRE_PEERS=1: a missing peer fails; scripts/test.sh installs them)"
        }
    }
}

extension Trait where Self == PeerRequirement {
    /// The test (or each test of the suite) talks to `peers`: skipped by name when one is
    /// missing, failed instead under `FANOUT_REQUIRE_PEERS=1`.
    public static func requires(_ peers: Peer..., sourceLocation: SourceLocation = #_sourceLocation) -> Self {
        PeerRequirement(peers: peers, sourceLocation: sourceLocation)
    }
}
