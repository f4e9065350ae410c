import ArgumentParser
import FanoutEndpoint
import FanoutPush
import FanoutRun

/// `fanout send --service fcm`'s own options (docs/fcm.md; docs/load-engine.md, "FCM").
struct FCMSendOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The push service sent to: apns (the template is an APNs payload) or fcm (FCM HTTP v1: the template is a send request, {\"message\": {…}}).",
            valueName: "apns|fcm"
        )
    )
    var service = PushService.apns

    @Option(
        name: .long,
        help: ArgumentHelp(
            "A campaign to both services: the token set's fcm: lines go here (FCM HTTP v1), its apns: and unlabelled lines to --endpoint (APNs); the template is {\"apns\": payload, \"fcm\": send request}; needs FCM's credentials.",
            valueName: "url"
        )
    )
    var fcmEndpoint: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "fcm: the project sent to (POST /v1/projects/ID/messages:send); default: the service account's project_id.",
            valueName: "id"
        )
    )
    var project: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "fcm: a service-account file (as the Firebase console downloads it): access tokens come from its token_uri, renewed ahead of expiry and after a 401.",
            valueName: "file"
        )
    )
    var fcmCredentials: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "fcm: CA certificates (PEM) to trust the service account's https token_uri with (default: --ca-file's, else the system's).",
            valueName: "file"
        )
    )
    var fcmTokenTrust: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "fcm: one access token for the whole run, sent as 'Bearer TOKEN' and never renewed (gcloud auth print-access-token; any text for `fanout sink --service fcm --no-auth`).",
            valueName: "token"
        )
    )
    var fcmBearer: String?

    /// Whether FCM is sent to: alone (`--service fcm`) or as a campaign's half (`--fcm-endpoint`).
    var sendsFCM: Bool { service == .fcm || fcmEndpoint != nil }

    /// The FCM options given with `--service apns`, by name.
    var givenWithoutFCM: [String] {
        let given: [(String, Bool)] = [
            ("--project", project != nil), ("--fcm-credentials", fcmCredentials != nil),
            ("--fcm-token-trust", fcmTokenTrust != nil), ("--fcm-bearer", fcmBearer != nil),
        ]
        return given.filter(\.1).map(\.0)
    }

    func validate() throws {
        if service == .fcm && fcmEndpoint != nil {
            throw ValidationError(
                "--fcm-endpoint is the FCM half of a campaign whose APNs half goes to --endpoint: leave out --service fcm (with it, --endpoint is FCM's)."
            )
        }
        if let fcmEndpoint {
            do { _ = try SendJob.Endpoint(parsing: fcmEndpoint) } catch {
                throw ValidationError("--fcm-endpoint: \(error).")
            }
        }
        guard sendsFCM else {
            let given = givenWithoutFCM
            if !given.isEmpty {
                throw ValidationError(
                    "\(given.joined(separator: ", ")) \(given.count == 1 ? "is" : "are") FCM's: add --service fcm (or --fcm-endpoint for a campaign to both)."
                )
            }
            return
        }
        let sending = service == .fcm ? "--service fcm" : "--fcm-endpoint"
        switch (fcmCredentials, fcmBearer) {
        case (nil, nil):
            throw ValidationError(
                "\(sending) needs credentials: --fcm-credentials FILE (a service account) or --fcm-bearer TOKEN."
            )
        case (.some, .some):
            throw ValidationError("--fcm-credentials and --fcm-bearer are two ways to authenticate: give one.")
        case (nil, .some):
            if fcmTokenTrust != nil {
                throw ValidationError(
                    "--fcm-token-trust is for --fcm-credentials' token endpoint: --fcm-bearer fetches none."
                )
            }
            if project == nil { throw ValidationError("--fcm-bearer needs --project: no service account names it.") }
        case (.some, nil):
            break
        }
        if let project { _ = try FCMSinkOptions.checkedProject(project) }
    }

    /// The job's FCM part; `nil` unless FCM is sent to.
    var job: SendJob.FCM? {
        guard sendsFCM else { return nil }
        if let fcmBearer { return SendJob.FCM(project: project, credentials: .bearer(fcmBearer)) }
        guard let fcmCredentials else { return nil }
        return SendJob.FCM(project: project, credentials: .serviceAccount(file: fcmCredentials, trust: fcmTokenTrust))
    }
}
