import Atomics
import FanoutFCM
import FanoutFCMAuth
import NIOConcurrencyHelpers
import NIOCore

/// What every connection of one FCM sink shares: the configuration, the service account and
/// the tokens it was issued, the quota's window, the counts and the log.
public final class FCMService: Sendable {
    public let configuration: FCMSinkConfiguration
    /// The account whose assertions the token endpoint takes (`nil` with `--no-auth`).
    public let account: FCMServiceAccount?
    public let tokens = FCMAccessTokens()
    public let statistics = FCMSinkStatistics()
    let quota: FCMQuotaWindow?
    /// Each device's rates.
    let devices: FCMDeviceRates?
    /// The project's name as the path and a success's body write it.
    let project: [UInt8]
    /// Where the token endpoint is, once the sink listens (an assertion may name it as `aud`).
    private let tokenURIBox = NIOLockedValueBox<String?>(nil)
    /// Where refusals are told, each outcome's first `loggedPerOutcome` with their reason.
    private let log: (@Sendable (String) -> Void)?
    private let logged = (0..<FCMSinkStatistics.Outcome.allCases.count).map { _ in ManagedAtomic(0) }
    static let loggedPerOutcome = 10

    public init(
        configuration: FCMSinkConfiguration,
        account: FCMServiceAccount?,
        log: (@Sendable (String) -> Void)? = nil
    ) {
        self.configuration = configuration
        self.account = account
        self.log = log
        quota = configuration.quota.map(FCMQuotaWindow.init)
        let now = NIODeadline.now().uptimeNanoseconds
        devices = configuration.deviceLimits.map { FCMDeviceRates($0, now: now) }
        project = Array(configuration.project.utf8)
    }

    public var tokenURI: String? {
        get { tokenURIBox.withLockedValue { $0 } }
        set { tokenURIBox.withLockedValue { $0 = newValue } }
    }

    /// Counts an outcome, and tells the log why while that outcome has been told fewer than
    /// `loggedPerOutcome` times (a flood of one refusal is one count, not a flood of lines). The
    /// reason is worded only for a line that is written: past the cap a refusal costs a count.
    func note(
        _ outcome: FCMSinkStatistics.Outcome,
        over transport: FCMSinkStatistics.Transport,
        peer: String,
        _ reason: @autoclosure () -> String?
    ) {
        statistics.count(outcome, over: transport)
        guard let log, logged[outcome.rawValue].load(ordering: .relaxed) < Self.loggedPerOutcome,
            let reason = reason()
        else { return }
        let told = logged[outcome.rawValue].loadThenWrappingIncrement(ordering: .relaxed)
        guard told < Self.loggedPerOutcome else { return }
        let last = told == Self.loggedPerOutcome - 1 ? " (the last such line; counted from here)" : ""
        log("\(peer): \(outcome.name): \(reason)\(last)")
    }
}
