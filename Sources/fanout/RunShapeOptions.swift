import ArgumentParser
import FanoutAPNs
import FanoutClient
import FanoutMachine
import FanoutNotation
import FanoutReport
import FanoutRun

/// The shape of a run, shared by `fanout run` and `fanout send`: the connections' options and
/// the load model. Unset options keep `LoadShape`'s defaults.
struct ShapeOptions: ParsableArguments {
    @OptionGroup var connection: ConnectionOptions

    @OptionGroup var load: LoadModelOptions

    /// `LoadShape`'s defaults with the options given.
    func shape() throws -> LoadShape {
        var shape = try connection.shape()
        shape.model = try load.model()
        return shape
    }
}

/// Connections, streams, `--timeout` and `--attempts`: the shape of a run without its load
/// model (`fanout search` makes its own). Unset options keep `LoadShape`'s defaults.
struct ConnectionOptions: ParsableArguments {
    @Option(
        name: .long,
        parsing: .unconditional,
        help: ArgumentHelp("HTTP/2 connections (default: \(LoadShape().connections)).", valueName: "c")
    )
    var connections: Int?

    @Option(
        name: .long,
        parsing: .unconditional,
        help: ArgumentHelp(
            "Most streams in flight per connection, up to what the server allows (default: \(LoadShape().streamsPerConnection)).",
            valueName: "m"
        )
    )
    var streams: Int?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Reset and retry a request unanswered this long.",
            valueName: "duration"
        )
    )
    var timeout = LoadShape().streamTimeout

    @Option(
        name: .long,
        parsing: .unconditional,
        help: ArgumentHelp(
            "Tries per notification: 429, 5xx, timeouts, lost connections (default: \(LoadShape().maxAttempts)).",
            valueName: "n"
        )
    )
    var attempts: Int?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The open model's tickets go out a window at a time, each window's at its start (up to a window early, latency counted from the send): auto follows the round trip (¼ of it, 200us to 12.8ms), or a fixed window for every timed work; 0s for exact times.",
            valueName: "auto|duration"
        )
    )
    var coalesce = LoadShape.Coalescing.auto

    func validate() throws {
        if let connections, connections < 1 { throw ValidationError("--connections must be at least 1.") }
        if let streams, streams < 1 { throw ValidationError("--streams must be at least 1.") }
        if let attempts { try MachineLimits.attempts("--attempts").validate(attempts) }
    }

    /// `LoadShape`'s defaults with the options given.
    func shape() throws -> LoadShape {
        var shape = LoadShape()
        if let connections { shape.connections = connections }
        if let streams { shape.streamsPerConnection = streams }
        if let attempts { shape.maxAttempts = attempts }
        shape.streamTimeout = try timeout.positive("--timeout")
        shape.coalescing = try coalesce.checked("--coalesce")
        return shape
    }

    /// The connections and streams against this machine's limits, beside `threads` event loops
    /// of the sender and `otherEventLoops` of an embedded sink whose sockets (`filesEach`: 2)
    /// are this process's too.
    func checkRanges(threads: Int, otherEventLoops: Int = 0, filesEach: Int = 1) throws {
        do {
            try MachineLimits.current().checkSender(
                eventLoops: ("--threads", threads),
                otherEventLoops: otherEventLoops,
                connections: ("--connections", connections ?? LoadShape().connections),
                filesEach: filesEach,
                streams: ("--streams", streams ?? LoadShape().streamsPerConnection)
            )
        } catch {
            throw ValidationError("\(error).")
        }
    }
}

/// `--repeat N`, shared by `fanout run` and `fanout send`.
struct RepeatOptions: ParsableArguments {
    @Option(
        name: .customLong("repeat"),
        parsing: .unconditional,
        help: ArgumentHelp(
            "Run N times (repeat-1 … repeat-N under the output folder) and report medians and spread.",
            valueName: "n"
        )
    )
    var repeats = 1

    func validate() throws {
        try MachineLimits.repeats("--repeat").validate(repeats)
    }
}

/// `--threads N`: event loops, at least one.
struct ThreadOptions: ParsableArguments {
    @Option(
        name: .long,
        parsing: .unconditional,
        help: ArgumentHelp("Event loops of the sender.", valueName: "n")
    )
    var threads = LoadEngine.defaultEventLoops

    func validate() throws {
        try MachineLimits.current().eventLoops("--threads").validate(threads)
    }
}

/// `--metrics HOST:PORT`, shared by `fanout run` and `fanout send`.
struct MetricsOption: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Serve the sender's counts and latency in Prometheus' format at http://HOST:PORT/metrics while the run lasts.",
            valueName: "host:port"
        )
    )
    var metrics: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "After the run, keep serving --metrics until one scrape has read the final figures, or this long (like 30s).",
            valueName: "duration"
        )
    )
    var metricsLinger: String?

    func address() throws -> ServedAddress? {
        try ServedAddress(option: "--metrics", metrics, linger: metricsLinger)
    }
}

/// `--serve HOST:PORT`, shared by `fanout run`, `fanout send` and `fanout sink`.
struct ServeOption: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Serve a live report at http://HOST:PORT/ while the run goes (port 0: any free one), the final report after.",
            valueName: "host:port"
        )
    )
    var serve: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "After the run, keep serving --serve until one request has read the final report, or this long (like 30s).",
            valueName: "duration"
        )
    )
    var serveLinger: String?

    func address() throws -> ServedAddress? {
        try ServedAddress(option: "--serve", serve, linger: serveLinger)
    }
}

extension ServedAddress {
    /// `OPTION HOST:PORT` and `OPTION-linger D`, checked (`nil` without the address; the linger
    /// alone is refused).
    init?(option: String, _ address: String?, linger: String?) throws {
        guard let address else {
            if linger != nil { throw ValidationError("\(option)-linger needs \(option)") }
            return nil
        }
        let (host, port) = try SinkCommand.address(address, option: option)
        var duration = Duration.zero
        if let linger {
            guard let parsed = DurationNotation.parse(linger) else {
                throw ValidationError("\(option)-linger \(linger): not a duration (like 30s or 500ms)")
            }
            duration = parsed
        }
        self.init(host: host, port: port, linger: duration)
    }
}
