import FanoutAssembly
import FanoutClient
import FanoutPush
import FanoutResults
import FanoutTokens

/// `fanout send --endpoint APNS --fcm-endpoint FCM`: one campaign's token set to both push
/// services, each half to its own endpoint, sent together:
///
/// ```
///   tokens.txt ─┬─► APNs half's reader: apns: lines, unlabelled lines ─► --endpoint (APNs)
///   (TokenLabel)└─► FCM half's reader: fcm: lines ─────────────────────► --fcm-endpoint (FCM HTTP v1)
///   template.json {"apns": payload, "fcm": send request} (CampaignTemplate), a half each
///   apns/, fcm/ (each half's run folder) and campaign.json: per service and the whole
///   --gone-tokens FILE: both halves' gone tokens, each line labelled (apns:…, fcm:…)
/// ```
///
/// Each half reads the whole file and takes its own lines (`TokenLines.campaignHalf`), so the
/// set is a regular text file, read twice, never held in memory. The halves share nothing on
/// the way (connections, streams, OAuth2 for FCM, provider tokens for APNs): each is a
/// `SendJob`, its shape its own (a `--rate` paces each half at that rate).
public struct CampaignSendJob: Sendable {
    /// The APNs half: its job reads the set's APNs lines and the template's `apns`.
    public var apns: SendJob
    /// The FCM half: its job reads the set's `fcm:` lines and the template's `fcm`.
    public var fcm: SendJob
    public var reporter: any JobReporter = SilentReporter()
    /// Where both halves write the tokens their service says are gone (APNs 410, FCM
    /// UNREGISTERED), each line labelled as a campaign's token set is: a file the campaign's
    /// owner prunes both services' tokens with, or reads back as a campaign's set.
    public var goneTokens: String? {
        get { apns.goneTokens }
        set {
            apns.goneTokens = newValue
            apns.goneTokensLabel = newValue == nil ? nil : .apns
        }
    }

    /// The campaign of the two jobs, each set to read its half of their token set and template.
    public init(apns: SendJob, fcm: SendJob) {
        var apns = apns
        var fcm = fcm
        apns.tokens.reader.lines = .campaignHalf
        fcm.tokens.reader.lines = .campaignHalf
        fcm.tokens.reader.format = .fcm
        apns.templateHalf = .apns
        fcm.templateHalf = .fcm
        self.apns = apns
        self.fcm = fcm
        // One gone-tokens file for both halves, whichever job named it: the APNs half makes it.
        goneTokens = apns.goneTokens ?? fcm.goneTokens
        self.fcm.goneTokens = nil
    }

    /// Sends the campaign into `directory` (checked and locked before any traffic): `apns/` and
    /// `fcm/` are the halves' run folders, `campaign.json` the whole. Both halves' files are
    /// read (templates, keys, the FCM half's first access token) before either sends. SIGINT,
    /// SIGTERM and SIGHUP stop both. The status is the worse half's.
    public func run(into directory: String) throws -> RunStatus {
        try OutputFile.check(
            apns.sideOutputs + fcm.sideOutputs,
            inputs: apns.inputs + fcm.inputs,
            folders: [("--output", directory)]
        )
        let (apns, fcm) = (self.apns, self.fcm)
        // The folder is locked and the signals watched first: a stop during the FCM half's
        // first token fetch is a stop, and a folder in use is said before any fetch.
        return try Campaign.run(into: directory, reporter: reporter) { signals in
            let apnsConfiguration = try apns.loadConfiguration()
            defer {
                apnsConfiguration.goneTokens?.close()
                apnsConfiguration.endpoint.authorizations?.stop()
            }
            let fcmConfiguration = try {
                var configuration = try fcm.loadConfiguration()
                // The APNs half made the file (the checks above name it once, as its own).
                configuration.goneTokens = apnsConfiguration.goneTokens?.labelled(.fcm)
                return configuration
            }()
            defer {
                fcmConfiguration.goneTokens?.close()
                fcmConfiguration.endpoint.authorizations?.stop()
            }
            return try Campaign.run(
                [
                    Campaign.Half(service: .apns, devices: nil) { try apns.run(apnsConfiguration, started: $0.add) },
                    Campaign.Half(service: .fcm, devices: nil) { try fcm.run(fcmConfiguration, started: $0.add) },
                ],
                fleet: nil,
                into: directory,
                signals: signals,
                reporter: reporter
            )
        }
    }
}
