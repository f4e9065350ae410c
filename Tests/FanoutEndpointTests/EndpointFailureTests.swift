import FanoutAPNs
import FanoutHTTP2
import NIOCore
import NIOPosix
import Testing

@testable import FanoutEndpoint

/// The classification of what keeps a connection from its first answer, error by error.
@Suite struct EndpointFailureTests {
    @Test func socketErrorsAreNamed() {
        #expect(
            EndpointFailure(classifying: IOError(errnoCode: ECONNREFUSED, reason: "connect"))?.cause
                == .connectionRefused
        )
        #expect(
            EndpointFailure(classifying: IOError(errnoCode: ETIMEDOUT, reason: "connect"))?.cause == .connectTimeout
        )
        #expect(
            EndpointFailure(classifying: IOError(errnoCode: ENETUNREACH, reason: "connect"))?.cause == .connectFailed
        )
        #expect(EndpointFailure(classifying: ChannelError.connectTimeout(.seconds(1)))?.cause == .connectTimeout)
        // A close we asked for says nothing of the endpoint.
        #expect(EndpointFailure(classifying: ChannelError.ioOnClosedChannel) == nil)
    }

    /// A GOAWAY ENHANCE_YOUR_CALM with text before any answer is a refusal in words: said as
    /// the sink's when `fanout sink` sent it, as the server's otherwise; APNs' JSON keeps its form.
    @Test func aRefusalInWordsIsSaidAsSuch() {
        func goAway(_ code: HTTP2ErrorCode, _ text: String) -> EndpointFailure {
            Array(text.utf8).withUnsafeBytes { EndpointFailure.goAway(code: code, debugData: $0) }
        }
        let sink = goAway(.enhanceYourCalm, "fanout sink: 256 connections from 10.0.0.7, the per-peer limit")
        #expect(sink.cause == .goAwayBeforeAnswer)
        #expect(sink.detail == "the sink refused the connection: 256 connections from 10.0.0.7, the per-peer limit")
        #expect(sink.isHealable)
        #expect(goAway(.enhanceYourCalm, "too many").detail == "the server refused the connection: too many")
        #expect(goAway(.noError, #"{"reason":"Shutdown"}"#).detail == "NO_ERROR, reason Shutdown")
        #expect(goAway(.enhanceYourCalm, "").detail == "ENHANCE_YOUR_CALM")
    }

    @Test func aServerSpeakingAnotherProtocolIsNotHTTP2() {
        func classify(_ bytes: [UInt8]) -> HTTP2ChannelError? {
            HTTP2ChannelError(otherProtocolIn: ByteBuffer(bytes: bytes))
        }
        #expect(
            classify(Array("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n".utf8))
                == .answeredInHTTP1("HTTP/1.1 400 Bad Request")
        )
        #expect(classify([0x15, 0x03, 0x01, 0x00, 0x02, 0x02, 0x46]) == .answeredInTLS)
        #expect(classify(Array("<!DOCTYPE HTML>\n".utf8)) == .notHTTP2Preface(#""<!DOCTYPE HTML>\x0a""#))
        // A server's SETTINGS (empty or not) is HTTP/2; fewer than 4 bytes are not judged.
        #expect(classify([0, 0, 0, 4, 0, 0, 0, 0, 0]) == nil)
        #expect(classify([0, 0, 6, 4, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 100]) == nil)
        #expect(classify([0x3C, 0x21]) == nil)
        for error in [HTTP2ChannelError.answeredInHTTP1("HTTP/1.0 505"), .answeredInTLS, .notHTTP2Preface("x")] {
            #expect(EndpointFailure(classifying: error)?.cause == .notHTTP2)
        }
        #expect(EndpointFailure(classifying: HTTP2ChannelError.alpnNotNegotiated("http/1.1"))?.cause == .alpnNotH2)
    }

    @Test func whatRetryingCanHeal() {
        let healable: Set<EndpointFailure.Cause> = [
            .connectionRefused, .connectTimeout, .connectFailed, .closedBeforeSettings, .goAwayBeforeAnswer,
            .noStreamsAllowed,
        ]
        for cause in EndpointFailure.Cause.allCases {
            let failure = EndpointFailure(cause, "detail")
            #expect(failure.isHealable == healable.contains(cause), "\(cause)")
            #expect(!failure.advice.isEmpty && !failure.phrase.isEmpty)
            // Every cause has a failed reason of the same name in summary.json.
            #expect(FailureCause(cause).rawValue == cause.rawValue)
        }
    }

    @Test func goAwayCarriesAPNsReason() {
        let body = Array(#"{"reason":"BadCertificateEnvironment"}"#.utf8)
        let failure = body.withUnsafeBytes { EndpointFailure.goAway(code: .noError, debugData: $0) }
        #expect(failure == EndpointFailure(.goAwayBeforeAnswer, "NO_ERROR, reason BadCertificateEnvironment"))
    }

    @Test func daysAreCivilDates() {
        #expect(EndpointFailure.day(0) == "1970-01-01")
        #expect(EndpointFailure.day(1_600_000_000) == "2020-09-13")
        #expect(EndpointFailure.day(951_782_400) == "2000-02-29")
        #expect(EndpointFailure.day(-86_400) == "1969-12-31")
    }
}
