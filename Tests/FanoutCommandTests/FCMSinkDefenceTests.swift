import FanoutTestSupport
import Foundation
import Testing

/// The FCM sink shared by clients it must bound, as the APNs sink is: a connection that sends
/// nothing, a body that never arrives whole, one address holding too many connections. Each
/// client is Python's socket module (Peers/fcm_defences.py); what the sink says of each is its
/// log's line and its `/stats`' count.
@Suite(.requires(.python3, .curl)) struct FCMSinkDefenceTests {
    struct Seen: Decodable {
        struct Close: Decodable {
            var closed: Bool
            var after: Double?
            var goaway: Bool?
            var answered: Bool?
        }

        struct PerPeer: Decodable {
            var refused: Close
            var heldAnswered: Bool

            enum CodingKeys: String, CodingKey {
                case refused
                case heldAnswered = "held_answered"
            }
        }

        var idleH2: Close
        var idleHttp1: Close
        var slowBody: Close
        var perPeer: PerPeer

        enum CodingKeys: String, CodingKey {
            case idleH2 = "idle_h2"
            case idleHttp1 = "idle_http1"
            case slowBody = "slow_body"
            case perPeer = "per_peer"
        }
    }

    /// With 1 s timeouts a silent connection is closed within one to two of them (GOAWAY first on
    /// HTTP/2), a body stalled half-way within one to two request timeouts, and a third
    /// connection from an address allowed two is closed at once while the two still serve.
    @Test func silentStalledAndSurplusConnectionsAreClosedAndCounted() throws {
        let (sink, port) = try CommandRunner.sink(
            [
                "--service", "fcm", "--no-auth", "--idle-timeout", "1s", "--request-timeout", "1s",
                "--max-connections-per-peer", "2", "--admin", "127.0.0.1:0",
            ]
        )
        defer { sink.stop() }
        let admin = try sink.announcedPort(after: "admin on ")
        let run = try PeerProcess.run(
            "python3",
            [CommandRunner.repositoryRoot + "/Tests/FanoutCommandTests/Peers/fcm_defences.py", String(port), "2"],
            timeout: .seconds(120)
        )
        #expect(run.status == 0, "\(run.errors)")
        let seen = try JSONDecoder().decode(Seen.self, from: Data(run.output.utf8))
        #expect(seen.idleH2.closed && seen.idleH2.goaway == true, "\(run.output)")
        // Closed no sooner than the timeout (the bound a loaded machine can only lengthen).
        for close in [seen.idleH2, seen.idleHttp1, seen.slowBody] {
            #expect(close.closed && (close.after ?? 0) >= 0.9, "\(run.output)")
        }
        #expect(seen.idleHttp1.answered == true)
        #expect(seen.perPeer.refused.closed, "\(run.output)")
        #expect(seen.perPeer.heldAnswered)
        let stats = try PeerProcess.run("curl", ["-fsS", "--max-time", "10", "http://127.0.0.1:\(admin)/stats"])
        let figures = try JSONSerialization.jsonObject(with: Data(stats.output.utf8)) as? [String: Any]
        let limits = figures?["limits"] as? [String: Int]
        // The h2 and HTTP/1.1 connections closed idle; the held two of the per-peer client may
        // be closed idle too before the end (the script closes them itself), so at least two.
        #expect((limits?["idle timeout"] ?? 0) >= 2, "\(stats.output)")
        #expect(limits?["request timeout"] == 1, "\(stats.output)")
        #expect(limits?["refused"] == 1, "\(stats.output)")
        let result = sink.stop()
        let refused = lines(of: result.errors, keyed: "fanout sink: refused 127.0.0.1:")
        #expect(refused.count == 1, "\(result.errors)")
        #expect(
            refused.first?.hasSuffix(
                ": closed at once: 2 connections open from 127.0.0.1, the most --max-connections-per-peer allows"
            ) == true,
            "\(result.errors)"
        )
    }
}
