/// Apple's APNs hosts (docs/apns.md, "Connection"), on ports 443 and 2197: where synthetic
/// tokens must not go (Apple answers each BadDeviceToken, and floods of rejected requests get a
/// provider's connections closed and throttled), and where a run without a rate of its own is
/// capped.
public enum APNsHost: String, CaseIterable, Sendable {
    case production = "api.push.apple.com"
    case sandbox = "api.sandbox.push.apple.com"
    /// An alias of the sandbox some clients use.
    case development = "api.development.push.apple.com"
    /// The channel-management hosts of broadcast channels (docs/apns.md, "Broadcast channels").
    case manageProduction = "api-manage-broadcast.push.apple.com"
    case manageSandbox = "api-manage-broadcast.sandbox.push.apple.com"

    /// The host named by `name` (any case, a trailing dot allowed), if it is one of Apple's.
    public init?(host name: String) {
        var name = Substring(name.lowercased())
        if name.hasSuffix(".") { name = name.dropLast() }
        self.init(rawValue: String(name))
    }

    /// Production APNs delivers to real devices of released apps.
    public var isProduction: Bool { self == .production || self == .manageProduction }

    /// The channel-management host and port of this host's environment (docs/apns.md,
    /// "Broadcast channels": 2196 for production, 2195 for the sandbox).
    public var management: (host: APNsHost, port: Int) {
        isProduction ? (.manageProduction, 2196) : (.manageSandbox, 2195)
    }

    /// The rate, a second, of a send to Apple's hosts that gives no `--rate` of its own: a
    /// campaign's pace, not a flood's, until the user says otherwise.
    public static let conservativeRate = 1000.0
}
