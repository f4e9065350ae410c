import FanoutAPNs
import FanoutDevices
import FanoutFiles
import FanoutHTTP2
import FanoutNotation
import FanoutScenarioTerms
import FanoutWire
import Foundation

/// Scenario settings by name, shared by `fanout sink`'s options and scenario files, so that a
/// file says exactly what the command line can:
///
///     # 3% of tokens are gone, answers take about 5 ms, the sink freezes 1 s every 30 s
///     latency = lognormal:5ms,0.5
///     stall = 30s/1s
///     error = Unregistered:3%
///     error = InternalServerError:0.1%
///     token-rate = 10/1s
///     seed = 42
///
/// One `name = value` a line; `#` starts a comment line; names are the long options without
/// `--`. `error` lines add to the mix; any other name given twice is an error. File paths in
/// values are relative to the scenario file's folder.
extension SinkScenario {
    /// Every setting's name.
    public static let settingNames =
        [
            "latency", "stall", "error", "unregistered-tokens", "bad-tokens", "seed", "token-rate", "connection-rate",
            "goaway-after-requests", "goaway-after-time", "close-after-requests", "unanswered", "max-connections",
            "rtt", "bandwidth", "sink-bandwidth", "connection-window", "stream-window", "window-refill",
        ] + DeviceFleetSettings.settingNames

    /// Reads a scenario file; a problem is reported as `FILE:LINE: what`.
    public init(contentsOfFile path: String) throws(SinkScenarioError) {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw SinkScenarioError("cannot read the scenario file \(path): \(error.reason)")
        }
        self.init()
        try apply(file: text, source: path, directory: (path as NSString).deletingLastPathComponent)
        file = FileUse(path: path, text: text)
    }

    /// Applies the settings in a scenario file's `text`, reporting problems as `source:LINE: what`.
    public mutating func apply(file text: String, source: String, directory: String? = nil) throws(SinkScenarioError) {
        let settings: [SettingsFile.Setting]
        do {
            settings = try SettingsFile.settings(
                in: text,
                source: source,
                known: Self.settingNames,
                repeatable: ["error"]
            )
        } catch {
            throw SinkScenarioError(error.description)
        }
        for setting in settings {
            do {
                try set(setting.name, setting.value, relativeTo: directory)
            } catch {
                throw SinkScenarioError("\(setting.place): \(error.description)")
            }
        }
        do {
            try validate()
        } catch {
            throw SinkScenarioError("\(source): \(error.description)")
        }
    }

    /// One setting of a scenario, read: what a file's `NAME = VALUE` line and the option of
    /// that name both become, typed from the parser to the sink.
    public enum Setting: Sendable {
        case latency(LatencyDistribution)
        case stall(every: Duration, length: Duration)
        /// Adds to the mix.
        case error(reason: APNsReason, probability: Double)
        case unregisteredTokens(TokenList)
        case badTokens(TokenList)
        case seed(UInt64)
        case tokenRate(Rate)
        case connectionRate(Rate)
        case goAwayAfterRequests(Int, reason: APNsReason)
        case goAwayAfterTime(Duration)
        case closeAfterRequests(Int)
        case unanswered(Double)
        case maxConnections(Int)
        /// The wire's round trip, its bandwidth on each connection, and its bandwidth for all.
        case roundTrip(LatencyDistribution)
        case bandwidth(Double)
        case sinkBandwidth(Double)
        case connectionWindow(UInt32)
        case streamWindow(UInt32)
        case windowRefill(HTTP2Connection.WindowRefill)
        case device(DeviceFleetSettings.Setting)

        /// Reads one of `settingNames` from its text. Relative file paths are taken from
        /// `directory` when one is given; files named are read now.
        public init(_ name: String, _ value: String, relativeTo directory: String? = nil) throws(SinkScenarioError) {
            func path(_ file: String) -> String {
                guard let directory, !directory.isEmpty, !file.hasPrefix("/") else { return file }
                return directory + "/" + file
            }
            func count(_ text: String) throws(SinkScenarioError) -> Int {
                guard let number = Int(text) else {
                    throw SinkScenarioError("\(name) takes a whole number of at least 1, not \(text)")
                }
                return try SinkScenario.count(number, name: name)
            }
            switch name {
            case "latency":
                let empirical = "empirical:"
                self = .latency(
                    try LatencyDistribution(
                        parsing: value.hasPrefix(empirical)
                            ? empirical + path(String(value.dropFirst(empirical.count))) : value
                    )
                )
            case "stall":
                let (every, length) = try SinkScenario.stall(value)
                self = .stall(every: every, length: length)
            case "error":
                let (reason, probability) = try SinkScenario.error(value)
                self = .error(reason: reason, probability: probability)
            case "unregistered-tokens": self = .unregisteredTokens(try TokenList(contentsOf: path(value)))
            case "bad-tokens": self = .badTokens(try TokenList(contentsOf: path(value)))
            case "seed":
                guard let number = UInt64(value) else {
                    throw SinkScenarioError("seed takes a whole number, not \(value)")
                }
                self = .seed(number)
            case "token-rate": self = .tokenRate(try SinkScenario.tokenRate(value))
            case "connection-rate": self = .connectionRate(try SinkScenario.rate(value))
            case "goaway-after-requests":
                let (requests, reason) = try SinkScenario.goAway(value)
                self = .goAwayAfterRequests(requests, reason: reason ?? .shutdown)
            case "goaway-after-time": self = .goAwayAfterTime(try SinkScenario.duration(value))
            case "close-after-requests": self = .closeAfterRequests(try count(value))
            case "unanswered": self = .unanswered(try SinkScenario.share(value))
            case "max-connections": self = .maxConnections(try count(value))
            case "rtt":
                let roundTrip: LatencyDistribution
                if let fixed = DurationNotation.parse(value) {
                    roundTrip = .fixed(fixed)
                } else if value.contains(":") {
                    roundTrip = try LatencyDistribution(parsing: value)
                } else {
                    throw SinkScenarioError(
                        "rtt is a duration (80ms) or a spread like normal:80ms,5ms or lognormal:80ms,0.1; got \(value)"
                    )
                }
                guard roundTrip.largest > 0 else {
                    throw SinkScenarioError("rtt must be longer than 0; got \(value)")
                }
                self = .roundTrip(roundTrip)
            case "bandwidth", "sink-bandwidth":
                guard let rate = BandwidthNotation.parse(value) else {
                    throw SinkScenarioError("\(name) must be above 0: \(BandwidthNotation.hint); got \(value)")
                }
                self = name == "bandwidth" ? .bandwidth(rate) : .sinkBandwidth(rate)
            case "connection-window":
                self = .connectionWindow(try SinkWindows.size(value, name: name, smallest: 65_535))
            case "stream-window": self = .streamWindow(try SinkWindows.size(value, name: name, smallest: 1))
            case "window-refill":
                guard let refill = HTTP2Connection.WindowRefill(rawValue: value.trimmingCharacters(in: .whitespaces))
                else {
                    throw SinkScenarioError("window-refill is half or each-frame; got \(value)")
                }
                self = .windowRefill(refill)
            case _ where DeviceFleetSettings.settingNames.contains(name):
                self = .device(try DeviceFleetSettings.Setting(name, value))
            default:
                throw SinkScenarioError("\(name) is not a scenario setting")
            }
        }
    }

    /// `number` when it is at least 1, as `name` (`close-after-requests`, `max-connections`)
    /// needs.
    public static func count(_ number: Int, name: String) throws(SinkScenarioError) -> Int {
        guard number > 0 else { throw SinkScenarioError("\(name) takes a whole number of at least 1, not \(number)") }
        return number
    }

    /// Sets one setting: `error` adds to the mix, any other replaces.
    public mutating func apply(_ setting: Setting) {
        switch setting {
        case .latency(let spread): latency = spread
        case .stall(let every, let length): stall = (every, length)
        case .error(let reason, let probability): errors.append((reason, probability))
        case .unregisteredTokens(let tokens): unregisteredTokens = tokens
        case .badTokens(let tokens): badTokens = tokens
        case .seed(let number): seed = number
        case .tokenRate(let rate): tokenRate = rate
        case .connectionRate(let rate): connectionRate = rate
        case .goAwayAfterRequests(let requests, let reason):
            faults.goAwayAfterRequests = requests
            faults.goAwayReason = reason
        case .goAwayAfterTime(let duration): faults.goAwayAfter = duration
        case .closeAfterRequests(let count): faults.closeAfterRequests = count
        case .unanswered(let share): faults.unansweredShare = share
        case .maxConnections(let count): faults.maxConnections = count
        case .roundTrip(let roundTrip):
            var wire = self.wire ?? SinkWire(roundTrip: roundTrip)
            wire.roundTrip = roundTrip
            self.wire = wire
        case .bandwidth(let rate):
            var wire = self.wire ?? SinkWire(roundTrip: .fixed(.zero))
            wire.bandwidth = rate
            self.wire = wire
        case .sinkBandwidth(let rate):
            var wire = self.wire ?? SinkWire(roundTrip: .fixed(.zero))
            wire.sinkBandwidth = rate
            self.wire = wire
        case .connectionWindow(let size): windows.connection = size
        case .streamWindow(let size): windows.stream = size
        case .windowRefill(let refill): windows.refill = refill
        case .device(let setting): devices.apply(setting)
        }
    }

    /// Sets one setting from its text (`Setting.init(_:_:relativeTo:)`).
    public mutating func set(
        _ name: String,
        _ value: String,
        relativeTo directory: String? = nil
    ) throws(SinkScenarioError) {
        apply(try Setting(name, value, relativeTo: directory))
    }
}
