import FanoutTestSupport
import Foundation
import Testing

/// The FCM sink shared by clients it must bound, as the APNs sink is: a connection that sends
/// nothing, a body that never arrives whole, one address holding too many connections. Each
/// client is Python's socket module (Peers/fcm_defences.py); what the sink says of each is its
/// log's line and its `/stats`' count.
@Suite(.requires(.python3, .curl)) struct FCMSinkDefenceTests {
    struct Close: Decodable {
        var closed: Bool
        var after: Double?
        var bytes: Int?
        var goawayCode: Int?
        var answered: Bool?

        enum CodingKeys: String, CodingKey {
            case closed, after, bytes, answered
            case goawayCode = "goaway_code"
        }
    }

    struct PerPeer: Decodable {
        var refused: Close
        var heldAnswered: Bool

        enum CodingKeys: String, CodingKey {
            case refused
            case heldAnswered = "held_answered"
        }
    }

    struct Evicted: Decodable {
        var oldest: Close
        var provenOpen: Bool
        var answered: Bool

        enum CodingKeys: String, CodingKey {
            case oldest, answered
            case provenOpen = "proven_open"
        }
    }

    struct Seen: Decodable {
        var silent: Close?
        var idleH2: Close?
        var idleHttp1: Close?
        var slowBody: Close?
        var pipelined: Close?
        var perPeer: PerPeer?
        var evicted: Evicted?
        var stalledFrame: Close?
        var badFrame: Close?

        enum CodingKeys: String, CodingKey {
            case silent, pipelined, evicted
            case stalledFrame = "stalled_frame"
            case badFrame = "bad_frame"
            case idleH2 = "idle_h2"
            case idleHttp1 = "idle_http1"
            case slowBody = "slow_body"
            case perPeer = "per_peer"
        }
    }

    /// Peers/fcm_defences.py's `cases` against the sink on `port`.
    static func clients(_ cases: [String], port: Int, admin: Int = 0, perPeer: Int = 2) throws -> (Seen, String) {
        let run = try PeerProcess.run(
            "python3",
            [CommandRunner.repositoryRoot + "/Tests/FanoutCommandTests/Peers/fcm_defences.py"]
                + [String(port), String(admin), String(perPeer)] + cases,
            timeout: .seconds(150)
        )
        #expect(run.status == 0, "\(run.errors)")
        return (try JSONDecoder().decode(Seen.self, from: Data(run.output.utf8)), run.output)
    }

    /// An FCM sink with `options`, `--no-auth` and an admin port: the sink (the caller stops
    /// it), its port and its admin's.
    static func sink(_ options: [String]) throws -> (PeerProcess, port: Int, admin: Int) {
        let (sink, port) = try CommandRunner.sink(
            ["--service", "fcm", "--no-auth", "--admin", "127.0.0.1:0"] + options
        )
        do {
            return (sink, port, try sink.announcedPort(after: "admin on "))
        } catch {
            sink.stop()
            throw error
        }
    }

    /// The sink's `/stats` `limits`.
    static func limits(admin: Int) throws -> [String: Int] {
        let stats = try PeerProcess.run("curl", ["-fsS", "--max-time", "10", "http://127.0.0.1:\(admin)/stats"])
        let figures = try JSONSerialization.jsonObject(with: Data(stats.output.utf8)) as? [String: Any]
        return try #require(figures?["limits"] as? [String: Int], "\(stats.output)")
    }

    /// With 1 s timeouts: a connection that sends nothing is closed before any protocol was
    /// chosen; an h2c connection that acknowledged the sink's SETTINGS and then fell silent
    /// gets GOAWAY NO_ERROR (not a SETTINGS timeout's) and its close; an HTTP/1.1 keep-alive
    /// connection is closed idle after its answer; a body stalled half-way is closed. Each no
    /// sooner than its timeout (a bound a loaded machine can only lengthen), each counted.
    @Test func silentAndStalledConnectionsAreClosedAndCounted() throws {
        let (sink, port, admin) = try Self.sink(["--idle-timeout", "1s", "--request-timeout", "1s"])
        defer { sink.stop() }
        let (seen, output) = try Self.clients(
            ["silent", "idle_h2", "idle_http1", "slow_body"],
            port: port,
            admin: admin
        )
        for close in [seen.silent, seen.idleH2, seen.idleHttp1, seen.slowBody] {
            #expect(close?.closed == true && (close?.after ?? 0) >= 0.9, "\(output)")
        }
        #expect(seen.silent?.bytes == 0, "closed without a word: no protocol to speak")
        #expect(seen.idleH2?.goawayCode == 0, "GOAWAY NO_ERROR: \(output)")
        #expect(seen.idleHttp1?.answered == true)
        let limits = try Self.limits(admin: admin)
        // The silent, h2 and HTTP/1.1 connections closed idle.
        #expect(limits["idle timeout"] == 3, "\(limits)")
        #expect(limits["request timeout"] == 1, "\(limits)")
        let result = sink.stop()
        let silent = lines(of: result.errors, keyed: "fanout sink: idle timeout 127.0.0.1:").filter {
            $0.hasSuffix("(no HTTP/2 preface, HTTP/1.1 request or TLS handshake)")
        }
        #expect(silent.count == 1, "\(result.errors)")
    }

    /// A third connection from an address allowed two, both of which have sent (so neither is
    /// idle, however slow the machine), is closed at once while the two still serve; counted
    /// `refused`, and the log says which limit. (Its own sink, with the idle timeout's default:
    /// under a 1 s one a loaded machine could close the two as idle first and let the third in.)
    @Test func aSurplusConnectionIsRefusedWhileTheHeldServe() throws {
        let (sink, port, admin) = try Self.sink(["--max-connections-per-peer", "2"])
        defer { sink.stop() }
        let (seen, output) = try Self.clients(["per_peer"], port: port, admin: admin)
        #expect(seen.perPeer?.refused.closed == true, "\(output)")
        #expect(seen.perPeer?.heldAnswered == true)
        let limits = try Self.limits(admin: admin)
        #expect(limits["refused"] == 1 && (limits["evicted"] ?? 0) == 0, "\(limits)")
        let result = sink.stop()
        let refused = lines(of: result.errors, keyed: "fanout sink: refused 127.0.0.1:").map {
            $0.split(separator: ": ", maxSplits: 2).last.map(String.init) ?? ""
        }
        #expect(refused == ["closed at once: 2 connections from 127.0.0.1, the per-peer limit"], "\(result.errors)")
    }

    /// Two connections from an address allowed two, the older with a send answered, the newer
    /// silent past `--idle-grace`: a third that sends is served, and the silent one is closed for
    /// it (`evicted`, the APNs sink's rule) while the older, which proved itself, is left open
    /// though it came first. Silent connections cannot lock out a client from their own address
    /// (a NAT, a CI runner's loopback).
    @Test func aSilentConnectionIsEvictedForANewcomerThatSends() throws {
        let (sink, port, admin) = try Self.sink(["--max-connections-per-peer", "2", "--idle-grace", "200ms"])
        defer { sink.stop() }
        let (seen, output) = try Self.clients(["evicted"], port: port, admin: admin)
        #expect(seen.evicted?.answered == true, "\(output)")
        #expect(seen.evicted?.oldest.closed == true && seen.evicted?.provenOpen == true, "\(output)")
        let limits = try Self.limits(admin: admin)
        #expect(limits["evicted"] == 1 && (limits["refused"] ?? 0) == 0, "\(limits)")
        let result = sink.stop()
        let evicted = lines(of: result.errors, keyed: "fanout sink: evicted 127.0.0.1:")
        #expect(
            evicted.count == 1
                && evicted.first?.contains(
                    "it sent no authenticated request in 200ms, and 127.0.0.1:"
                ) == true
                && evicted.first?.hasSuffix("came at 2 connections from 127.0.0.1, the per-peer limit") == true,
            "\(result.errors)"
        )
    }

    /// The HTTP/2 engine's own limits are the sink's limits too: a frame's start with no rest
    /// past `--frame-timeout` gets GOAWAY ENHANCE_YOUR_CALM no sooner than it, and a PING on a
    /// stream (a connection error, RFC 9113 §6.7) GOAWAY PROTOCOL_ERROR; each is counted
    /// `ended` in `/stats`' limits and told in the log with its GOAWAY.
    @Test func theEnginesLimitsAreCountedAndTold() throws {
        let (sink, port, admin) = try Self.sink(["--frame-timeout", "1s"])
        defer { sink.stop() }
        let (seen, output) = try Self.clients(["stalled_frame", "bad_frame"], port: port, admin: admin)
        #expect(seen.stalledFrame?.goawayCode == 0xB && (seen.stalledFrame?.after ?? 0) >= 0.9, "\(output)")
        #expect(seen.badFrame?.goawayCode == 0x1 && seen.badFrame?.closed == true, "\(output)")
        let limits = try Self.limits(admin: admin)
        #expect(limits["ended"] == 2, "\(limits)")
        let result = sink.stop()
        let ended = lines(of: result.errors, keyed: "fanout sink: ended 127.0.0.1:").map {
            $0.split(separator: ": ", maxSplits: 2).last.map(String.init) ?? ""
        }
        #expect(
            ended.sorted() == [
                "GOAWAY ENHANCE_YOUR_CALM: 5 bytes of a frame waited 1.0 seconds for the rest",
                "GOAWAY PROTOCOL_ERROR: PING on stream 1; it belongs to stream 0",
            ],
            "\(result.errors)"
        )
    }

    /// A second request pipelined behind a whole one, its body stalled: its own request
    /// timeout closes the connection, not the minute-long idle timeout (the first answered).
    @Test func aPipelinedRequestHasItsOwnRequestTimeout() throws {
        let (sink, port) = try CommandRunner.sink(
            ["--service", "fcm", "--no-auth", "--idle-timeout", "60s", "--request-timeout", "1s"]
        )
        defer { sink.stop() }
        let (seen, output) = try Self.clients(["pipelined"], port: port)
        #expect(seen.pipelined?.closed == true && seen.pipelined?.answered == true, "\(output)")
        let result = sink.stop()
        #expect(
            lines(of: result.errors, keyed: "fanout sink: request timeout 127.0.0.1:").count == 1,
            "\(result.errors)"
        )
    }
}
