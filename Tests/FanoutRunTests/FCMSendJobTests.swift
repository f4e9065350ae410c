import FanoutClient
import FanoutEndpoint
import FanoutFCMAuth
import FanoutFCMSink
import FanoutInstrument
import FanoutPush
import FanoutRun
import FanoutSink
import FanoutTestSupport
import FanoutTokens
import FanoutWire
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL
import Testing

/// `SendJob` with `fcm` against the FCM sink in this process: every outcome the sender counts is
/// one the sink counted, by FCM's code; the quota's Retry-After is waited out (a sender that
/// came back sooner would spend its tries on 429s); a refused bearer is renewed and the sends go
/// on; a fixed bearer refused ends the run as a refusal of its credentials.
///
/// The limit bounds a hang, it times nothing (as FCMBearerTokensTests' says: the cooperative
/// pool can be held for minutes by the suite's other tests on a busy machine).
@Suite(.serialized, .timeLimit(.minutes(10))) struct FCMSendJobTests {
    /// A started FCM sink for project `fanout-test` with a service account, over TLS when
    /// `tls`, its credentials file in `folder`.
    final class Sink {
        let sink: FCMSink
        let port: Int
        let certificate: String?
        let credentials: String
        private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)

        init(
            in folder: String,
            tls: Bool,
            wire: SinkWire? = nil,
            instrument: ProviderInstrument? = nil,
            _ configure: (inout FCMSinkConfiguration) -> Void = { _ in }
        ) throws {
            var configuration = FCMSinkConfiguration()
            configuration.project = "fanout-test"
            configure(&configuration)
            let service = FCMService(
                configuration: configuration,
                account: try FCMServiceAccount.generated(project: "fanout-test"),
                instrument: instrument
            )
            var context: NIOSSLContext?
            if tls {
                let files = try SinkCertificates.writeSelfSigned(into: folder, hosts: ["127.0.0.1"])
                context = try FCMSink.tlsContext(certificateFile: files.certificate, keyFile: files.key)
                certificate = files.certificate
            } else {
                certificate = nil
            }
            sink = try FCMSink(host: "127.0.0.1", port: 0, group: group, tls: context, wire: wire, service: service)
            port = sink.localAddress.port!
            let tokenURI = "\(tls ? "https" : "http")://127.0.0.1:\(port)/token"
            service.tokenURI = tokenURI
            credentials = folder + "/service-account.json"
            try service.account!.json(tokenURI: tokenURI).write(toFile: credentials, atomically: true, encoding: .utf8)
        }

        func stop() {
            sink.drain(grace: .seconds(1))
            try? group.syncShutdownGracefully()
        }

        var statistics: FCMSinkStatistics { sink.service.statistics }
    }

    static func folder() throws -> String {
        let folder = NSTemporaryDirectory() + "fanout-fcm-send-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    /// A job sending `count` generated tokens' copies of fixtures/fcm-poll.json to `sink`.
    static func job(to sink: Sink, count: UInt64, credentials: SendJob.FCM.Credentials? = nil) -> SendJob {
        var job = SendJob(
            endpoint: SendJob.Endpoint(tls: sink.certificate != nil, host: "127.0.0.1", port: sink.port),
            template: "fixtures/fcm-poll.json",
            headers: try! NotificationHeaders(topic: "fcm"),
            tokens: TokenSet(.generated(TokenGenerator(count: count, seed: 9)), reader: .init(format: .fcm))
        )
        // A service account names its project; a bearer does not. The token endpoint is trusted
        // with the endpoint's certificate (`--ca-file`).
        job.fcm = SendJob.FCM(
            project: credentials == nil ? nil : "fanout-test",
            credentials: credentials ?? .serviceAccount(file: sink.credentials, trust: nil)
        )
        job.tls.trustedCertificates = sink.certificate
        job.shape.connections = 2
        job.shape.streamsPerConnection = 100
        job.threads = 1
        return job
    }

    @Test(arguments: [false, true])
    func everyOutcomeIsTheSinksByCodeAndTheQuotasWaitIsKept(tls: Bool) throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let sink = try Sink(in: folder, tls: tls) {
            $0.unregisteredShare = 0.1
            $0.otherSenderShare = 0.05
            $0.quota = .init(messages: 2500, window: 2_000_000_000)
        }
        defer { sink.stop() }
        var job = Self.job(to: sink, count: 4000)
        job.goneTokens = folder + "/gone.txt"
        let configuration = try job.loadConfiguration()
        defer {
            configuration.goneTokens?.close()
            configuration.endpoint.authorizations?.stop()
        }
        let snapshot = try job.run(configuration).report.snapshot
        let statistics = sink.statistics
        #expect(snapshot.sent == 4000)
        #expect(snapshot.failed.isEmpty, "\(snapshot.failed)")
        #expect(snapshot.accepted == statistics[.delivered])
        #expect(snapshot.rejected[.fcm(.unregistered)] == statistics[.unregistered])
        #expect(snapshot.rejected[.fcm(.senderIDMismatch)] == statistics[.senderIDMismatch])
        #expect(snapshot.rejected.keys.sorted() == [.fcm(.unregistered), .fcm(.senderIDMismatch)])
        // 4,000 sends against 2,500 a window: the quota ran out once. Its first 429 held every
        // connection's sends until the window's Retry-After, so only what was in flight then
        // (2 connections × 100 streams) was answered 429, each one retry after the wait, none
        // spent to the last try. Without the hold, every send until the window refilled was.
        #expect(statistics[.quotaExceeded] > 0 && statistics[.quotaExceeded] <= 200)
        #expect(snapshot.retries == statistics[.quotaExceeded])
        #expect(snapshot.requests == statistics.requests(over: .http2))
        #expect(statistics[.unregistered] > 250 && statistics[.senderIDMismatch] > 100)
        let gone = try String(contentsOfFile: folder + "/gone.txt", encoding: .utf8).split(separator: "\n")
        #expect(gone.count == statistics[.unregistered])
        #expect(statistics[.tokenIssued] == 1)
    }

    /// The sink failing 3% of sends (500 INTERNAL) and turning away 5% (503 UNAVAILABLE,
    /// Retry-After 1 s): every token delivered in the end, each fault one retry, and the sink's
    /// card finds no fault of the sender's — none retried before its Retry-After (or the second
    /// a 500 asks), none delivered twice, one access token.
    @Test func theSinksFaultsAreRetriedAfterTheirWaitAndTheCardPassesTheSender() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let sink = try Sink(in: folder, tls: false, instrument: ProviderInstrument()) {
            $0.quota = nil
            $0.internalShare = 0.03
            $0.unavailableShare = 0.05
        }
        defer { sink.stop() }
        var job = Self.job(to: sink, count: 2000)
        // Six tries: a token failed by every one of them (0.08^6) is not to be expected.
        job.shape.maxAttempts = 6
        let configuration = try job.loadConfiguration()
        defer { configuration.endpoint.authorizations?.stop() }
        let snapshot = try job.run(configuration).report.snapshot
        sink.stop()
        let statistics = sink.statistics
        #expect(snapshot.accepted == 2000, "\(snapshot.failed) \(snapshot.rejected)")
        #expect(statistics[.delivered] == 2000)
        #expect(statistics[.internalError] > 0 && statistics[.unavailable] > 0)
        #expect(snapshot.retries == statistics[.internalError] + statistics[.unavailable])
        let checks = try #require(sink.sink.service.cardChecks)
        let counts = Dictionary(uniqueKeysWithValues: checks.map { ($0.rule, $0.count) })
        #expect(counts.values.allSatisfy { $0 == 0 }, "\(counts)")
    }

    /// Behind a wire of 40 ms, one connection of FCM's 100 streams carries at most 100 ÷ 40 ms =
    /// 2,500 sends a second, and no send is answered sooner than the round trip: physics bounds
    /// both (the TLS handshake and the token's fetch cross the wire too). Nothing is asserted
    /// from the other side: a machine loaded by other work only slows the run (within the whole
    /// suite one TLS run measured 1,128/s, 45% of the streams' rate).
    @Test(arguments: [false, true])
    func aWireInFrontHoldsEachAnswerItsRoundTrip(tls: Bool) throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let roundTrip = 0.040
        let sink = try Sink(in: folder, tls: tls, wire: SinkWire(roundTrip: .fixed(.milliseconds(40)))) {
            $0.quota = nil
        }
        defer { sink.stop() }
        var job = Self.job(to: sink, count: 2000)
        job.shape.connections = 1
        let configuration = try job.loadConfiguration()
        defer { configuration.endpoint.authorizations?.stop() }
        let report = try job.run(configuration).report
        #expect(report.snapshot.accepted == 2000, "\(report.snapshot.failed)")
        let fastest = Double(report.snapshot.latency.min) / 1e6
        #expect(fastest >= roundTrip, "the fastest answer took \(fastest) s")
        let rate = 2000 / report.elapsed.seconds
        let streams = 100 / roundTrip
        #expect(rate <= streams, "\(rate)/s against the streams' \(streams)/s")
    }

    /// Every token another sender's: 403 SENDER_ID_MISMATCH for each, the tokens' fate, not a
    /// refusal of the run's credentials (which would hold the run invalid as measuring nothing).
    @Test func anotherSendersTokensAreNotRefusedCredentials() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let sink = try Sink(in: folder, tls: false) { $0.otherSenderShare = 1 }
        defer { sink.stop() }
        let job = Self.job(to: sink, count: 300)
        let configuration = try job.loadConfiguration()
        defer { configuration.endpoint.authorizations?.stop() }
        let summary = try job.run(configuration)
        #expect(summary.report.snapshot.rejected == [.fcm(.senderIDMismatch): 300])
        #expect(summary.credentialsRefused == nil)
        #expect(summary.report.unreachable == nil)
    }

    /// A source whose first bearer the sink never issued: FCM answers 401, the source is asked
    /// once for another (a token the sink issued), and every notification is delivered.
    final class RefusedFirst: AuthorizationSource {
        let replacement: String
        /// Refusals reported, and whether the replacement is out.
        let state = NIOLockedValueBox((refusals: 0, renewed: false))

        init(replacement: String) { self.replacement = replacement }

        func authorization() -> (value: String, generation: Int)? {
            state.withLockedValue { $0.renewed } ? ("Bearer " + replacement, 2) : ("Bearer ya29.never-issued", 1)
        }

        func refused(generation: Int) {
            state.withLockedValue {
                $0.refusals += 1
                if generation == 1 { $0.renewed = true }
            }
        }

        var renews: Bool { true }
    }

    @Test func aRefusedBearerIsRenewedAndTheSendsGoOn() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let sink = try Sink(in: folder, tls: false)
        defer { sink.stop() }
        let issued = sink.sink.service.tokens.issue(
            lifetime: 600_000_000_000,
            now: NIODeadline.now().uptimeNanoseconds
        )
        let source = RefusedFirst(replacement: issued)
        let job = Self.job(to: sink, count: 1000, credentials: .bearer("unused"))
        var configuration = try job.loadConfiguration()
        configuration.endpoint.fcm?.authorizations = source
        let snapshot = try job.run(configuration).report.snapshot
        #expect(snapshot.accepted == 1000, "\(snapshot.failed)")
        #expect(sink.statistics[.delivered] == 1000)
        // Each connection reports its refusal once; every 401 was one try, tried again.
        #expect(sink.statistics[.unauthenticated] > 0)
        #expect(snapshot.retries == sink.statistics[.unauthenticated])
        #expect((1...2).contains(source.state.withLockedValue { $0.refusals }))
    }

    /// A fixed bearer the sink refuses: the run gives up as a refusal of its credentials.
    @Test func aFixedBearerRefusedIsTheEndpointsRefusal() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let sink = try Sink(in: folder, tls: false)
        defer { sink.stop() }
        let job = Self.job(to: sink, count: 500, credentials: .bearer("ya29.not-issued"))
        let report = try job.run(try job.loadConfiguration()).report
        guard let failure = report.unreachable else {
            Issue.record("the run did not give up on the refusal: \(String(describing: report.gaveUp))")
            return
        }
        #expect(failure.cause == .forbidden && failure.isBearerRefused)
        #expect(report.snapshot.accepted == 0 && sink.statistics[.delivered] == 0)
    }

    /// A template FCM would refuse for every device stops before any send, in FCM's words.
    @Test func aTemplateFCMRefusesStopsTheJob() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let sink = try Sink(in: folder, tls: false)
        defer { sink.stop() }
        var job = Self.job(to: sink, count: 10, credentials: .bearer("x"))
        job.inlineTemplate = #"{"message": {"data": {"count": 3}}}"#
        let error = #expect(throws: JobError.self) { _ = try job.loadConfiguration() }
        #expect(error?.kind == .input)
        #expect(
            error?.description
                == #"the template: FCM would refuse every send of it: 400 INVALID_ARGUMENT: Invalid value at 'message.data[0].value' (TYPE_STRING), 3"#
        )
        #expect(sink.statistics.requests(over: .http2) == 0)
    }
}
