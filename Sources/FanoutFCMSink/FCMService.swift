import Atomics
import FanoutDevices
import FanoutFCM
import FanoutFCMAuth
import FanoutInstrument
import FanoutListening
import FanoutPush
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
    /// The sink as the provider's instrument (`--output`): its card, its arrivals and the rows
    /// of its connections; `nil` when it is not one.
    public let instrument: ProviderInstrument?
    public let connectionRows = FCMConnectionRows()
    /// The round trip of a wire in front of the sink (ns; 0 without one): the quota's back-off
    /// grants what was on the wire when its first 429 left (`ProviderCard.fcmQuotaRefused`).
    public let wireRoundTrip: UInt64
    /// With the instrument: bearers answered 401 (`FCMTokenFate.hash`), the first
    /// `refusedBearersKept`, so that a send again with one is named as such.
    private let refusedBearers = NIOLockedValueBox(Set<UInt64>())
    static let refusedBearersKept = 1024
    let quota: FCMQuotaWindow?
    /// Each device's rates.
    let devices: FCMDeviceRates?
    /// The Android devices behind the sink (`FCMSinkConfiguration.devices`), when any is
    /// modelled: what a 200 became on its device.
    package let fleet: DeviceFleetShards?
    /// The project's name as the path and a success's body write it.
    let project: [UInt8]
    /// Where the token endpoint is, once the sink listens (an assertion may name it as `aud`).
    private let tokenURIBox = NIOLockedValueBox<String?>(nil)
    /// Where refusals are told, each outcome's first `loggedPerOutcome` with their reason.
    private let log: (@Sendable (String) -> Void)?
    private let logged = (0..<FCMSinkStatistics.Outcome.allCases.count).map { _ in ManagedAtomic(0) }
    static let loggedPerOutcome = 10
    private let limitsLogged = LimitKind.allCases.map { _ in ManagedAtomic(0) }
    private let adminLimitsLogged = LimitKind.allCases.map { _ in ManagedAtomic(0) }

    public init(
        configuration: FCMSinkConfiguration,
        account: FCMServiceAccount?,
        instrument: ProviderInstrument? = nil,
        wireRoundTrip: UInt64 = 0,
        log: (@Sendable (String) -> Void)? = nil
    ) {
        self.configuration = configuration
        self.account = account
        self.instrument = instrument
        self.wireRoundTrip = wireRoundTrip
        self.log = log
        quota = configuration.quota.map(FCMQuotaWindow.init)
        let now = NIODeadline.now().uptimeNanoseconds
        devices = configuration.deviceLimits.map { FCMDeviceRates($0, now: now) }
        // The fleet draws from the sink's seed, as the APNs sink's from its scenario's.
        var fleetSettings = configuration.devices
        fleetSettings.seed = configuration.seed
        // FCM keeps each message (one a collapse key), and Android has no background budget.
        fleetSettings.service = .fcm
        fleetSettings.backgroundBudget = nil
        fleet = fleetSettings.isEnabled ? DeviceFleetShards(settings: fleetSettings) : nil
        project = Array(configuration.project.utf8)
    }

    /// Whether the bearer `hash` was answered 401 before; remembers it.
    func bearerRefusedBefore(_ hash: UInt64) -> Bool {
        refusedBearers.withLockedValue { refused in
            if refused.contains(hash) { return true }
            if refused.count < Self.refusedBearersKept { refused.insert(hash) }
            return false
        }
    }

    public var tokenURI: String? {
        get { tokenURIBox.withLockedValue { $0 } }
        set { tokenURIBox.withLockedValue { $0 = newValue } }
    }

    /// One of the sink's limits reached on a connection from `peer` (a timeout, a connection
    /// refused, the admin port's): counted, and told to the log while that kind has been told
    /// fewer than `loggedPerOutcome` times, as `KIND PEER: DETAIL`.
    func limitReached(_ kind: LimitKind, peer: String, _ detail: @autoclosure () -> String) {
        statistics.limitReached(kind)
        tell(limitsLogged[kind.index], "\(kind.rawValue) \(peer): \(detail())")
    }

    /// A limit of the admin port's (`FCMSinkAdmin`): told to the log as `admin: KIND PEER:
    /// DETAIL`, the first `loggedPerOutcome` of a kind, and not counted among the sink's.
    func adminLimitReached(_ kind: LimitKind, peer: String, _ detail: String) {
        tell(adminLimitsLogged[kind.index], "admin: \(kind.rawValue) \(peer): \(detail)")
    }

    /// Tells the log `line` while `told` is under `loggedPerOutcome`; the line is worded only
    /// when it is written.
    private func tell(_ told: ManagedAtomic<Int>, _ line: @autoclosure () -> String) {
        guard let log, told.loadThenWrappingIncrement(ordering: .relaxed) < Self.loggedPerOutcome else { return }
        log(line())
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

// MARK: The card

extension FCMService {
    /// Sends (every request but the token endpoint's) and the client errors among them: the
    /// 4xx answers but 429, as Google counts them against the quota.
    public var clientErrors: (errors: Int, sends: Int) {
        let errors: [FCMSinkStatistics.Outcome] = [
            .invalidArgument, .unregistered, .senderIDMismatch, .unauthenticated, .wrongProject, .notFound,
        ]
        let sends = statistics.totalRequests - statistics[.tokenIssued] - statistics[.tokenRefused]
        return (errors.reduce(0) { $0 + statistics[$1] }, sends)
    }

    /// One row of an FCM sink's card: its rule, count and first examples.
    public struct CardCheck: Sendable {
        public var rule: ProviderRule
        public var count: Int
        public var examples: [ProviderCard.Example]
    }

    /// The rows an FCM sink's card shows: the card's own counts, and two worked out as it is
    /// read — client errors, all of them once they reach `ProviderRule.ClientErrors.share` of
    /// the sends (0 below it), and access tokens replaced early (`FCMAccessTokens`); with
    /// devices, the fleet's two (ttl 0 to an offline device, a notification message kept past
    /// `--device-stale-after`). `nil` without the instrument. Read it once the sink has drained: a connection tells its
    /// bearer's last use when it ends.
    public var cardChecks: [CardCheck]? {
        guard let card = instrument?.card else { return nil }
        let (errors, sends) = clientErrors
        let early = UInt64(ProviderRule.AccessTokens.earlyRefresh.wholeNanoseconds)
        let replacements = tokens.earlyReplacements(early: early)
        // The fleet's rules with devices: the fleet counted them as it decided each outcome.
        let findings = fleet?.findings()
        let shown = ProviderRule.allCases.filter {
            $0.isShown(service: .fcm, devices: findings != nil, broadcasts: false)
        }
        return shown.map { rule in
            if rule.isFleet, let findings {
                return CardCheck(rule: rule, count: findings.counts[rule] ?? 0, examples: findings.examples[rule] ?? [])
            }
            switch rule {
            case .clientErrors:
                let over = sends > 0 && Double(errors) >= Double(sends) * ProviderRule.ClientErrors.share
                return CardCheck(rule: rule, count: over ? errors : 0, examples: over ? card.examples(rule) : [])
            case .accessToken:
                let examples = replacements.prefix(ProviderCard.examplesPerRule).map { replacement in
                    let used =
                        replacement.replaced.lastUse == 0
                        ? "never used"
                        : "last used \((replacement.by.issuedAt - replacement.replaced.lastUse) / 1_000_000) ms before"
                    return ProviderCard.Example(
                        token: "",
                        connection: replacement.by.connection,
                        at: replacement.by.issuedAt,
                        detail:
                            "a new access token with \(replacement.left / 60_000_000_000) min left on the last (\(used))"
                    )
                }
                var noted = Array(examples)
                if tokens.unrecorded > 0 {
                    // Past the history's length the card stops judging: it says so.
                    noted.append(
                        ProviderCard.Example(
                            token: "",
                            connection: 0,
                            at: replacements.last?.by.issuedAt ?? 0,
                            detail:
                                "\(tokens.unrecorded) tokens issued past the first \(FCMAccessTokens.recordsKept) not judged"
                        )
                    )
                }
                return CardCheck(rule: rule, count: replacements.count, examples: noted)
            default:
                return CardCheck(rule: rule, count: card.count(rule), examples: card.examples(rule))
            }
        }
    }
}
