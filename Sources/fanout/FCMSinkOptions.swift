import ArgumentParser
import FanoutEndpoint
import FanoutFCMSink
import FanoutFiles
import FanoutNotation
import FanoutPush
import FanoutRun
import Foundation

/// `fanout sink --service fcm`'s own options (docs/fcm.md; docs/sink.md, "FCM").
struct FCMSinkOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The push service mocked: apns (HTTP/2, Apple's rules) or fcm (FCM HTTP v1 with its token endpoint).",
            valueName: "apns|fcm"
        )
    )
    var service = PushService.apns

    @Option(
        name: .long,
        help: ArgumentHelp(
            "fcm: the project served at /v1/projects/ID/messages:send (default: \(FCMSinkConfiguration().project)).",
            valueName: "id"
        )
    )
    var project: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "fcm: write DIR/service-account.json, whose token_uri is this sink's token endpoint: SDKs load it unmodified.",
            valueName: "dir"
        )
    )
    var fcmCredentialsOut: String?

    @Option(
        name: .long,
        help: ArgumentHelp("fcm: trust this service account's key instead of making one.", valueName: "file")
    )
    var fcmCredentials: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "fcm: the project's quota, messages a window from its first counted message (FCM's: 600000/1m), or off.",
            valueName: "n/window|off"
        )
    )
    var fcmQuota: String?

    /// FCM's quota in `--fcm-quota`'s grammar: 600,000 messages a minute.
    static let defaultQuota = "600000/1m"

    @Option(
        name: .long,
        help: ArgumentHelp(
            "fcm: messages to one device a minute and an hour (FCM's: 240,5000), or off; collapsible ones past a burst of 20 are held.",
            valueName: "minute,hour|off"
        )
    )
    var fcmDeviceLimits: String?

    /// FCM's limits on one device in `--fcm-device-limits`' grammar.
    static let defaultDeviceLimits = "240,5000"

    @Option(
        name: .long,
        help: ArgumentHelp("fcm: the share of tokens held unregistered (404 UNREGISTERED).", valueName: "share")
    )
    var fcmUnregistered: Share?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "fcm: the share of tokens held as another sender's (403 SENDER_ID_MISMATCH).",
            valueName: "share"
        )
    )
    var fcmOtherSender: Share?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "fcm: the share of sends failed with 500 INTERNAL, drawn per send (a retry may get through).",
            valueName: "share"
        )
    )
    var fcmInternal: Share?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "fcm: the share of sends turned away with 503 UNAVAILABLE and Retry-After: 1, drawn per send.",
            valueName: "share"
        )
    )
    var fcmUnavailable: Share?

    /// The options above given with `--service apns`: each is FCM's alone.
    var givenForFCMOnly: [String] {
        let given: [(String, Bool)] = [
            ("--project", project != nil),
            ("--fcm-credentials-out", fcmCredentialsOut != nil), ("--fcm-credentials", fcmCredentials != nil),
            ("--fcm-quota", fcmQuota != nil), ("--fcm-device-limits", fcmDeviceLimits != nil),
            ("--fcm-unregistered", fcmUnregistered != nil),
            ("--fcm-other-sender", fcmOtherSender != nil), ("--fcm-internal", fcmInternal != nil),
            ("--fcm-unavailable", fcmUnavailable != nil),
        ]
        return given.filter(\.1).map(\.0)
    }

    /// These options with the scenario file's values where the command line gave none, each
    /// checked as its option is, a problem named by the file's line.
    func overlaid(by file: FCMSinkScenarioFile?) throws -> FCMSinkOptions {
        guard let file else { return self }
        var options = self
        func value(_ name: String, given: Bool) -> SettingsFile.Setting? { given ? nil : file.fcm[name] }
        func check<T>(_ setting: SettingsFile.Setting, _ parse: (String) throws -> T?) throws -> T {
            do {
                if let parsed = try parse(setting.value) { return parsed }
            } catch {
                throw ValidationError("\(setting.place): \(setting.name) = \(setting.value): \(error)")
            }
            throw ValidationError(
                "\(setting.place): \(setting.name) = \(setting.value) is not a share like 5% or 0.05."
            )
        }
        // Each: given on the command line (not nil), it stays; else the file's, checked now.
        if let setting = value("project", given: project != nil) {
            options.project = try check(setting) { try Self.checkedProject($0) }
        }
        if let setting = value("fcm-quota", given: fcmQuota != nil) {
            options.fcmQuota = try check(setting) { text in
                _ = try Self.quota(text)
                return text
            }
        }
        if let setting = value("fcm-device-limits", given: fcmDeviceLimits != nil) {
            options.fcmDeviceLimits = try check(setting) { text in
                _ = try Self.deviceLimits(text)
                return text
            }
        }
        let shares: [(String, WritableKeyPath<FCMSinkOptions, Share?>)] = [
            ("fcm-unregistered", \.fcmUnregistered), ("fcm-other-sender", \.fcmOtherSender),
            ("fcm-internal", \.fcmInternal), ("fcm-unavailable", \.fcmUnavailable),
        ]
        for (name, path) in shares {
            guard let setting = value(name, given: self[keyPath: path] != nil) else { continue }
            let share = try check(setting) { Share(argument: $0) }
            guard (0...1).contains(share.fraction) else {
                throw ValidationError(
                    "\(setting.place): \(setting.name) = \(setting.value) is not a share from 0 to 100%."
                )
            }
            options[keyPath: path] = share
        }
        return options
    }

    /// A Google project id: letters, digits and hyphens (a success's body and the path carry
    /// it as it is).
    static func checkedProject(_ text: String) throws -> String {
        guard FCMDestination.problem(inProject: text) == nil else {
            throw ValidationError("--project takes a project id of letters, digits and hyphens; got \(text).")
        }
        return text
    }

    /// `--fcm-quota`: `off`, or whole messages a window above 0.
    func quota() throws -> FCMSinkConfiguration.Quota? {
        try Self.quota(fcmQuota ?? Self.defaultQuota).map {
            .init(messages: $0.messages, window: UInt64($0.window.wholeNanoseconds))
        }
    }

    /// `--fcm-quota`'s grammar, the sink's and the plan's: `off` (`nil`), or whole messages a
    /// window above 0.
    static func quota(_ text: String) throws -> (messages: Int, window: Duration)? {
        if text == "off" { return nil }
        guard let rate = EventRate(parsing: text), rate.count >= 1, rate.count == rate.count.rounded(),
            rate.count <= Double(Int32.max)
        else {
            throw ValidationError("--fcm-quota takes whole messages a window, like 600000/1m, or off; got \(text).")
        }
        return (Int(rate.count), rate.windowOrSecond)
    }

    /// `--fcm-device-limits`: `off`, or messages a minute and an hour, each at least 1.
    func deviceLimits() throws -> FCMSinkConfiguration.DeviceLimits? {
        try Self.deviceLimits(fcmDeviceLimits ?? Self.defaultDeviceLimits)
    }

    /// `--fcm-device-limits`' grammar.
    static func deviceLimits(_ fcmDeviceLimits: String) throws -> FCMSinkConfiguration.DeviceLimits? {
        if fcmDeviceLimits == "off" { return nil }
        let parts = fcmDeviceLimits.split(separator: ",", omittingEmptySubsequences: false).map {
            UInt32($0.trimmingCharacters(in: .whitespaces))
        }
        guard parts.count == 2, let minute = parts[0], let hour = parts[1], minute >= 1, hour >= minute else {
            throw ValidationError(
                "--fcm-device-limits takes messages a minute and an hour, like 240,5000 (hour ≥ minute ≥ 1), or off; got \(fcmDeviceLimits)."
            )
        }
        return .init(perMinute: minute, perHour: hour)
    }

    /// The sink's configuration: project, quota, token fates, faults, authentication. An option
    /// not given on the command line takes the scenario file's value when it has one
    /// (`FCMSinkScenarioFile`), read with the option's own grammar; its errors name its line.
    func configuration(noAuth: Bool, file: FCMSinkScenarioFile? = nil) throws -> FCMSinkConfiguration {
        let options = try overlaid(by: file)
        var configuration = FCMSinkConfiguration()
        configuration.project = try Self.checkedProject(options.project ?? FCMSinkConfiguration().project)
        configuration.quota = try options.quota()
        configuration.deviceLimits = try options.deviceLimits()
        configuration.unregisteredShare = try options.fcmUnregistered?.checked("--fcm-unregistered") ?? 0
        configuration.otherSenderShare = try options.fcmOtherSender?.checked("--fcm-other-sender") ?? 0
        guard configuration.unregisteredShare + configuration.otherSenderShare <= 1 else {
            throw ValidationError("--fcm-unregistered and --fcm-other-sender add up to more than 100%.")
        }
        configuration.internalShare = try options.fcmInternal?.checked("--fcm-internal") ?? 0
        configuration.unavailableShare = try options.fcmUnavailable?.checked("--fcm-unavailable") ?? 0
        guard configuration.internalShare + configuration.unavailableShare <= 1 else {
            throw ValidationError("--fcm-internal and --fcm-unavailable add up to more than 100%.")
        }
        configuration.authentication = noAuth ? .anyBearer : .serviceAccount
        return configuration
    }
}
