import ArgumentParser
import FanoutDevices
import FanoutMachine
import FanoutNotation
import FanoutPush
import FanoutReport
import FanoutResults
import FanoutReturn
import FanoutRun
import FanoutScenarioTerms
import FanoutSink
import Foundation

struct PlanCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plan",
        abstract: "Plan the connections, cores and machines that deliver N notifications by a deadline.",
        // ArgumentParser's line would show every option as optional: validate() and the job
        // require these.
        usage: """
            fanout plan --devices <n> --deadline <duration> (--rtt <duration> | --probe <file>) [<options>]
              fanout plan --broadcast --channels <n> --subscribers <n> --update-every <duration> --rtt <duration> [<options>]
            """,
        discussion: """
            From the round trip (each connection carries at most streams ÷ (RTT + processing) a \
            second) and the sender's measured CPU per notification (--cost RUN_DIR reads a run's \
            summary.json; --calibrate measures it here over TLS with token auth). Prints each \
            figure with how it was reached, what binds, and every assumption; writes plan.json \
            with --output.

            Exit status: 0 with a plan (with --verify, every measurement within 10% of its \
            prediction), 1 when --verify's rehearsal was further than that or could not keep its \
            pace, or on an error (a file it cannot read or write), 64 on a usage error, 130, 143 \
            or 129 when SIGINT, SIGTERM or SIGHUP stopped --verify or --calibrate.
            """
    )

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Devices to reach: 600000, 2.5M, 1B.", valueName: "n"),
        transform: Count.reading
    )
    var devices: Count?

    @Option(help: ArgumentHelp("By when: 5m, 60s.", valueName: "duration"))
    var deadline: Duration?

    @Option(
        help: ArgumentHelp(
            "The push service: apns, or fcm (100 streams a connection, the project's quota, FCM's request bytes).",
            valueName: "apns|fcm"
        )
    )
    var service = PushService.apns

    @Option(
        name: .customLong("fcm-quota"),
        help: ArgumentHelp(
            "fcm: the project's quota, messages a window from its first counted message (FCM's: 600000/1m), or off.",
            valueName: "n/window|off"
        )
    )
    var fcmQuota: String?

    @Option(
        help: ArgumentHelp(
            "Plan one campaign across both services, each half by its share (apns=55%,fcm=45%) with its service's defaults and FCM's quota; writes fleet-plan.json with --output.",
            valueName: "apns=SHARE,fcm=SHARE"
        )
    )
    var fleet: String?

    @Flag(
        help:
            "Plan Live Activity updates over broadcast channels (--channels, --subscribers, --update-every) beside the per-token fan-out of the same audience."
    )
    var broadcast = false

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("With --broadcast: the broadcast channels, each updated every interval.", valueName: "n"),
        transform: Count.reading
    )
    var channels: Count?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("With --broadcast: the devices subscribed to each channel.", valueName: "n"),
        transform: Count.reading
    )
    var subscribers: Count?

    @Option(help: ArgumentHelp("With --broadcast: how often each channel is updated: 10s.", valueName: "duration"))
    var updateEvery: Duration?

    @Option(
        help: ArgumentHelp("The round trip to APNs (or FCM) from where the senders run: 80ms.", valueName: "duration")
    )
    var rtt: Duration?

    @Option(help: ArgumentHelp("Concurrent streams a connection (default: APNs' 1000, FCM's 100).", valueName: "n"))
    var streams: Int?

    @Option(
        help: ArgumentHelp(
            "The service's own time on a request, added to the round trip (default: 5ms).",
            valueName: "duration"
        )
    )
    var processing: Duration?

    @Option(
        help: ArgumentHelp(
            "A probe.json of fanout probe: the round trip, processing and streams it measured.",
            valueName: "file"
        )
    )
    var probe: String?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "The connection window the receiver grants, in bytes (65535 is nghttp2's; default: not known, over the probe's).",
            valueName: "bytes"
        )
    )
    var connectionWindow: String?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Each stream's window (SETTINGS_INITIAL_WINDOW_SIZE), in bytes.", valueName: "bytes")
    )
    var streamWindow: String?

    @Option(
        help: ArgumentHelp(
            "When the receiver gives the window back: half (once half is consumed, nghttp2's; the default) or each-frame.",
            valueName: "policy"
        )
    )
    var windowRefill: CapacityPlan.Refill?

    @Option(
        help: ArgumentHelp(
            "The notification template: its body's bytes (rendered for a 64-digit token) enter the windows' and bandwidths' bounds.",
            valueName: "file"
        )
    )
    var template: String?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "A body's bytes, 20 to 5120, instead of --template (default: 280, fixtures/poll.json's).",
            valueName: "bytes"
        )
    )
    var bodyBytes: Int?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "A connection's path bandwidth each way, e.g. 100Mbit (default: not capped).",
            valueName: "rate"
        )
    )
    var bandwidth: String?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("A sending machine's network interface (default: 1Gbit).", valueName: "rate")
    )
    var nic: String?

    @Flag(help: "The connections are cleartext h2c (a gateway, a rehearsal): no TLS record bytes.")
    var cleartext = false

    @Option(
        help: ArgumentHelp("A run folder whose summary.json gives the sender's CPU per notification.", valueName: "dir")
    )
    var cost: String?

    @Flag(help: "Measure the sender's CPU per notification here: a run over TLS with token auth.")
    var calibrate = false

    @Option(help: ArgumentHelp("Cores a sending machine has: this machine's unless given.", valueName: "n"))
    var cores: Int?

    /// `--cores`, or this machine's.
    var coresPerMachine: Int { cores ?? ProcessInfo.processInfo.activeProcessorCount }

    @Option(help: ArgumentHelp("The share of each ceiling the plan uses (N% or 0.N).", valueName: "share"))
    var headroom = Share(CapacityPlan.Question.defaultHeadroom)

    @Option(help: ArgumentHelp("Where plan.json (and the rehearsal's run folder) go.", valueName: "dir"))
    var output: String?

    @Flag(
        help:
            "Rehearse one machine's share here (with --broadcast: the broadcasts at the plan's request rate): a sink answering after the planned round trip, the planned connections and streams; exit 1 when a measurement is more than 10% from its prediction."
    )
    var verify = false

    @Option(
        help: ArgumentHelp(
            "Devices offline when the fan-out starts, as the sink's --device-offline: the plan then says when it reaches the devices.",
            valueName: "share"
        ),
        transform: { try DeviceFleetSettings.Setting("device-offline", $0) }
    )
    var deviceOffline: DeviceFleetSettings.Setting?

    @Option(
        help: ArgumentHelp(
            "When offline devices come back, from the fan-out's start, as the sink's --device-return: uniform:0s-120s, or never.",
            valueName: "kind:values"
        ),
        transform: { try DeviceFleetSettings.Setting("device-return", $0) }
    )
    var deviceReturn: DeviceFleetSettings.Setting?

    @Option(
        help: ArgumentHelp(
            "Each notification's apns-expiration, as the time after it is sent (0: deliver once); without it, stored for --device-default-expiry.",
            valueName: "duration"
        )
    )
    var deviceExpiration: String?

    @Option(
        help: ArgumentHelp(
            "How long a notification without apns-expiration is stored, as the sink's (default: 7d).",
            valueName: "duration"
        ),
        transform: { try DeviceFleetSettings.Setting("device-default-expiry", $0) }
    )
    var deviceDefaultExpiry: DeviceFleetSettings.Setting?

    @Option(
        help: ArgumentHelp(
            "Devices that open the notification after its delivery: the plan then says the return wave it sets off at your backend (as the sink's --device-open).",
            valueName: "share"
        ),
        transform: { try DeviceFleetSettings.Setting("device-open", $0) }
    )
    var deviceOpen: DeviceFleetSettings.Setting?

    @Option(
        help: ArgumentHelp(
            "From the delivery to the open, as the sink's --device-open-after (default: lognormal:48m,1.2).",
            valueName: "kind:values"
        ),
        transform: { try DeviceFleetSettings.Setting("device-open-after", $0) }
    )
    var deviceOpenAfter: DeviceFleetSettings.Setting?

    @Option(
        help: ArgumentHelp("Every request an open makes (default: 1).", valueName: "n"),
        transform: { try DeviceFleetSettings.Setting("device-requests-per-open", $0) }
    )
    var deviceRequestsPerOpen: DeviceFleetSettings.Setting?

    @Option(
        help: ArgumentHelp(
            "The requests a second your backend holds, like 20k/s: the plan says whether it holds the wave, and the shortest fan-out that keeps the wave under it.",
            valueName: "rate"
        )
    )
    var backendCapacity: String?

    @Option(
        help: ArgumentHelp(
            "Your backend: --verify then rehearses the wave at the plan's pace, sampled (--sample), sending it there, and checks its busiest second against the plan's.",
            valueName: "url"
        )
    )
    var returnTo: String?

    @Option(
        help: ArgumentHelp(
            "The wave's rehearsal: this share of the devices with time compressed as much (default: the share that is 100,000 devices, all of a smaller campaign).",
            valueName: "share"
        )
    )
    var sample: String?

    @OptionGroup(title: "The wave's rehearsal") var returnWave: ReturnWaveOptions

    /// `--verify --return-to`: the wave's rehearsal (`nil` without `--return-to`).
    func waveRehearsal(devices: UInt64, wave: WavePlan.Question?) throws -> WaveRehearsal? {
        guard let returnTo else {
            if sample != nil {
                throw ValidationError("--sample is the wave's rehearsal's: add --verify --return-to URL.")
            }
            if verify && wave != nil {
                throw ValidationError(
                    "--verify with the wave's options rehearses the wave against your backend: add --return-to URL (or leave out --device-open to rehearse the fan-out)."
                )
            }
            return nil
        }
        guard verify, wave != nil else {
            throw ValidationError(
                "--return-to is where --verify sends the wave's rehearsal: add --verify and --device-open."
            )
        }
        let url: ReturnURL
        let chosen: CampaignSample
        do {
            url = try ReturnURL(parsing: returnTo)
        } catch {
            throw ValidationError("\(error).")
        }
        do {
            chosen = try sample.map { try CampaignSample(parsing: $0) } ?? WaveRehearsal.defaultSample(devices: devices)
        } catch {
            throw ValidationError("--sample: \(error).")
        }
        var rehearsal = WaveRehearsal(returnTo: url, sample: chosen)
        rehearsal.settings = try returnWave.settings()
        return rehearsal
    }

    /// The return wave the `--device-open…` options ask about (`nil`: none given).
    func waveQuestion() throws -> WavePlan.Question? {
        guard deviceOpen != nil || deviceOpenAfter != nil || deviceRequestsPerOpen != nil || backendCapacity != nil
        else { return nil }
        guard deviceOpen != nil else {
            throw ValidationError(
                "--device-open-after, --device-requests-per-open and --backend-capacity plan the return wave: add --device-open."
            )
        }
        var engagement = EngagementSettings()
        var fleet = DeviceFleetSettings()
        for setting in [deviceOpen, deviceOpenAfter, deviceRequestsPerOpen].compactMap({ $0 }) { fleet.apply(setting) }
        engagement = fleet.engagement
        var capacity: Double?
        if let backendCapacity {
            let parts = backendCapacity.split(separator: "/", omittingEmptySubsequences: false)
            let window =
                parts.count == 2
                ? (parts[1] == "s" ? Duration.seconds(1) : DurationNotation.parse(parts[1])) : .seconds(1)
            guard (1...2).contains(parts.count), let count = Count(argument: String(parts[0])), count.value > 0,
                let window, window > .zero
            else {
                throw ValidationError(
                    "--backend-capacity is requests a second, like 20k/s or 1.2M/1m; got \(backendCapacity)."
                )
            }
            capacity = Double(count.value) / window.seconds
        }
        return WavePlan.Question(
            open: engagement.open,
            openAfter: engagement.openAfter,
            requestsPerOpen: engagement.requestsPerOpen,
            capacity: capacity
        )
    }

    /// The devices behind APNs the `--device-…` options give (`nil`: none given).
    func devicesBehind() throws -> DeviceReach.Question? {
        guard deviceOffline != nil || deviceReturn != nil || deviceExpiration != nil || deviceDefaultExpiry != nil
        else { return nil }
        // The sink's grammar and checks, one of each.
        var fleet = DeviceFleetSettings()
        for setting in [deviceOffline, deviceReturn, deviceDefaultExpiry].compactMap({ $0 }) { fleet.apply(setting) }
        do { try fleet.validate() } catch { throw ValidationError("\(error).") }
        var question = DeviceReach.Question()
        question.offline = fleet.offline
        question.returnAfter = fleet.returnAfter
        question.defaultExpiry = fleet.defaultExpiry
        if let deviceExpiration {
            if deviceExpiration.trimmingCharacters(in: .whitespaces) == "0" {
                question.expiration = .zero
            } else {
                do {
                    question.expiration = try SinkScenario.duration(deviceExpiration)
                } catch {
                    throw ValidationError("--device-expiration: \(error).")
                }
            }
        }
        return question
    }

    /// The fan-out the plan is for: `--devices` by `--deadline`, or with `--broadcast` the
    /// per-token fan-out of the channels' audience every `--update-every` (the broadcast's own
    /// figures come from `PlanJob.broadcast`).
    func fanOut() throws -> (devices: UInt64, deadline: Duration) {
        guard broadcast else {
            if channels != nil || subscribers != nil || updateEvery != nil {
                throw ValidationError("--channels, --subscribers and --update-every plan a broadcast: add --broadcast.")
            }
            guard let devices, let deadline else {
                throw ValidationError(
                    "Give --devices and --deadline (or --broadcast with --channels, --subscribers and --update-every)."
                )
            }
            try MachineLimits.tokenCount("--devices").validate(devices.value)
            return (devices.value, try deadline.positive("--deadline"))
        }
        guard devices == nil && deadline == nil else {
            throw ValidationError(
                "--broadcast plans --channels × --subscribers every --update-every: leave out --devices and --deadline."
            )
        }
        guard let channels, let subscribers, let updateEvery else {
            throw ValidationError("--broadcast needs --channels, --subscribers and --update-every.")
        }
        try MachineLimits.tokenCount("--channels").validate(channels.value)
        try MachineLimits.tokenCount("--subscribers").validate(subscribers.value)
        let (audience, overflow) = channels.value.multipliedReportingOverflow(by: subscribers.value)
        guard !overflow else { throw ValidationError("--channels × --subscribers is past 2^64 devices.") }
        return (audience, try updateEvery.positive("--update-every"))
    }

    /// What `--service fcm` does not take: APNs' own ways to a figure (its probe, its
    /// calibration against the APNs sink, broadcasts, its device fleet); and `--fcm-quota`
    /// without it.
    func checkService() throws {
        guard service == .fcm else {
            if fcmQuota != nil { throw ValidationError("--fcm-quota is FCM's: add --service fcm.") }
            return
        }
        let apnsOnly: [(String, Bool)] = [
            ("--probe", probe != nil), ("--calibrate", calibrate), ("--broadcast", broadcast),
            ("--device-offline", deviceOffline != nil), ("--device-return", deviceReturn != nil),
            ("--device-expiration", deviceExpiration != nil), ("--device-default-expiry", deviceDefaultExpiry != nil),
        ]
        let given = apnsOnly.filter(\.1).map(\.0)
        if verify, connectionWindow != nil || streamWindow != nil || windowRefill != nil {
            throw ValidationError(
                "--service fcm --verify rehearses against the FCM sink, which grants Google's windows: leave out --connection-window, --stream-window and --window-refill, or --verify."
            )
        }
        guard given.isEmpty else {
            throw ValidationError(
                "--service fcm does not take \(given.joined(separator: ", ")): \(given.count == 1 ? "it plans" : "they plan") APNs alone "
                    + "(for FCM's CPU a notification, give --cost with the folder of a fanout send --service fcm run)."
            )
        }
    }

    /// `--fleet`: both halves of one campaign, each planned with its service's defaults (the
    /// options that are one service's, or that send, are refused by name).
    func fleetPlan() throws -> FleetPlan {
        let refused: [(String, Bool)] = [
            ("--service", service != .apns), ("--probe", probe != nil), ("--calibrate", calibrate),
            ("--cost", cost != nil), ("--verify", verify), ("--broadcast", broadcast), ("--streams", streams != nil),
            ("--template", template != nil), ("--body-bytes", bodyBytes != nil),
            ("--device-offline", deviceOffline != nil), ("--device-return", deviceReturn != nil),
            ("--device-expiration", deviceExpiration != nil), ("--device-default-expiry", deviceDefaultExpiry != nil),
            ("--device-open", deviceOpen != nil), ("--backend-capacity", backendCapacity != nil),
        ]
        let given = refused.filter(\.1).map(\.0)
        guard given.isEmpty else {
            throw ValidationError(
                "--fleet plans each half with its own service's defaults: it does not take \(given.joined(separator: ", "))."
            )
        }
        let shares: FleetShares
        do { shares = try FleetShares(parsing: fleet ?? "") } catch { throw ValidationError("\(error).") }
        let fanOut = try fanOut()
        guard let rtt else { throw ValidationError("Give --rtt (the round trip to APNs and FCM).") }
        let roundTrip = try rtt.positive("--rtt")
        try MachineLimits.plannedCores("--cores").validate(coresPerMachine)
        let headroomFraction = try checkedHeadroom()
        let halves = FleetPlan.halves(of: fanOut.devices, apnsShare: shares.apns)
        var apns = CapacityPlan.Question(
            devices: halves.apns,
            deadline: fanOut.deadline,
            roundTrip: roundTrip,
            coresPerMachine: coresPerMachine
        )
        var fcm = CapacityPlan.Question.fcm(
            devices: halves.fcm,
            deadline: fanOut.deadline,
            roundTrip: roundTrip,
            coresPerMachine: coresPerMachine
        )
        fcm.quota = try quota()
        apns.processing = processing ?? CapacityPlan.Question.defaultProcessing
        fcm.processing = apns.processing
        apns.headroom = headroomFraction
        fcm.headroom = headroomFraction
        try applyFlow(to: &apns.flow, probed: false)
        try applyFlow(to: &fcm.flow, probed: false)
        return FleetPlan(apnsShare: shares.apns, fcmShare: shares.fcm, apns: CapacityPlan(apns), fcm: CapacityPlan(fcm))
    }

    /// `--fcm-quota`: off, or whole messages a window (the sink's grammar).
    func quota() throws -> CapacityPlan.Quota? {
        try FCMSinkOptions.quota(fcmQuota ?? FCMSinkOptions.defaultQuota).map {
            CapacityPlan.Quota(messages: $0.messages, window: $0.window)
        }
    }

    /// `--headroom` as a fraction, above 0 and at most 1.
    func checkedHeadroom() throws -> Double {
        guard headroom.fraction > 0, headroom.fraction <= 1 else {
            throw ValidationError(
                "--headroom: \(headroom.defaultValueDescription) is not a share above 0% and at most 100%."
            )
        }
        return headroom.fraction
    }

    func job() throws -> PlanJob {
        try checkService()
        let fanOut = try fanOut()
        var question: CapacityPlan.Question
        if let probe {
            if rtt != nil || processing != nil || streams != nil {
                throw ValidationError(
                    "--probe gives the round trip, processing and streams: leave out --rtt, --processing and --streams."
                )
            }
            let measured: PlanJob.ProbeFigures
            do { measured = try PlanJob.probeFigures(probe) } catch { throw ValidationError("\(error).") }
            question = CapacityPlan.Question(
                devices: fanOut.devices,
                deadline: fanOut.deadline,
                roundTrip: measured.roundTrip,
                coresPerMachine: coresPerMachine
            )
            question.processing = measured.processing
            question.streams = measured.streams
            question.probeSource = measured.source
            question.flow = measured.flow
        } else {
            guard let rtt else {
                throw ValidationError(
                    service == .fcm
                        ? "Give --rtt (the round trip to FCM)."
                        : "Give --rtt (the round trip to APNs), or --probe probe.json."
                )
            }
            let roundTrip = try rtt.positive("--rtt")
            if service == .fcm {
                question = .fcm(
                    devices: fanOut.devices,
                    deadline: fanOut.deadline,
                    roundTrip: roundTrip,
                    coresPerMachine: coresPerMachine
                )
                question.quota = try quota()
            } else {
                question = CapacityPlan.Question(
                    devices: fanOut.devices,
                    deadline: fanOut.deadline,
                    roundTrip: roundTrip,
                    coresPerMachine: coresPerMachine
                )
            }
            question.processing = processing ?? CapacityPlan.Question.defaultProcessing
            question.streams = try MachineLimits.plannedStreams("--streams").validate(streams ?? question.streams)
        }
        try applyFlow(to: &question.flow, probed: probe != nil)
        try MachineLimits.plannedCores("--cores").validate(coresPerMachine)
        let headroomFraction = try checkedHeadroom()
        question.headroom = headroomFraction
        if cost != nil && calibrate {
            throw ValidationError("--cost and --calibrate are two ways to one figure: give one.")
        }
        var job = PlanJob(question: question)
        if let cost { job.cost = .runFolder(cost) }
        if calibrate { job.cost = .calibrate(notifications: PlanJob.calibrationNotifications) }
        job.output = output
        job.verify = verify
        job.devices = try devicesBehind()
        job.wave = try waveQuestion()
        job.waveRehearsal = try waveRehearsal(devices: question.devices, wave: job.wave)
        if broadcast, let channels, let subscribers {
            if job.devices != nil {
                throw ValidationError("--device-… options are for per-token plans, not --broadcast.")
            }
            if verify, let refusal = PlanJob.broadcastRehearsalRefusal(channels: channels.value) {
                throw ValidationError(refusal + ".")
            }
            job.broadcast = .init(
                channels: channels.value,
                subscribers: subscribers.value,
                updateEvery: fanOut.deadline
            )
        }
        return job
    }

    /// The windows, bytes and bandwidths the options give (over a probe's).
    func applyFlow(to flow: inout CapacityPlan.Flow, probed: Bool) throws {
        func size(_ text: String, _ option: String, smallest: Int) throws -> Int {
            let range = MachineLimits.plannedWindow(option, smallest: smallest)
            guard let bytes = Int(text) else { throw ValidationError("\(OptionRangeError(range, given: text)).") }
            return try range.validate(bytes)
        }
        func rate(_ text: String, _ option: String) throws -> Double {
            guard let rate = BandwidthNotation.parse(text) else {
                throw ValidationError("\(option) must be above 0: \(BandwidthNotation.hint); got \(text).")
            }
            return rate
        }
        if let connectionWindow {
            flow.connectionWindow = try size(connectionWindow, "--connection-window", smallest: 65_535)
            flow.sources.connectionWindow = "given"
        }
        if let streamWindow {
            flow.streamWindow = try size(streamWindow, "--stream-window", smallest: 1)
            flow.sources.streamWindow = "given"
        }
        if let windowRefill {
            guard windowRefill != .threshold else {
                throw ValidationError("--window-refill is half or each-frame (a threshold comes only from --probe).")
            }
            flow.refill = windowRefill
            flow.sources.refill = "given"
        }
        if template != nil && bodyBytes != nil {
            throw ValidationError("--template and --body-bytes are two ways to one figure: give one.")
        }
        if let template {
            do {
                flow.bodyBytes = try PlanJob.bodyBytes(template: template, service: service)
            } catch {
                throw ValidationError("--template: \(error).")
            }
            flow.sources.bodyBytes = "rendered from \(template)"
            flow.templatePath = template
        }
        if let bodyBytes {
            flow.bodyBytes = try MachineLimits.plannedBodyBytes("--body-bytes").validate(bodyBytes)
            flow.sources.bodyBytes = "given"
        }
        if let bandwidth {
            flow.bandwidth = try rate(bandwidth, "--bandwidth")
            flow.sources.bandwidth = "given"
        }
        if let nic {
            flow.networkInterface = try rate(nic, "--nic")
            flow.sources.networkInterface = "given"
        } else {
            flow.sources.networkInterface = "default: 1 Gbit/s, give --nic"
        }
        if cleartext { flow.tls = false }
    }

    /// With `--output`, the folder is checked and taken before anything is sent (a calibration,
    /// a rehearsal); while the job sends, SIGINT, SIGTERM and SIGHUP stop it cleanly: a
    /// rehearsal's folder is written marked interrupted, plan.json says so, and the exit status is
    /// 128 + the signal's number.
    func run() throws {
        if fleet != nil { return try runFleet() }
        var job = try job()
        job.reporter = ConsoleReporter.shared
        let folder: RunOutput?
        do {
            folder = try output.map { try RunOutput(preparing: $0, results: .plan) }
        } catch {
            reportError("\(error)")
            throw ExitCode.failure
        }
        try withExtendedLifetime(folder) {
            // Only a job that sends has anything to stop cleanly: a plan of arithmetic alone ends
            // on a signal as any process does.
            guard verify || calibrate else {
                try job.broadcast != nil ? runBroadcast(job, signals: nil) : run(job, signals: nil)
                return
            }
            try StopSignals.watch { signals in
                job.stopSignals = signals
                try job.broadcast != nil ? runBroadcast(job, signals: signals) : run(job, signals: signals)
            }
        }
    }

    /// `--fleet`: both halves' plans and the campaign's, printed, and fleet-plan.json.
    private func runFleet() throws {
        let plan = try fleetPlan()
        let folder: RunOutput?
        do {
            folder = try output.map { try RunOutput(preparing: $0, results: .plan) }
        } catch {
            reportError("\(error)")
            throw ExitCode.failure
        }
        try withExtendedLifetime(folder) {
            print(plan.text)
            guard let output else { return }
            do {
                try PlanJob.write(plan.document, to: output)
            } catch {
                reportError("\(error)")
                throw ExitCode.failure
            }
            print("plan: \(output)/\(FleetPlanDocument.fileName)")
        }
    }

    private func run(_ job: PlanJob, signals: StopSignals?) throws {
        let plan: CapacityPlan
        do {
            plan = try job.run()
        } catch let error as JobError {
            reportError("\(error)")
            throw ExitCode(signals?.received.map { RunStatus($0).rawValue } ?? ExitCode.failure.rawValue)
        }
        print(plan.text)
        if let reach = job.reach(for: plan) { print(reach.text) }
        if let wave = job.wave(for: plan) { print(wave.text) }
        if let output { print("plan: \(output)/plan.json") }
        try rehearse(job, job.document(plan, verification: nil), signals: signals) {
            if let rehearsal = job.waveRehearsal { return try job.rehearseWave(plan, rehearsal) }
            return try job.rehearse(plan)
        }
    }

    /// `--broadcast`: the plan, and with `--verify` its rehearsal (`BroadcastVerification`).
    private func runBroadcast(_ job: PlanJob, signals: StopSignals?) throws {
        let plan: BroadcastPlan
        do {
            plan = try job.runBroadcast()
        } catch let error as JobError {
            reportError("\(error)")
            throw ExitCode(signals?.received.map { RunStatus($0).rawValue } ?? ExitCode.failure.rawValue)
        }
        print(plan.text)
        if let output { print("plan: \(output)/plan.json") }
        try rehearse(job, job.document(plan, verification: nil), signals: signals) { try job.rehearseBroadcast(plan) }
    }

    /// With `--verify`, the plan's rehearsal printed and recorded in plan.json (`verification`);
    /// exit 1 when a figure is off its prediction, 128 + n when signal n stopped it.
    private func rehearse(
        _ job: PlanJob,
        _ document: PlanDocument,
        signals: StopSignals?,
        _ rehearsal: () throws -> any RehearsalVerdict
    ) throws {
        guard verify else { return }
        let verdict: any RehearsalVerdict
        do {
            verdict = try rehearsal()
        } catch {
            try? job.record(document, verdict: nil, stoppedBy: signals?.received, error: error)
            reportError("the rehearsal could not run: \(error)")
            throw ExitCode(signals?.received.map { RunStatus($0).rawValue } ?? ExitCode.failure.rawValue)
        }
        do {
            try job.record(document, verdict: verdict, stoppedBy: signals?.received)
        } catch {
            reportError("\(error)")
            throw ExitCode.failure
        }
        if let signal = signals?.received {
            printError("the rehearsal was interrupted by \(signal.name): no verdict (its folder holds what it sent)")
            throw ExitCode(RunStatus(signal).rawValue)
        }
        print("")
        print(verdict.text)
        if !verdict.passed { throw ExitCode.failure }
    }
}
