import ArgumentParser
import FanoutAPNs
import FanoutClient
import FanoutNotation
import FanoutPush
import FanoutReport
import FanoutTokens
import Foundation

// The option values Fanout's commands take, each read by the one grammar the library writes
// it in (and the sink's scenario files read): a value that does not parse is refused by
// ArgumentParser, with the option's help, before any command runs.

/// `250us`, `5ms`, `1.5s`, `2m`, `1h` (`DurationNotation`).
extension LoadShape.Coalescing: ExpressibleByArgument {
    public init?(argument: String) {
        if argument == "auto" {
            self = .auto
        } else if let window = DurationNotation.parse(argument) {
            self = .fixed(window)
        } else {
            return nil
        }
    }

    public var defaultValueDescription: String { description }

    /// This one, when a fixed window is at most `longest`; else the usage error `option` gets.
    func checked(_ option: String) throws -> LoadShape.Coalescing {
        if case .fixed(let window) = self { _ = try window.atMost(LoadShape.longestCoalescing, option) }
        return self
    }
}

extension Duration: @retroactive ExpressibleByArgument {
    public init?(argument: String) {
        guard let duration = DurationNotation.parse(argument) else { return nil }
        self = duration
    }

    public var defaultValueDescription: String { DurationNotation.format(self) }

    /// This duration when it is above 0, else the usage error `option` gets for it.
    func positive(_ option: String) throws -> Duration {
        guard self > .zero else {
            throw ValidationError("\(option): \(DurationNotation.format(self)) is not a duration above 0.")
        }
        return self
    }

    /// This duration when it is at most `longest`, else the usage error `option` gets for it.
    func atMost(_ longest: Duration, _ option: String) throws -> Duration {
        guard self <= longest else {
            throw ValidationError(
                "\(option): \(DurationNotation.format(self)) is longer than \(DurationNotation.format(longest)), the longest it takes."
            )
        }
        return self
    }
}

/// `5000`, `5000/s`, `300/1m` (`EventRate`).
extension EventRate: ExpressibleByArgument {
    public init?(argument: String) { self.init(parsing: argument) }

    public var defaultValueDescription: String { description }
}

/// `5%` or `0.05` (`ShareNotation`).
struct Share: ExpressibleByArgument, Sendable, Hashable {
    var fraction: Double

    init(_ fraction: Double) { self.fraction = fraction }

    init?(argument: String) {
        guard let fraction = ShareNotation.parse(argument) else { return nil }
        self.fraction = fraction
    }

    var defaultValueDescription: String {
        // To nine decimals: 0.07 × 100 is 7.000000000000001.
        let percent = (fraction * 100 * 1e9).rounded() / 1e9
        return percent == percent.rounded() && abs(percent) < 1e15 ? "\(Int(percent))%" : "\(percent)%"
    }

    /// The fraction when it is from 0 to 1, else the usage error `option` gets for it.
    func checked(_ option: String) throws -> Double {
        guard fraction >= 0 && fraction <= 1 else {
            throw ValidationError("\(option): \(defaultValueDescription) is not a share from 0 to 100%.")
        }
        return fraction
    }
}

/// `off`, or a duration (`DurationNotation`) above 0.
struct DurationOrOff: ExpressibleByArgument, Sendable, Hashable {
    /// `nil`: off.
    var duration: Duration?

    init(_ duration: Duration?) { self.duration = duration }

    init?(argument: String) {
        if argument == "off" {
            duration = nil
        } else {
            guard let duration = DurationNotation.parse(argument) else { return nil }
            self.duration = duration
        }
    }

    var defaultValueDescription: String { duration.map(DurationNotation.format) ?? "off" }

    /// The duration, refused when it is 0.
    func checked(option: String) throws -> Duration? {
        guard let duration else { return nil }
        guard duration > .zero else { throw ValidationError("\(option): 0s is not off or a duration above 0.") }
        return duration
    }
}

/// An RFC 3339 time, like `2026-11-23T10:00:00.000Z` (`TimeNotation`).
struct Moment: ExpressibleByArgument, Sendable, Hashable {
    var date: Date

    init?(argument: String) {
        guard let date = TimeNotation.parse(argument) else { return nil }
        self.date = date
    }
}

/// A count of at least 1, whole or with a multiplier: `600000`, `50K`, `2.5M`, `1B`. Every
/// option that counts devices, tokens or notifications reads it (`run --count 1M` as `plan
/// --devices 2.5M`), through `reading(_:)`, so that a value it refuses says what it takes.
struct Count: ExpressibleByArgument, Sendable, Hashable {
    var value: UInt64

    /// The options' transform: the count, or what a count is (ArgumentParser says "The value
    /// '1m' is invalid for '--count <n>': " before it).
    static func reading(_ text: String) throws -> Count {
        guard let count = Count(argument: text) else {
            throw ValidationError(
                "a count is a whole number of at least 1, or a number with K, M or B after it: 600000, 50K, 2.5M, 1B"
            )
        }
        return count
    }

    init?(argument: String) {
        // A whole number is read exactly, however large: each option's range then says its
        // bound and the value (`--count must be 1…1,000,000,000,000,000 …; got …`).
        if let whole = UInt64(argument) {
            guard whole >= 1 else { return nil }
            value = whole
            return
        }
        let multipliers: [Character: Double] = ["K": 1e3, "k": 1e3, "M": 1e6, "B": 1e9]
        var digits = Substring(argument)
        var multiplier = 1.0
        if let last = digits.last, let factor = multipliers[last] {
            multiplier = factor
            digits = digits.dropLast()
        }
        guard let number = DecimalNotation.parse(digits), number.isFinite, number > 0 else { return nil }
        let value = (number * multiplier).rounded()
        guard value >= 1 && value <= 1e15 else { return nil }
        self.value = UInt64(value)
    }
}

extension OptionRange {
    /// `value` when it is in the range, else the usage error (exit status 64) that says the
    /// range and what bounds it.
    @discardableResult
    func validate(_ value: Int) throws -> Int {
        do { return try check(value) } catch { throw ValidationError("\(error).") }
    }

    /// `value` when it is in the range, else the usage error that says the range.
    @discardableResult
    func validate(_ value: UInt64) throws -> Int {
        do { return try check(value) } catch { throw ValidationError("\(error).") }
    }
}

extension APNsIDPolicy: ExpressibleByArgument {}
extension APNsPushType: ExpressibleByArgument {}
extension TokenFileFormat: ExpressibleByArgument {}
extension RunMetric: ExpressibleByArgument {}
extension CapacityPlan.Refill: ExpressibleByArgument {
    /// What `plan --window-refill` lists: a threshold comes only from a probe (`--probe`), and
    /// `plan` refuses it given, saying so.
    public static var allValueStrings: [String] { allCases.filter { $0 != .threshold }.map(\.rawValue) }
}
extension CIExport.Format: ExpressibleByArgument {}

/// `--service apns|fcm`: which push service a command sends to, mocks or plans for.
extension PushService: ExpressibleByArgument {}
