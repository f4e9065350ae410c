import FanoutAPNs
import FanoutDevices
import FanoutHTTP2
import FanoutScenarioTerms
import FanoutSettings
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

    /// Sets one setting from its text: `error` adds to the mix, any other replaces. Relative
    /// file paths are taken from `directory` when one is given.
    public mutating func set(
        _ name: String,
        _ value: String,
        relativeTo directory: String? = nil
    )
        throws(SinkScenarioError)
    {
        func path(_ file: String) -> String {
            guard let directory, !directory.isEmpty, !file.hasPrefix("/") else { return file }
            return directory + "/" + file
        }
        func count(_ text: String) throws(SinkScenarioError) -> Int {
            guard let number = Int(text), number > 0 else {
                throw SinkScenarioError("\(name) takes a whole number of at least 1, not \(text)")
            }
            return number
        }
        switch name {
        case "latency":
            let empirical = "empirical:"
            latency = try LatencyDistribution(
                parsing: value.hasPrefix(empirical) ? empirical + path(String(value.dropFirst(empirical.count))) : value
            )
        case "stall": stall = try Self.stall(value)
        case "error": errors.append(try Self.error(value))
        case "unregistered-tokens": unregisteredTokens = try TokenList(contentsOf: path(value))
        case "bad-tokens": badTokens = try TokenList(contentsOf: path(value))
        case "seed":
            guard let number = UInt64(value) else { throw SinkScenarioError("seed takes a whole number, not \(value)") }
            seed = number
        case "token-rate": tokenRate = try Self.tokenRate(value)
        case "connection-rate": connectionRate = try Self.rate(value)
        case "goaway-after-requests":
            let (requests, reason) = try Self.goAway(value)
            faults.goAwayAfterRequests = requests
            faults.goAwayReason = reason
        case "goaway-after-time": faults.goAwayAfter = try Self.duration(value)
        case "close-after-requests": faults.closeAfterRequests = try count(value)
        case "unanswered": faults.unansweredShare = try Self.share(value)
        case "max-connections": faults.maxConnections = try count(value)
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
            guard roundTrip.largest > 0 else { throw SinkScenarioError("rtt must be longer than 0; got \(value)") }
            var wire = self.wire ?? SinkWire(roundTrip: roundTrip)
            wire.roundTrip = roundTrip
            self.wire = wire
        case "bandwidth", "sink-bandwidth":
            guard let rate = BandwidthNotation.parse(value) else {
                throw SinkScenarioError("\(name) must be above 0: \(BandwidthNotation.hint); got \(value)")
            }
            var wire = self.wire ?? SinkWire(roundTrip: .fixed(.zero))
            if name == "bandwidth" { wire.bandwidth = rate } else { wire.sinkBandwidth = rate }
            self.wire = wire
        case "connection-window": windows.connection = try SinkWindows.size(value, name: name, smallest: 65_535)
        case "stream-window": windows.stream = try SinkWindows.size(value, name: name, smallest: 1)
        case "window-refill":
            guard let refill = HTTP2Connection.WindowRefill(rawValue: value.trimmingCharacters(in: .whitespaces)) else {
                throw SinkScenarioError("window-refill is half or each-frame; got \(value)")
            }
            windows.refill = refill
        case _ where DeviceFleetSettings.settingNames.contains(name):
            try devices.set(name, value)
        default:
            throw SinkScenarioError("\(name) is not a scenario setting")
        }
    }
}
