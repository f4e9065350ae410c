import FanoutResults
import FanoutSink
import FanoutTestSupport
import Foundation
import Testing

/// `fanout probe`'s flow control against real peers: a `fanout sink` with a wire of known round
/// trip, window and refill rule in front of it, and nghttpd (nghttp2's server, nobody here wrote
/// it) as it comes. Serialized: the rates are physics, and a neighbour's load would bend them.
@Suite(.serialized) struct ProbeCommandTests {
    /// The probe's probe.json, its flow-control sections required where a test reads them.
    struct Probe {
        var document: ProbeDocument
        /// probe.json as written, for what the type cannot tell (a `null` from an absent key).
        var data: Data
        var output: String

        var window: ProbeDocument.Window { get throws { try #require(document.window, "no window in \(document)") } }
        var refill: ProbeDocument.Refill {
            get throws {
                let window = try window
                return try #require(window.refill, "no refill in \(window)")
            }
        }
        var wire: ProbeDocument.Wire { get throws { try #require(document.wire, "no wire in \(document)") } }
        var flow: ProbeDocument.Flow { get throws { try #require(document.flow, "no flow in \(document)") } }
    }

    /// `fanout probe ENDPOINT` with the poll template and three tokens, and `extra`; exit 0.
    static func probe(_ endpoint: String, _ extra: [String] = []) throws -> Probe {
        let folder = try RealEndpointTests.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let tokens = try RealEndpointTests.writeTokens(in: folder)
        let result = try CommandRunner.run(
            [
                "probe", endpoint, "--tokens", tokens, "--topic", "com.example.app", "--template",
                "fixtures/poll.json", "--output", folder,
            ] + extra,
            timeout: .seconds(90)
        )
        #expect(result.status == 0, "\(result.standardError)")
        let data = try Data(contentsOf: URL(fileURLWithPath: folder + "/probe.json"))
        let document = try JSONDecoder().decode(ProbeDocument.self, from: data)
        #expect(document.schema == 2)
        return Probe(document: document, data: data, output: result.standardOutput)
    }

    /// What the probe printed is probe.json's text, whole, line by line, then where the file went.
    static func expectPrintedWhole(_ probe: Probe, sourceLocation: SourceLocation = #_sourceLocation) {
        let printed = probe.output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let text = probe.document.text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(Array(printed.dropLast(2)) == text, "\(probe.output)", sourceLocation: sourceLocation)
        #expect(lines(of: probe.output, keyed: "probe.json: ").count == 1, sourceLocation: sourceLocation)
    }

    /// The body the probe sends: the poll template's bytes, as `fanout payload render` says.
    static func bodyBytes() throws -> Int {
        let result = try CommandRunner.run([
            "payload", "render", "--template", "fixtures/poll.json", "--token", String(repeating: "1", count: 64),
            "--size",
        ])
        #expect(result.status == 0, "\(result.standardError)")
        return try #require(Int(result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)))
    }

    /// nghttp2's rule behind a 50 ms wire: 65,535 bytes at start, refilled about half at a time
    /// once half is in, so one connection carries about (W/2 + one body) a round trip.
    ///
    /// Which round trip: a PING's (50 ms and a little) is the wire's; under load each refill
    /// also waits for both ends to handle a window of requests (118 of them), a few ms a round
    /// trip in a debug build (≈ 55 ms a refill here, ≈ 52 with a release sink), which a PING
    /// never sees. So the rate is held within 10% of the formula at the round trip the refills
    /// showed (`refill_interval_ms`, at least the wire's 50 ms, plus the ends'), and at most
    /// 105% of it at the PING's: nothing beats the window.
    @Test func aHalfRefilledWindowBindsTheConnection() throws {
        let body = try Self.bodyBytes()
        let (sink, port) = try CommandRunner.sink([
            "--no-auth", "--rtt", "50ms", "--connection-window", "65535", "--window-refill", "half",
        ])
        defer { sink.stop() }
        let probe = try Self.probe("http://127.0.0.1:\(port)")
        let window = try probe.window
        #expect(window.connectionAtStart == 65_535)
        #expect(window.connectionAfterFirstAnswers == 65_535 - 20 * body)
        #expect(window.stream == 1 << 20)
        let refill = try probe.refill
        #expect(refill.kind == "half")
        // nghttp2's threshold is 65,535 / 2 = 32,767: the body that crosses it comes back too.
        let crossing = (32_767 / body + 1) * body
        #expect(refill.smallestIncrement == crossing)
        let updates = refill.updates
        #expect(updates.count > 10 && updates.allSatisfy { $0.stream == 0 })
        let wire = try probe.wire
        #expect(wire.dataBytes == body)
        #expect(wire.frameBytes == 18)
        #expect(wire.tlsBytes == 0)
        let headers = wire.headersBytes
        #expect(headers < (try #require(wire.firstHeadersBytes)), "HPACK's table holds the fields")
        #expect(wire.wireBytesPerNotification == headers + body + 18)
        let flow = try probe.flow
        #expect(flow.bound == "window", "\(flow)")
        #expect(flow.windowBoundShare > 0.8)
        #expect(flow.mostBytesInFlight == 65_535 / body * body)
        let rate = try #require(flow.ratePerSecond, "\(flow)")
        let ping = flow.roundTripMs / 1000
        let refillInterval = try #require(flow.refillIntervalMs, "\(flow)") / 1000
        // The wire's 50 ms at least; what the ends add is the machine's (≈ 55 ms a refill on an
        // idle one, 72 ms once beside other suites on a loaded one): no upper bound on it here.
        #expect(refillInterval >= 0.050, "a refill every \(refillInterval) s")
        func formula(_ roundTrip: Double) -> Double { Double(crossing) / roundTrip / Double(body) }
        #expect(abs(rate / formula(refillInterval) - 1) < 0.10, "\(rate)/s, \(formula(refillInterval))/s")
        // Nothing beats the window at the PING's round trip (how far below it the ends' time
        // takes the rate is the machine's, a benchmark's business, not this test's).
        #expect(rate / formula(ping) <= 1.05, "\(rate)/s against \(formula(ping))/s at the PING's")
        #expect(try probe.refill.kind == "half")
        #expect(try probe.flow.bound == "window")
        Self.expectPrintedWhole(probe)
    }

    /// A sink told to refill after each DATA frame: each-frame, and the window still binds.
    @Test func anEachFrameRefillIsSaid() throws {
        let (sink, port) = try CommandRunner.sink([
            "--no-auth", "--rtt", "50ms", "--connection-window", "65535", "--window-refill", "each-frame",
        ])
        defer { sink.stop() }
        let probe = try Self.probe("http://127.0.0.1:\(port)", ["--flow-duration", "1s"])
        let refill = try probe.refill
        #expect(refill.kind == "each-frame", "\(refill)")
        #expect(refill.smallestIncrement == (try Self.bodyBytes()))
        #expect(try probe.flow.bound == "window")
    }

    /// The sink's own 16 MiB window and 100 streams: the streams bind, the window never needed
    /// refilling, and a connection carries about 100 requests a round trip.
    @Test func fewStreamsBindALargeWindow() throws {
        let (sink, port) = try CommandRunner.sink(["--no-auth", "--rtt", "50ms", "--max-streams", "100"])
        defer { sink.stop() }
        let probe = try Self.probe("http://127.0.0.1:\(port)")
        #expect(try probe.window.connectionAtStart == 16 << 20)
        #expect(try probe.refill.kind == "none-needed")
        let flow = try probe.flow
        #expect(flow.bound == "streams", "\(flow)")
        #expect(flow.peakStreams == 100)
        let rate = try #require(flow.ratePerSecond, "\(flow)")
        let ping = flow.roundTripMs / 1000
        // As above: the ends' time a round trip lowers it (by how much is the machine's), nothing
        // raises it.
        #expect(rate / (100 / ping) <= 1.05, "\(rate)/s against \(100 / ping)/s")
    }

    /// nghttpd as it comes, no delay: nghttp2's 65,535-byte window, refilled half at a time.
    @Test(.requires(.nghttpd)) func nghttpdRefillsHalfItsWindow() throws {
        let folder = try RealEndpointTests.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (server, port) = try PeerProcess.cleartextNghttpd(serving: folder, ["--max-concurrent-streams=1000"])
        defer { server.stop() }
        let probe = try Self.probe("http://127.0.0.1:\(port)", ["--flow-count", "5000"])
        #expect(try probe.window.connectionAtStart == 65_535)
        let refill = try probe.refill
        #expect(refill.kind == "half", "\(refill)")
        let flow = try probe.flow
        // nghttpd answers 404 (no APNs there): answered all the same.
        #expect(flow.answers == ["404": 5000])
        #expect(flow.stoppedBy == "count")
    }

    /// Over TLS a notification carries a TLS 1.3 record's 22 bytes too (one record assumed).
    @Test(.requires(.nghttpd)) func overTLSARecordIsCounted() throws {
        let folder = try RealEndpointTests.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let files = try SinkCertificates.writeSelfSigned(into: folder, hosts: ["localhost"])
        let (server, port) = try RealEndpointTests.nghttpd(
            serving: folder,
            key: files.key,
            certificate: files.certificate
        )
        defer { server.stop() }
        let probe = try Self.probe(
            "https://localhost:\(port)",
            ["--ca-file", files.certificate, "--flow-count", "2000"]
        )
        let wire = try probe.wire
        #expect(wire.tlsBytes == 22)
        #expect(wire.wireBytesPerNotification == wire.headersBytes + wire.dataBytes + wire.frameBytes + wire.tlsBytes)
        #expect(
            wire.note == "TCP/IP headers excluded; one TLSv1.3 record a notification assumed (one record a write)",
            "\(wire)"
        )
        #expect(try probe.refill.kind == "half")
    }

    /// --no-flow skips it; the flow options' bounds.
    @Test func theFlowTestIsOptional() throws {
        let (sink, port) = try CommandRunner.sink(["--no-auth"])
        defer { sink.stop() }
        let probe = try Self.probe("http://127.0.0.1:\(port)", ["--no-flow", "--count", "3"])
        #expect(probe.document.flow == nil)
        #expect(try holdsNull(probe.data, at: ["flow"]))
        #expect(try probe.refill.kind == "none-needed")
        // What it printed is probe.json's text, which has no flow test.
        Self.expectPrintedWhole(probe)
        for bad in [["--flow-count", "0"], ["--flow-duration", "0s"], ["--flow-duration", "2m", "--timeout", "1m"]] {
            let result = try CommandRunner.run(["probe", "http://127.0.0.1:\(port)"] + bad)
            #expect(result.status == 64, "\(bad): \(result.standardError)")
        }
    }
}
