import FanoutHTTP2
import FanoutProbe
import FanoutResults
import FanoutTestSupport
import Foundation
import Testing

@testable import FanoutAssembly

/// probe.json: schema 2's flow-control fields under their names, a notification's wire bytes
/// summed as documented, and schema 1 files still read (their new fields `nil`).
@Suite struct ProbeDocumentTests {
    /// A probe's outcome: one PING of 50 ms, one request at a time and one in parallel, of
    /// 280-byte bodies against a 65,535-byte window nothing refilled.
    static func outcome() -> ProbeOutcome {
        var state = ProbeState(pings: 1, requests: 1)
        var now: UInt64 = 0
        var window = 65_535
        while true {
            switch state.next(now: now, hasPeerSettings: true, availableStreams: 1, connectionWindow: window) {
            case .ping(let opaque):
                now += 50_000_000
                state.pingAcknowledged(opaque, now: now)
            case .send(_, let tag):
                window -= 280
                state.sent(bodyBytes: 280, wire: .init(bytes: 9 + 100 + 9 + 280, dataBytes: 280, maxFrameSize: 16_384))
                now += 51_000_000
                state.answered(tag: tag, status: 200, reason: nil, now: now)
            case .wait, .finish:
                return ProbeOutcome(
                    record: state.record,
                    finished: true,
                    settingsFirst: HTTP2Settings(),
                    settingsLast: HTTP2Settings()
                )
            }
        }
    }

    @Test func theWireIsItsPartsSummed() throws {
        var record = ProbeState.WireRecord()
        record.bodyBytes = 280
        #expect(ProbeDocument.Wire(record, tls: nil) == nil)
        var state = ProbeState(pings: 0, requests: 3)
        for block in [125, 90, 81] {
            guard
                case .send(_, let tag) = state.next(
                    now: 0,
                    hasPeerSettings: true,
                    availableStreams: 1,
                    connectionWindow: 65_535
                )
            else { break }
            state.sent(bodyBytes: 280, wire: .init(bytes: 9 + block + 9 + 280, dataBytes: 280, maxFrameSize: 16_384))
            state.answered(tag: tag, status: 200, reason: nil, now: 1)
        }
        let cleartext = try #require(ProbeDocument.Wire(state.record.wire, tls: nil))
        #expect(cleartext.headersBytes == 81)
        #expect(cleartext.firstHeadersBytes == 125)
        #expect(cleartext.dataBytes == 280)
        #expect(cleartext.frameBytes == 18)
        #expect(cleartext.tlsBytes == 0)
        #expect(cleartext.wireBytesPerNotification == 81 + 280 + 18)
        let tls13 = try #require(ProbeDocument.Wire(state.record.wire, tls: "TLSv1.3"))
        #expect(tls13.tlsBytes == 22)
        #expect(tls13.wireBytesPerNotification == 81 + 280 + 18 + 22)
        #expect(ProbeDocument.Wire(state.record.wire, tls: "TLSv1.2")?.tlsBytes == 29)
    }

    @Test func schemaTwoNamesItsFields() throws {
        let document = ProbeDocument(
            endpoint: "http://127.0.0.1:1",
            started: Date(timeIntervalSince1970: 0),
            tls: false,
            outcome: Self.outcome(),
            notes: []
        )
        #expect(document.schema == 2)
        // The names are under test: the JSON as written, not the type that reads it back.
        let object = try JSONValue(document.data())
        let window = try #require(object["window"])
        #expect(window["connection_at_start"] == .number(65_535))
        #expect(window["connection_after_first_answers"] == .number(65_255))
        #expect(window["stream"] == .number(65_535))
        let refill = try #require(window["refill"])
        #expect(refill["kind"] == .string("none-needed"))
        #expect(refill["most_bytes_in_flight"] == .number(560))
        let wire = try #require(object["wire"])
        // Two requests: the header block is the first's, and the note says so.
        #expect(wire["headers_bytes"] == .number(100))
        #expect(wire["wire_bytes_per_notification"] == .number(100 + 280 + 18))
        guard case .string(let note) = wire["note"] else {
            Issue.record("no note in \(wire)")
            return
        }
        #expect(note == "TCP/IP headers excluded; header block of the first request (fewer than 3 sent)")
        #expect(object["flow"] == .null)
        let decoded = try JSONDecoder().decode(ProbeDocument.self, from: document.data())
        #expect(decoded == document)
    }

    /// A schema 1 probe.json (as written before flow control was measured) still plans.
    @Test func schemaOneStillLoads() throws {
        // A schema 2 document made into a schema 1 one, which no ProbeDocument of today is.
        var object = try JSONValue(
            ProbeDocument(
                endpoint: "http://127.0.0.1:1",
                started: Date(timeIntervalSince1970: 0),
                tls: false,
                outcome: Self.outcome(),
                notes: []
            ).data()
        )
        object["schema"] = .number(1)
        for key in ["window", "wire", "flow"] { object[key] = nil }
        let path = NSTemporaryDirectory() + "probe-schema-1-\(UUID().uuidString).json"
        defer { try? FileManager.default.removeItem(atPath: path) }
        try object.data().write(to: URL(fileURLWithPath: path))
        let old = try ProbeDocument.load(path)
        #expect(old.schema == 1)
        #expect(old.window == nil && old.wire == nil && old.flow == nil)
        #expect(old.pingRoundTrip?.p50 == 50)
        object["schema"] = .number(3)
        try object.data().write(to: URL(fileURLWithPath: path))
        #expect(throws: (any Error).self) { try ProbeDocument.load(path) }
    }
}
