import FanoutHTTP2
import FanoutProbe
import FanoutResults
import Foundation

// probe.json from what `ProbeState` recorded: the engine's records turned into the
// document's plain values (FanoutResults knows nothing of the engine).

extension ProbeDocument {
    /// The document of a probe's outcome.
    public init(endpoint: String, started: Date, tls: Bool, outcome: ProbeOutcome, notes: [String]) {
        let record = outcome.record
        let first = outcome.settingsFirst.map(Values.init)
        let after = record.accepted > 0 ? outcome.settingsLast.map(Values.init) : nil
        let ping = Figures(nanoseconds: record.pingRoundTrips)
        let origin = record.flow?.started ?? record.window.startedAt
        self.init(
            endpoint: endpoint,
            started: started,
            tls: tls ? TLS(version: outcome.tlsVersion, alpn: "h2") : nil,
            settings: Settings(first: first, afterFirstAccepted: after),
            pingRoundTrip: ping,
            oneAtATime: Figures(nanoseconds: record.oneAtATime).map { Requests(roundTrip: $0, seconds: nil) },
            inParallel: Figures(nanoseconds: record.inParallel).map {
                Requests(roundTrip: $0, seconds: Double(record.parallelSpan) / 1e9)
            },
            processing: Figures(nanoseconds: record.oneAtATime, minus: ping?.p50 ?? 0),
            streams: Streams(
                first: first?.maxConcurrentStreams,
                afterFirstAccepted: after?.maxConcurrentStreams,
                peakInFlight: record.peakInFlight
            ),
            answers: ProbeAnswer.named(record.answers),
            resets: record.resets,
            window: outcome.settingsLast.map {
                Window(record.window, origin: origin, streamWindow: $0.initialWindowSize)
            },
            wire: Wire(record.wire, tls: tls ? outcome.tlsVersion ?? "TLSv1.3" : nil),
            flow: record.flow.map(Flow.init),
            notes: notes
        )
    }
}

extension ProbeDocument.Values {
    public init(_ settings: HTTP2Settings) {
        self.init(
            maxConcurrentStreams: settings.maxConcurrentStreams.map { Int($0) },
            initialWindowSize: Int(settings.initialWindowSize),
            maxFrameSize: Int(settings.maxFrameSize),
            headerTableSize: Int(settings.headerTableSize),
            maxHeaderListSize: settings.maxHeaderListSize.map { Int($0) }
        )
    }
}

extension ProbeDocument.Window {
    public init(_ record: ProbeState.WindowRecord, origin: UInt64, streamWindow: UInt32) {
        self.init(
            connectionAtStart: record.atStart ?? record.current,
            connectionAfterFirstAnswers: record.afterFirstAnswers,
            connectionGranted: record.atStart == nil ? record.current : record.granted,
            stream: Int(streamWindow),
            refill: record.refill.map { ProbeDocument.Refill($0, record, origin: origin) }
        )
    }
}

extension ProbeDocument.Refill {
    init(_ refill: ProbeState.Refill, _ record: ProbeState.WindowRecord, origin: UInt64) {
        self.init(
            kind: refill.name,
            smallestIncrement: record.smallestRefill,
            largestIncrement: record.largestRefill,
            connectionUpdates: record.connectionRefills,
            streamUpdates: record.streamUpdates,
            enlargedBytes: record.enlarged,
            mostBytesInFlight: record.mostInFlight,
            updates: record.updates.map { ProbeDocument.Update($0, origin: origin) }
        )
    }
}

extension ProbeDocument.Update {
    init(_ update: ProbeState.WindowRecord.Update, origin: UInt64) {
        self.init(
            atMs: (Double(update.at) - Double(origin)) / 1e6,
            stream: Int(update.stream),
            increment: update.increment,
            windowAfter: update.windowAfter
        )
    }
}

extension ProbeDocument.Wire {
    /// `nil` when no request's bytes were seen whole.
    public init?(_ record: ProbeState.WireRecord, tls version: String?) {
        guard let headers = record.steadyHeaderBlock ?? record.firstHeaderBlock else { return nil }
        let frames = record.headerFrames + record.dataFrames
        let tlsBytes = version.map(Self.recordOverhead) ?? 0
        var note = "TCP/IP headers excluded"
        if let version { note += "; one \(version) record a notification assumed (one record a write)" }
        if record.steadyHeaderBlock == nil { note += "; header block of the first request (fewer than 3 sent)" }
        self.init(
            headersBytes: headers,
            firstHeadersBytes: record.firstHeaderBlock,
            dataBytes: record.bodyBytes,
            frames: frames,
            frameBytes: 9 * frames,
            tlsBytes: tlsBytes,
            wireBytesPerNotification: headers + record.bodyBytes + 9 * frames + tlsBytes,
            note: note
        )
    }
}

extension ProbeDocument.Flow {
    public init(_ record: ProbeState.FlowRecord) {
        let end = max(record.ended ?? record.stopped ?? record.started, record.started)
        let shares = record.boundShares
        self.init(
            sent: record.sent,
            answered: record.answered,
            resets: record.resets,
            answers: ProbeAnswer.named(record.answers),
            seconds: Double(end - record.started) / 1e9,
            steadySeconds: record.steadySpan.map { Double($0.to - $0.from) / 1e9 } ?? 0,
            ratePerSecond: record.rate,
            roundTripMs: Double(record.roundTrip) / 1e6,
            requestRoundTripMs: Double(record.requestRoundTrip) / 1e6,
            mostBytesInFlight: record.mostBytesInFlight,
            creditedPerRoundTrip: record.creditedPerRoundTrip,
            refillIntervalMs: record.refillInterval.map { Double($0) / 1e6 },
            peakStreams: record.peakStreams,
            streamsTarget: record.target,
            bound: record.bound.rawValue,
            windowBoundShare: shares.window,
            streamsBoundShare: shares.streams,
            stoppedBy: record.stoppedByCount ? "count" : "duration"
        )
    }
}
