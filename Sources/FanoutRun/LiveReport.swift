import FanoutAssembly
import FanoutClient
import FanoutMeasure
import FanoutReport
import FanoutSink
import Foundation
import NIOConcurrencyHelpers
import NIOPosix

/// `--serve HOST:PORT` on `fanout run`, `fanout send` and `fanout sink`: the run's live page (`LivePage`) at
/// `/`, its `LiveDocument` at `/live.json`, rebuilt once a second on the run's own thread (the
/// progress callback's), never on the sender's event loops; at the end, the folder's
/// report.html, byte for byte, at `/` and `/report.html`. It listens on a thread of its own.
public final class LiveReport: Sendable {
    private struct State {
        var document: LiveDocument
        var statistics: LoadStatistics?
        /// The folder's report.html once the run has written it.
        var final: String?
        /// Reads of a final report before this one's (an earlier repeat's).
        var readsBefore = 0
    }

    private let endpoint: TextEndpoint
    private let state: NIOLockedValueBox<State>
    /// Requests that read the final report, for `close()` to wait for the first.
    private let finalReads = ScrapeCount()
    private let linger: Duration
    /// `close()` was called: a second call does nothing.
    private let closing = NIOLockedValueBox(false)

    /// Where it listens, `http://HOST:PORT/`.
    public var url: String { "http://\(Sink.describe(endpoint.localAddress))/" }

    /// Listens at `address` for `command`'s run (`run`, `send`) and tells `reporter` where.
    public init(at address: ServedAddress, command: String, reporter: any JobReporter = SilentReporter()) throws {
        let empty = LiveDocument(
            command: command,
            elapsedSeconds: 0,
            finished: 0,
            ratePerSecond: 0,
            accepted: 0,
            rejected: [:],
            failed: [:],
            seconds: []
        )
        let state = NIOLockedValueBox(State(document: empty))
        let finalReads = finalReads
        self.state = state
        linger = address.linger
        do {
            endpoint = try TextEndpoint(host: address.host, port: address.port) { path in
                Self.answer(path, state: state.withLockedValue { ($0.document, $0.final) }, finalReads: finalReads)
            }
        } catch {
            throw JobError.cannotListen(.address("--serve", host: address.host, port: address.port), error)
        }
        reporter.report(.listening(.livePage, address: url))
    }

    private static func answer(
        _ path: String,
        state: (document: LiveDocument, final: String?),
        finalReads: ScrapeCount
    ) -> TextEndpoint.Answer {
        switch (path, state.final) {
        case ("/", .some(let final)), ("/report.html", .some(let final)):
            finalReads.add()
            return .init(status: .ok, type: htmlType, body: final)
        case ("/", nil):
            return .init(status: .ok, type: htmlType, body: LivePage.html(state.document))
        case ("/report.html", nil):
            return .init(
                status: .notFound,
                type: TextEndpoint.plainType,
                body: "report.html is written when the run ends: see / while it goes\n"
            )
        case ("/live.json", _):
            return .init(status: .ok, type: "application/json", body: state.document.json)
        default:
            return .init(status: .notFound, type: TextEndpoint.plainType, body: "not found: try /, /live.json\n")
        }
    }

    static let htmlType = "text/html; charset=utf-8"

    /// A new run (a repeat) starts with `engine`: the page follows its statistics.
    public func follow(_ engine: LoadEngine) {
        state.withLockedValue {
            $0.statistics = engine.statistics
            $0.final = nil
        }
    }

    /// The progress callback for `LoadEngine.run(progress:)`, calling `also` too (the terminal's
    /// progress line): once a second, on the run's thread, the document is rebuilt.
    public func progress(
        also: ((RunProgress) -> Void)?
    ) -> (RunProgress) -> Void {
        { [state] progress in
            also?(progress)
            guard let statistics = state.withLockedValue({ $0.statistics }) else { return }
            let command = state.withLockedValue { $0.document.command }
            let document = LiveDocument(command: command, progress: progress, snapshot: statistics.snapshot)
            state.withLockedValue { $0.document = document }
        }
    }

    /// The document of the moment, built by the owner (the sink's once-a-second sampler).
    public func update(_ document: LiveDocument) {
        state.withLockedValue { $0.document = document }
    }

    /// The run has written its folder: `/` and `/report.html` answer its report.html from now
    /// on, and `/live.json` says it is done. Without a folder (a sink without `--output`), `/`
    /// answers the last live page, done.
    public func finish(folder: String?) throws {
        guard let folder else {
            state.withLockedValue { $0.document.done = true }
            return
        }
        let path = folder + "/report.html"
        guard let data = FileManager.default.contents(atPath: path) else {
            throw JobError.cannotRead(.file(path), "written by the run, it is gone")
        }
        let final = String(decoding: data, as: UTF8.self)
        let reads = finalReads.now
        state.withLockedValue {
            $0.document.done = true
            $0.final = final
            $0.readsBefore = reads
        }
    }

    /// Stops serving: at once, or after the linger, once a request has read the final report or
    /// the linger has passed. Once: a second call does nothing.
    public func close() {
        let first = closing.withLockedValue { closed in
            defer { closed = true }
            return !closed
        }
        guard first else { return }
        if linger > .zero, let reads = state.withLockedValue({ $0.final == nil ? nil : $0.readsBefore }) {
            finalReads.wait(beyond: reads, timeout: linger)
        }
        endpoint.close()
    }
}
