import FanoutMeasure
import FanoutTestSupport
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing

/// `TextEndpoint`'s limits: connections past the cap are answered 503, a request that never
/// arrives whole and a kept-alive connection left idle are closed, each limit reported.
@Suite struct TextEndpointTests {
    /// A loopback socket to `port`, reads bounded by 5 s.
    static func connect(_ port: Int) throws -> Int32 {
        let fd = try #require(connectLoopback(port: port))
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

    @Test func eachLimitClosesWhatItBoundsAndSaysSo() throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let reports = NIOLockedValueBox<[String]>([])
        let endpoint = try TextEndpoint(
            host: "127.0.0.1",
            port: 0,
            group: group,
            limits: .init(maxConnections: 2, requestTimeout: .milliseconds(300), idleTimeout: .milliseconds(300)),
            limitReached: { kind, _, detail in reports.withLockedValue { $0.append("\(kind): \(detail)") } },
            answer: { _ in .init(status: .ok, type: TextEndpoint.plainType, body: "ok\n") }
        )
        defer { endpoint.close() }
        let port = endpoint.localAddress.port!
        let slow = try Self.connect(port)
        defer { close(slow) }
        Self.send(slow, "GET /sta")
        let kept = try Self.connect(port)
        defer { close(kept) }
        Self.send(kept, "GET /stats HTTP/1.1\r\nhost: x\r\n\r\n")
        // Both admitted before the third: polled, with a bound.
        poll(timeout: .seconds(5), every: .milliseconds(5)) { endpoint.openConnections >= 2 }
        let third = try Self.connect(port)
        defer { close(third) }
        let refused = Self.readToClose(third)
        #expect(refused.text.hasPrefix("HTTP/1.1 503 Service Unavailable\r\n"), "\(refused.text)")
        #expect(refused.text.hasSuffix("2 connections, the admin endpoint's limit: try again later\n"))
        #expect(refused.closed)
        // Half a request line: closed by the request timeout; an answered one, by idleness.
        let slowEnd = Self.readToClose(slow)
        #expect(slowEnd.text.isEmpty && slowEnd.closed)
        let keptEnd = Self.readToClose(kept)
        #expect(keptEnd.text.hasPrefix("HTTP/1.1 200 OK\r\n") && keptEnd.closed, "\(keptEnd.text)")
        poll(timeout: .seconds(5), every: .milliseconds(5)) { endpoint.openConnections == 0 }
        #expect(endpoint.openConnections == 0)
        #expect(
            Set(reports.withLockedValue { $0 }) == [
                "refused: 2 connections, the admin endpoint's limit",
                "request timeout: no whole request within 300 ms: closed",
                "idle timeout: no request within 300 ms: closed",
            ]
        )
    }
}
