import FanoutNotation
import FanoutRandom
import FanoutScenarioTerms

/// What the devices do after a notification reaches them (issue #63, docs/return-wave.md): a
/// share of them opens it some time later, by one of its actions or by its default action, and
/// every open, action and media download is a request to the provider's backend (`returnTo`).
///
/// ```
///   delivered ──┬─ mutable-content ──► at once: the service extension fetches the media  (1 request)
///               └─ opens (share `open`) ─► after `openAfter`: an action (by `actions`' shares)
///                      or the default action; a foreground one opens the app:
///                      the action's own request, then the app's launch fetches  (`requestsPerOpen`)
/// ```
/// Whether a device opens, and which action it takes, are drawn from its token's hash and the
/// seed (the same device does the same in every run); the delay is drawn per notification.
public struct EngagementSettings: Sendable, Hashable {
    /// Devices that open the notification after its delivery (0...1).
    public var open: Double = 0
    /// From the delivery to the open. The default is a log-normal with the median Leanplum
    /// measured on Android over 671M pushes (48 minutes) and a σ of 1.2, our assumption for its
    /// heavy tail (docs/return-wave.md, "Sources").
    public var openAfter: LatencyDistribution = Self.defaultOpenAfter
    /// The actions chosen by those who open, by name, each with its share of the opens; the rest
    /// take the default action. At most `largestActionCount`.
    public var actions: [ActionShare] = []
    /// Every request a foreground open makes: the action's own first, then the app's launch fetches.
    public var requestsPerOpen = 1
    /// The provider's backend the wave goes to (`nil`: none; then engagement is off).
    public var returnTo: ReturnURL?
    /// The app's categories (`--device-categories`): the actions a payload without
    /// `category-actions` offers by its `aps.category`, each foreground or background.
    public var categories: ActionCategories?
    /// How long the service extension may take to download its media before iOS shows the
    /// notification without it (`serviceExtensionTimeWillExpire`): Apple says "about 30 seconds".
    public var mediaBudget: Duration = .seconds(30)

    public static let defaultOpenAfter = LatencyDistribution.logNormal(median: .seconds(48 * 60), sigma: 1.2)
    /// Actions a notification can carry that the model tells apart (iOS shows at most four).
    public static let largestActionCount = 16
    /// The most requests one open makes.
    public static let largestRequestsPerOpen = 64

    public init() {}

    /// Whether the devices send anything back: a backend is named.
    public var isEnabled: Bool { returnTo != nil }

    /// One action and the share of the opens that choose it.
    public struct ActionShare: Sendable, Hashable {
        public var name: String
        public var share: Double

        public init(name: String, share: Double) {
            self.name = name
            self.share = share
        }
    }

    /// Reads `--device-actions`: `NAME=SHARE[,NAME=SHARE…]`, like `poll_ok=60%,poll_nok=30%`.
    public static func actions(parsing text: String) throws(SinkScenarioError) -> [ActionShare] {
        var actions: [ActionShare] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let item = part.trimmingCharacters(in: .whitespaces)
            guard let equals = item.firstIndex(of: "="), equals != item.startIndex else {
                throw SinkScenarioError(
                    "device-actions is NAME=SHARE[,NAME=SHARE…], like poll_ok=60%,poll_nok=30%; \"\(item)\" has no NAME="
                )
            }
            let name = item[..<equals].trimmingCharacters(in: .whitespaces)
            let share = try ScenarioNotation.share(item[item.index(after: equals)...])
            guard !actions.contains(where: { $0.name == name }) else {
                throw SinkScenarioError("device-actions names \(name) twice")
            }
            guard name.utf8.count <= 255 else {
                throw SinkScenarioError("device-actions: an action's name is at most 255 bytes")
            }
            actions.append(ActionShare(name: name, share: share))
        }
        guard actions.count <= largestActionCount else {
            throw SinkScenarioError("device-actions names \(actions.count) actions; at most \(largestActionCount)")
        }
        let total = actions.reduce(0) { $0 + $1.share }
        guard total <= 1 + 1e-12 else {
            let shares = actions.map { "\($0.name) \(ShareNotation.percent($0.share))" }.joined(separator: ", ")
            throw SinkScenarioError(
                "device-actions' shares add up to \(ShareNotation.percent(total)) (\(shares)), over 100%: the rest of the opens take the default action"
            )
        }
        return actions
    }

    /// The problems with the settings, each naming the option it comes from.
    public func validate() throws(SinkScenarioError) {
        guard (0...1).contains(open) else { throw SinkScenarioError("--device-open must be a share from 0% to 100%") }
        guard (1...Self.largestRequestsPerOpen).contains(requestsPerOpen) else {
            throw SinkScenarioError(
                "--device-requests-per-open must be from 1 to \(Self.largestRequestsPerOpen), not \(requestsPerOpen)"
            )
        }
        guard mediaBudget > .zero else { throw SinkScenarioError("--device-media-budget must be above 0") }
        if let categories {
            for action in actions where categories.action(action.name) == nil {
                throw SinkScenarioError(
                    "--device-actions: \(action.name) is in no category of \(categories.file) (its actions: \(categories.actions.map(\.id).joined(separator: ", ")))"
                )
            }
        }
        if returnTo == nil && (open > 0 || !actions.isEmpty) {
            throw SinkScenarioError(
                "--device-open and --device-actions need --return-to URL: the backend the opens go to"
            )
        }
    }
}

/// What one delivered notification makes its device do (`Engagement.decide`).
package struct EngagementDecision: Equatable {
    /// The service extension fetches the media at delivery.
    package var fetchesMedia = false
    /// When the device opens it (nanoseconds after its delivery), if it does.
    package var opensAfter: UInt64?
    /// The action taken, an index of `EngagementSettings.actions` (`nil`: the default action).
    package var action: Int?
}

/// The model's draws (`EngagementSettings`): from the token's hash and the seed whether it opens
/// and which action, from the fleet's generator the delay.
package struct Engagement: Sendable {
    package let settings: EngagementSettings
    let seed: UInt64
    /// The actions' names as bytes, to find them in a payload without making a string.
    let actionNames: [[UInt8]]
    /// The actions' cumulative shares, in order (the last at most 1).
    private let thresholds: [Double]
    /// Each action as the category file names it: its categories' names as bytes, whether it
    /// runs in the background (`nil`: not in the file, or no file).
    let filed: [(categories: [[UInt8]], background: Bool)?]

    package init(_ settings: EngagementSettings, seed: UInt64) {
        self.settings = settings
        self.seed = seed
        actionNames = settings.actions.map { Array($0.name.utf8) }
        filed = settings.actions.map { action in
            settings.categories?.action(action.name).map { ($0.categories.map { Array($0.utf8) }, $0.background) }
        }
        var sum = 0.0
        thresholds = settings.actions.map {
            sum += $0.share
            return sum
        }
    }

    /// What the device whose `TokenList.hash` is `token` does with a notification delivered to
    /// it, with mutable-content or not.
    @inline(__always)
    package func decide(token: UInt64, mutableContent: Bool, _ random: inout SinkRandom) -> EngagementDecision {
        var decision = EngagementDecision(fetchesMedia: mutableContent)
        let openDraw = Self.unit(SeededRandom.mix(token ^ seed ^ 0x2545_F491_4F6C_DD1D))
        guard openDraw < settings.open else { return decision }
        decision.opensAfter = settings.openAfter.sample(&random)
        let actionDraw = Self.unit(SeededRandom.mix(token ^ seed ^ 0x6A09_E667_F3BC_C909))
        for (index, threshold) in thresholds.enumerated() where actionDraw < threshold {
            decision.action = index
            break
        }
        return decision
    }

    private static func unit(_ bits: UInt64) -> Double { Double(bits >> 11) * 0x1p-53 }
}

/// `--return-to`: the backend's `http://` or `https://` URL, its host, port and path prefix
/// (the requests' paths are appended to it). Read once; checked for its form only (whether it
/// answers is the return engine's to find and say).
public struct ReturnURL: Sendable, Hashable, CustomStringConvertible {
    public var isTLS: Bool
    public var host: String
    public var port: Int
    /// The prefix of every request's path, without a trailing `/` (empty: none).
    public var pathPrefix: String

    public init(parsing text: String) throws(SinkScenarioError) {
        let text = text.trimmingCharacters(in: .whitespaces)
        let rest: Substring
        if text.hasPrefix("http://") {
            isTLS = false
            rest = text.dropFirst(7)
        } else if text.hasPrefix("https://") {
            isTLS = true
            rest = text.dropFirst(8)
        } else {
            throw SinkScenarioError(
                "--return-to takes an http:// or https:// URL, like http://127.0.0.1:8080; got \(text)"
            )
        }
        let authority = rest.prefix { $0 != "/" }
        var path = String(rest.dropFirst(authority.count))
        while path.hasSuffix("/") { path.removeLast() }
        var hostPart = Substring(authority)
        var port = isTLS ? 443 : 80
        if hostPart.hasPrefix("[") {
            guard let close = hostPart.firstIndex(of: "]") else {
                throw SinkScenarioError("--return-to: \(text) opens an IPv6 address with [ and does not close it")
            }
            let after = hostPart[hostPart.index(after: close)...]
            if after.hasPrefix(":") {
                guard let number = Int(after.dropFirst()), (1...65_535).contains(number) else {
                    throw SinkScenarioError("--return-to: \(text) has a port that is not 1–65535")
                }
                port = number
            } else if !after.isEmpty {
                throw SinkScenarioError("--return-to: \(text) has \(after) after its address")
            }
            hostPart = hostPart[hostPart.index(after: hostPart.startIndex)..<close]
        } else if let colon = hostPart.lastIndex(of: ":") {
            guard let number = Int(hostPart[hostPart.index(after: colon)...]), (1...65_535).contains(number) else {
                throw SinkScenarioError("--return-to: \(text) has a port that is not 1–65535")
            }
            port = number
            hostPart = hostPart[..<colon]
        }
        guard !hostPart.isEmpty, !hostPart.contains("@"), !path.contains("?"), !path.contains("#") else {
            throw SinkScenarioError(
                "--return-to: \(text) needs a host, and no user, query or fragment (the events' paths are appended)"
            )
        }
        host = String(hostPart)
        self.port = port
        pathPrefix = path
    }

    public var description: String {
        let scheme = isTLS ? "https" : "http"
        let host = host.contains(":") ? "[\(host)]" : host
        return "\(scheme)://\(host):\(port)\(pathPrefix)"
    }
}

/// What the devices did after their deliveries, counted by the fleet (summed over its shards).
package struct EngagementCounts: Sendable, Equatable {
    /// Media downloads by service extensions (mutable-content alerts delivered).
    package var mediaFetches = 0
    /// Opens, by any action (a foreground one, or the default).
    package var opens = 0
    /// Actions run in the background (the category file's): one request each, no open.
    package var backgroundActions = 0
    /// Opens by the default action (none drawn, or one drawn that the payload does not carry).
    package var defaultOpens = 0
    /// Opens by each of `EngagementSettings.actions`.
    package var actions: [Int]
    /// Opens that drew each action and found it missing from their notification's payload.
    package var notCarried: [Int]
    /// Deliveries from storage: their events, decided when the notification was stored (the
    /// token and payload at hand then), fall due from the delivery.
    package var fromStorage = 0

    package init(actions: Int) {
        self.actions = Array(repeating: 0, count: actions)
        notCarried = Array(repeating: 0, count: actions)
    }

    package static func + (left: Self, right: Self) -> Self {
        var sum = left
        if sum.actions.count < right.actions.count {
            sum.actions += Array(repeating: 0, count: right.actions.count - sum.actions.count)
            sum.notCarried += Array(repeating: 0, count: right.notCarried.count - sum.notCarried.count)
        }
        sum.mediaFetches += right.mediaFetches
        sum.opens += right.opens
        sum.backgroundActions += right.backgroundActions
        sum.defaultOpens += right.defaultOpens
        sum.fromStorage += right.fromStorage
        for index in sum.actions.indices where index < right.actions.count {
            sum.actions[index] += right.actions[index]
            sum.notCarried[index] += right.notCarried[index]
        }
        return sum
    }
}
