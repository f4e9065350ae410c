import ArgumentParser
import FanoutReturn

/// How the return wave is sent (`ReturnWaveSettings`; docs/return-wave.md): `fanout sink`'s and
/// `fanout run`'s, beside the fleet's `--device-open`… and `--return-to`.
struct ReturnWaveOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Connections to the backend at most: requests wait for a free one, and the wait counts in their latency.",
            valueName: "n"
        )
    )
    var returnPool = ReturnWaveSettings().poolSize

    @Option(
        name: .long,
        help: ArgumentHelp(
            "How the wave speaks to the backend: 1.1 (keep-alive, a request at a time a connection) or 2 (HTTP/2: h2c with prior knowledge for http://, ALPN h2 for https://; many streams a connection).",
            valueName: "1.1|2"
        )
    )
    var returnHttp = ReturnWaveSettings().httpVersion

    @Option(
        name: .long,
        help: ArgumentHelp(
            "HTTP/2: the requests a connection carries at once at most (fewer when the backend says so); a new connection opens when every open one is full.",
            valueName: "n"
        )
    )
    var returnStreams = ReturnWaveSettings().streamsPerConnection

    @Option(
        name: .long,
        help: ArgumentHelp(
            "A return request unanswered this long fails: over HTTP/1.1 its connection closes, over HTTP/2 its stream is reset.",
            valueName: "duration"
        )
    )
    var returnTimeout: Duration = ReturnWaveSettings().requestTimeout

    @Option(
        name: .long,
        help: ArgumentHelp(
            "At the end, wait for the wave at most this long (by default until its last event is due and answered: with a delay of hours, hours); what is not due by then is counted not sent.",
            valueName: "duration"
        )
    )
    var returnWait: Duration?

    @Option(
        name: .long,
        help: ArgumentHelp("{campaign} in the return requests.", valueName: "name")
    )
    var returnCampaign = ReturnWaveSettings().campaign

    @Option(
        name: .long,
        help: ArgumentHelp(
            "A kind's request instead of its default: media, open, action or launch, as KIND=METHOD PATH, like 'open=POST /v1/opens/{token}'. Repeatable.",
            valueName: "kind=method path"
        )
    )
    var returnRequest: [String] = []

    @Option(
        name: .long,
        help: ArgumentHelp(
            "A kind's body, as KIND=TEXT with {token}, {apns-id}, {action}, {campaign}, {event}, {n}. Repeatable.",
            valueName: "kind=text"
        )
    )
    var returnBody: [String] = []

    @Option(
        name: .long,
        help: ArgumentHelp(
            "PEM certificates an https:// backend's chain may end in, besides the system's.",
            valueName: "file"
        )
    )
    var returnCa: String?

    func settings() throws -> ReturnWaveSettings {
        var settings = ReturnWaveSettings()
        settings.poolSize = returnPool
        settings.requestTimeout = returnTimeout
        settings.campaign = returnCampaign
        settings.trustedCertificatesFile = returnCa
        settings.httpVersion = returnHttp
        settings.waitLimit = returnWait
        settings.streamsPerConnection = returnStreams
        var bodies: [ReturnRequestKind: String] = [:]
        for text in returnBody {
            let (kind, value) = try Self.split(text, option: "--return-body")
            bodies[kind] = value
        }
        for text in returnRequest {
            let (kind, value) = try Self.split(text, option: "--return-request")
            do {
                settings.templates[kind] = try ReturnRequestTemplate(parsing: value, body: bodies[kind])
            } catch {
                throw ValidationError("--return-request \(text): \(error.description)")
            }
        }
        for (kind, body) in bodies where settings.templates[kind] == nil {
            var template = ReturnRequestTemplate.defaultTemplate(for: kind)
            template.body = body
            settings.templates[kind] = template
        }
        do {
            try settings.validate()
        } catch {
            throw ValidationError(error.description)
        }
        return settings
    }

    private static func split(_ text: String, option: String) throws -> (ReturnRequestKind, String) {
        guard let equals = text.firstIndex(of: "="), let kind = ReturnRequestKind(rawValue: String(text[..<equals]))
        else {
            let kinds = ReturnRequestKind.allCases.map(\.rawValue).joined(separator: ", ")
            throw ValidationError("\(option) is KIND=…, the kind one of \(kinds); got \(text)")
        }
        return (kind, String(text[text.index(after: equals)...]))
    }
}

extension ReturnHTTPVersion: ExpressibleByArgument {
    public init?(argument: String) { self.init(rawValue: argument) }
}
