import FanoutMeasure
import FanoutTestSupport
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing

/// `TextEndpoint`'s limits: a newcomer past an address's share or the total closes the least
/// recently active connection of the address the limit is about; a request that never arrives
/// whole and a kept-alive connection left idle are closed; each limit reported.
@Suite struct TextEndpointTests {
    /// A loopback socket to `port` (from `source`: `connectLoopback`), reads bounded by 5 s.
    static func connect(_ port: Int, from source: String? = nil) throws -> Int32 {
        let fd = try #require(connectLoopback(port: port, from: source))
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return fd
    }

    /// Everything the server sends until it closes (or 5 s pass without a byte).
    static func readToClose(_ fd: Int32) -> (text: String, closed: Bool) {
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count == 0 { return (String(decoding: received, as: UTF8.self), true) }
            if count < 0 { return (String(decoding: received, as: UTF8.self), false) }
            received += chunk.prefix(count)
        }
    }

    static func send(_ fd: Int32, _ text: String) {
        _ = Array(text.utf8).withUnsafeBytes { Foundation.send(fd, $0.baseAddress, $0.count, 0) }
    }

    /// An endpoint on loopback port 0 with `limits`, each limit reached noted as
    /// "KIND HOST: DETAIL" in `reports`.
    static func endpoint(
        _ group: any EventLoopGroup,
        _ limits: TextEndpoint.Limits,
        _ reports: NIOLockedValueBox<[String]>
    ) throws -> TextEndpoint {
        try TextEndpoint(
            host: "127.0.0.1",
            port: 0,
            group: group,
            limits: limits,
            limitReached: { kind, peer, detail in
                let host = peer.split(separator: ":").first.map(String.init) ?? peer
                reports.withLockedValue { $0.append("\(kind.rawValue) \(host): \(detail)") }
            },
            answer: { _ in .init(status: .ok, type: TextEndpoint.plainType, body: "ok\n") }
        )
    }

    /// The request timeout and the idle timeout close what they bound, and say so.
    @Test func eachTimeoutClosesWhatItBoundsAndSaysSo() throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let reports = NIOLockedValueBox<[String]>([])
        let limits = TextEndpoint.Limits(requestTimeout: .milliseconds(300), idleTimeout: .milliseconds(300))
        let endpoint = try Self.endpoint(group, limits, reports)
        defer { endpoint.close() }
        let port = endpoint.localAddress.port!
        let slow = try Self.connect(port)
        defer { close(slow) }
        Self.send(slow, "GET /sta")
        let kept = try Self.connect(port)
        defer { close(kept) }
        Self.send(kept, "GET /stats HTTP/1.1\r\nhost: x\r\n\r\n")
        // Half a request line: closed by the request timeout; an answered one, by idleness.
        let slowEnd = Self.readToClose(slow)
        #expect(slowEnd.text.isEmpty && slowEnd.closed)
        let keptEnd = Self.readToClose(kept)
        #expect(keptEnd.text.hasPrefix("HTTP/1.1 200 OK\r\n") && keptEnd.closed, "\(keptEnd.text)")
        poll(timeout: .seconds(5), every: .milliseconds(5)) { endpoint.openConnections == 0 }
        #expect(endpoint.openConnections == 0)
        #expect(
            Set(reports.withLockedValue { $0 }) == [
                "request timeout 127.0.0.1: no whole request within 300 ms: closed",
                "idle timeout 127.0.0.1: no request within 300 ms: closed",
            ]
        )
    }

    /// Issue 61, review: 64 silent connections from one address kept every scraper's `/stats`
    /// answered 503. Now an address holds at most half the connections, and a newcomer past a
    /// limit closes the least recently active connection of the address the limit is about: a
    /// scraper from another address is answered, and one from the same address too.
    @Test func silentConnectionsFromOneAddressGiveWayToAScraper() throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let reports = NIOLockedValueBox<[String]>([])
        let endpoint = try Self.endpoint(group, .init(maxConnections: 4), reports)
        defer { endpoint.close() }
        let port = endpoint.localAddress.port!
        // Three silent connections from 127.0.0.2: the third closes the first (a share of 2).
        var silent: [Int32] = []
        defer { for fd in silent { close(fd) } }
        for count in 1...3 {
            silent.append(try Self.connect(port, from: "127.0.0.2"))
            try #require(
                poll(timeout: .seconds(5), every: .milliseconds(5)) { endpoint.openConnections == min(count, 2) }
            )
        }
        let first = Self.readToClose(silent[0])
        #expect(first.text.isEmpty && first.closed, "\(first.text)")
        // A scraper from 127.0.0.3 and one from 127.0.0.4: all four held, none evicted.
        var scrapers: [Int32] = []
        defer { for fd in scrapers { close(fd) } }
        for source in ["127.0.0.3", "127.0.0.4"] {
            let scraper = try Self.connect(port, from: source)
            scrapers.append(scraper)
            Self.send(scraper, "GET /stats HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
            let answer = Self.readToClose(scraper)
            #expect(
                answer.text.hasPrefix("HTTP/1.1 200 OK\r\n") && answer.text.hasSuffix("\r\n\r\nok\n"),
                "\(answer.text)"
            )
        }
        // Both scrapers closed; 127.0.0.2's two and a third address's two fill the four, then a
        // fifth from 127.0.0.5: the busiest address is 127.0.0.2 (2, older than 127.0.0.6's).
        try #require(poll(timeout: .seconds(5), every: .milliseconds(5)) { endpoint.openConnections == 2 })
        for _ in 1...2 { silent.append(try Self.connect(port, from: "127.0.0.6")) }
        try #require(poll(timeout: .seconds(5), every: .milliseconds(5)) { endpoint.openConnections == 4 })
        let newcomer = try Self.connect(port, from: "127.0.0.5")
        scrapers.append(newcomer)
        Self.send(newcomer, "GET /stats HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
        #expect(Self.readToClose(newcomer).text.hasPrefix("HTTP/1.1 200 OK\r\n"))
        let second = Self.readToClose(silent[1])
        #expect(second.text.isEmpty && second.closed, "127.0.0.2's oldest left open: \(second.text)")
        #expect(
            reports.withLockedValue { $0 } == [
                "evicted 127.0.0.2: 2 connections from 127.0.0.2, its share of 4: its least recently active closed for a newcomer",
                "evicted 127.0.0.2: 4 connections, the admin endpoint's limit: the least recently active of the address holding the most closed for a newcomer from 127.0.0.5",
            ]
        )
    }

    /// Issue 61, session 37's pass: a client pipelining `GET`s and never reading the answers
    /// kept the endpoint answering at a full core, its answers queued without end. Reading
    /// stops while answers wait: the client's writes stall (the kernel's buffers fill, nothing
    /// drains them), the answers made stay bounded, and a scraper from another address is
    /// answered meanwhile. (Bounds, not exact counts: a loaded machine may starve the loop.)
    @Test func aClientThatNeverReadsIsNoLongerRead() throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let answers = NIOLockedValueBox(0)
        let page = String(repeating: "x", count: 4096)
        let endpoint = try TextEndpoint(host: "127.0.0.1", port: 0, group: group) { _ in
            answers.withLockedValue { $0 += 1 }
            return .init(status: .ok, type: TextEndpoint.plainType, body: page)
        }
        defer { endpoint.close() }
        let port = endpoint.localAddress.port!
        let greedy = try Self.connect(port, from: "127.0.0.2")
        defer { close(greedy) }
        _ = fcntl(greedy, F_SETFL, fcntl(greedy, F_GETFL) | O_NONBLOCK)
        let requests = Array(String(repeating: "GET /stats HTTP/1.1\r\nhost: x\r\n\r\n", count: 100).utf8)
        // Written until no byte has been taken for 300 ms (stalled), within 20 s.
        let deadline = ContinuousClock.now + .seconds(20)
        var lastTaken = ContinuousClock.now
        var stalled = false
        while ContinuousClock.now < deadline {
            let sent = requests.withUnsafeBytes { Foundation.send(greedy, $0.baseAddress, $0.count, 0) }
            if sent > 0 {
                lastTaken = ContinuousClock.now
            } else if ContinuousClock.now - lastTaken > .milliseconds(300) {
                stalled = true
                break
            } else {
                poll(timeout: .milliseconds(5), every: .milliseconds(5)) { false }
            }
        }
        #expect(stalled, "the endpoint read on: \(answers.withLockedValue { $0 }) answers queued")
        // The requests read before reading stopped are answered still; then the count holds.
        // The kernel's buffers on both sides (a few MB) and one read's worth of requests bound
        // it: 3,488 answers here, against 81,496 and growing without the fix.
        let scraper = try Self.connect(port, from: "127.0.0.3")
        defer { close(scraper) }
        Self.send(scraper, "GET /stats HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
        #expect(Self.readToClose(scraper).text.hasPrefix("HTTP/1.1 200 OK\r\n"))
        // A second on, the greedy client still writing what it can: no more read from it.
        var answered = 0
        hold(for: .seconds(1), every: .milliseconds(100)) {
            _ = requests.withUnsafeBytes { Foundation.send(greedy, $0.baseAddress, $0.count, 0) }
            answered = answers.withLockedValue { $0 }
            return true
        }
        #expect(answered < 20_000, "\(answered) answers made for a client that reads none")
    }
}
