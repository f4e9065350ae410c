import FanoutTestSupport
import Foundation
import Testing

@testable import FanoutRun

/// `LiveReport`'s paths before and after the run's end, and how long it stays: bound to port 0,
/// read over loopback with curl.
@Suite struct LiveReportTests {
    /// What these tests read of `/live.json`.
    struct Live: Decodable {
        var command: String
        var done: Bool
        var second: Int
    }

    /// Status and body of `path` on `report`.
    static func get(_ report: LiveReport, _ path: String) throws -> (status: String, body: Data) {
        let copy = NSTemporaryDirectory() + "fanout-live-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: copy) }
        let result = try PeerProcess.run(
            "curl",
            ["-s", "--max-time", "10", "-o", copy, "-w", "%{http_code}", report.url + path.dropFirst()]
        )
        return (result.output, (try? Data(contentsOf: URL(fileURLWithPath: copy))) ?? Data())
    }

    /// A folder holding a report.html of `bytes`.
    static func folder(holding bytes: Data) throws -> String {
        let folder = NSTemporaryDirectory() + "fanout-live-folder-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try bytes.write(to: URL(fileURLWithPath: folder + "/report.html"))
        return folder
    }

    @Test(.requires(.curl)) func itServesTheLivePageThenTheFolderReportByteForByte() throws {
        let report = try LiveReport(at: ServedAddress(host: "127.0.0.1", port: 0), command: "send")
        defer { report.close() }
        #expect(report.url.hasPrefix("http://127.0.0.1:") && !report.url.hasSuffix(":0/"))
        let live = try Self.get(report, "/live.json")
        #expect(live.status == "200")
        let document = try JSONDecoder().decode(Live.self, from: live.body)
        #expect(document.command == "send" && !document.done && document.second == 0)
        let page = try Self.get(report, "/")
        #expect(page.status == "200")
        let inline = HTMLDocument(String(decoding: page.body, as: UTF8.self)).element(where: "id", is: "live-data")
        #expect(inline?.name == "script" && inline?.attributes["type"] == "application/json")
        let inlined = try JSONDecoder().decode(Live.self, from: Data((inline?.text ?? "").utf8))
        #expect(inlined.command == "send")
        #expect(try Self.get(report, "/report.html").status == "404")
        #expect(try Self.get(report, "/elsewhere").status == "404")

        // Not ASCII, and not what the live page holds: the served bytes are the file's.
        let bytes = Data("<!DOCTYPE html><p>p99 ≤ 200 µs — done</p>\n".utf8)
        let folder = try Self.folder(holding: bytes)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try report.finish(folder: folder)
        #expect(try Self.get(report, "/").body == bytes)
        #expect(try Self.get(report, "/report.html").body == bytes)
        let ended = try JSONDecoder().decode(Live.self, from: try Self.get(report, "/live.json").body)
        #expect(ended.done)
    }

    @Test func aFolderWithoutItsReportIsAnErrorNamingIt() throws {
        let report = try LiveReport(at: ServedAddress(host: "127.0.0.1", port: 0), command: "run")
        defer { report.close() }
        let folder = NSTemporaryDirectory() + "fanout-live-missing-\(UUID().uuidString)"
        #expect {
            try report.finish(folder: folder)
        } throws: { error in
            "\(error)".contains(folder + "/report.html")
        }
    }

    /// With a linger, `close()` returns once the final report has been read (here, before it is
    /// called), well before the linger; unread, it waits the linger out.
    @Test(.requires(.curl)) func theLingerEndsAtTheFirstReadOfTheFinalReport() throws {
        let folder = try Self.folder(holding: Data("<p>final</p>\n".utf8))
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let read = try LiveReport(at: ServedAddress(host: "127.0.0.1", port: 0, linger: .seconds(60)), command: "run")
        try read.finish(folder: folder)
        #expect(try Self.get(read, "/").status == "200")
        let start = ContinuousClock.now
        read.close()
        #expect(ContinuousClock.now - start < .seconds(30))

        let unread = try LiveReport(
            at: ServedAddress(host: "127.0.0.1", port: 0, linger: .milliseconds(300)),
            command: "run"
        )
        try unread.finish(folder: folder)
        let waited = ContinuousClock.now
        unread.close()
        #expect(ContinuousClock.now - waited >= .milliseconds(300))
    }

    @Test func aTakenPortIsAnErrorNamingTheOption() throws {
        let first = try LiveReport(at: ServedAddress(host: "127.0.0.1", port: 0), command: "run")
        defer { first.close() }
        let port = Int(first.url.split(separator: ":").last!.dropLast())!
        #expect {
            try LiveReport(at: ServedAddress(host: "127.0.0.1", port: port), command: "run")
        } throws: { error in
            // The option and address, then the system's refusal in its own words (NIO's said
            // "bind(descriptor:ptr:bytes:): Address already in use) (errno: 98)", issue 64).
            "\(error)"
                == "--serve 127.0.0.1:\(port): cannot listen there: address already in use (errno \(EADDRINUSE))"
        }
    }
}
