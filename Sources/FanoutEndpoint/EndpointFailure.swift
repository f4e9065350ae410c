import FanoutAPNs
import FanoutHTTP2
import FanoutPush
import NIOCore
import NIOPosix
import NIOSSL

import struct Foundation.Date

/// Why a connection to the endpoint did not get as far as an answer, named the way its fix is:
/// each cause says whether trying again can help and what the user should do.
///
/// ```
///   TCP ──► TLS ──► ALPN ──► HTTP/2 preface + SETTINGS ──► first answer
///    │       │       │         │                             │
///    │       │       │         ├─ "HTTP/1.1 …" back: notHTTP2 ├─ GOAWAY first: goAwayBeforeAnswer
///    │       │       │         ├─ 0 streams allowed: noStreamsAllowed
///    │       │       │         └─ TLS bytes back:   notHTTP2 └─ 403 first:   forbidden
///    │       │       └─ not h2: alpnNotH2
///    │       └─ certificateNotTrusted, certificateExpired, certificateNameMismatch,
///    │          tlsHandshakeFailed
///    └─ nameNotResolved, connectionRefused, connectTimeout, connectFailed
/// ```
public struct EndpointFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// What stood in the way (FanoutAPNs's `UnreachableCause`, where summary.json's failed
    /// counts name it).
    public typealias Cause = UnreachableCause

    public var cause: Cause
    /// What exactly happened: the errno, the TLS library's words, the status line, the reason.
    public var detail: String

    public init(_ cause: Cause, _ detail: String) {
        self.cause = cause
        self.detail = detail
    }

    /// Whether another attempt may succeed: a server starting up refuses and times out; a
    /// certificate, a protocol or a missing name does not change in the next second.
    public var isHealable: Bool {
        switch cause {
        case .connectionRefused, .connectTimeout, .connectFailed, .closedBeforeSettings, .goAwayBeforeAnswer,
            .noStreamsAllowed:
            true
        default: false
        }
    }

    /// What the user should do about it.
    public var advice: String {
        switch cause {
        case .nameNotResolved:
            "check the host name in --endpoint, and that this machine can resolve names (DNS)"
        case .connectionRefused:
            "nothing is listening on that port: check --endpoint's port and that the server is running"
        case .connectTimeout:
            "nothing answered the TCP connect: check the address and any firewall (--connect-timeout sets how long to try)"
        case .connectFailed:
            "check the address and this machine's network"
        case .certificateNotTrusted:
            "give the CA that issued the server's certificate with --ca-file (or, for a loopback test only, --insecure)"
        case .certificateExpired:
            "the server's certificate must be renewed (or this machine's clock is wrong)"
        case .certificateNameMismatch:
            "use the name the certificate was issued for in --endpoint, or give the server a certificate for this name"
        case .tlsHandshakeFailed:
            "check that the server speaks TLS 1.2 or later with an HTTP/2 cipher, and the client certificate (--cert, --cert-key) if it asks for one"
        case .alpnNotH2:
            "the server (or a proxy before it) must offer HTTP/2 by ALPN h2, as APNs and `fanout sink --tls` do"
        case .notHTTP2:
            "the endpoint must speak HTTP/2: https:// with ALPN h2, or http:// for a server that takes HTTP/2 with prior knowledge (h2c)"
        case .closedBeforeSettings where isSilent:
            "the server accepted the connection and sent no HTTP/2 SETTINGS within --connect-timeout: a TLS server given http:// waits for a ClientHello (https://); else it does not speak HTTP/2 first, or is stalled"
        case .closedBeforeSettings:
            "the server closed the connection before speaking HTTP/2: a TLS server needs https://; a server turning connections away needs a while"
        case .goAwayBeforeAnswer:
            "the server closed every connection before answering: read its reason; an overloaded or draining server may need a while"
        case .noStreamsAllowed:
            "the server allowed no concurrent stream (SETTINGS_MAX_CONCURRENT_STREAMS 0) for --timeout: it takes no requests now (starting, draining or overloaded); --connect-timeout sets how long to try"
        case .forbidden where isBearerRefused:
            "check the FCM credentials: --fcm-credentials (a service account of the project) or --fcm-bearer (an access token, an hour's)"
        case .forbidden:
            "check the credentials: --key-file, --key-id and --team-id (token auth) or --cert (certificate auth), and --topic"
        }
    }

    /// The detail of a connection the server kept open without a word (SETTINGS_TIMEOUT), as
    /// against one it closed: the same cause, told apart in the words.
    static let noSettings = "no HTTP/2 SETTINGS from the server in time"
    private var isSilent: Bool { cause == .closedBeforeSettings && detail == Self.noSettings }
    /// The detail of an FCM 401 without a code at a connection's first answer: a refusal of the
    /// bearer, not of an APNs key or certificate (the same cause, told apart in the words).
    static let bearerRefused = "401: the bearer was refused"
    public var isBearerRefused: Bool { cause == .forbidden && detail == Self.bearerRefused }

    /// `cause: detail`, in words.
    public var description: String { "\(phrase) (\(detail))" }

    /// The cause in a few words.
    public var phrase: String {
        switch cause {
        case .nameNotResolved: "name not resolved"
        case .connectionRefused: "connection refused"
        case .connectTimeout: "connect timed out"
        case .connectFailed: "connect failed"
        case .certificateNotTrusted: "certificate not trusted"
        case .certificateExpired: "certificate expired"
        case .certificateNameMismatch: "certificate name mismatch"
        case .tlsHandshakeFailed: "TLS handshake failed"
        case .alpnNotH2: "ALPN did not choose h2"
        case .notHTTP2: "not HTTP/2"
        case .closedBeforeSettings: isSilent ? "silent before HTTP/2 began" : "closed before HTTP/2 began"
        case .goAwayBeforeAnswer: "GOAWAY before any answer"
        case .noStreamsAllowed: "no stream allowed"
        case .forbidden: isBearerRefused ? "401 on the first request" : "403 on the first request"
        }
    }

    /// The cause of a failed connect or of a connection that ended with `error` before its
    /// first answer; `nil` when the error says nothing about the endpoint (a close we asked for).
    public init?(classifying error: any Error) {
        switch error {
        case let error as NIOConnectionError:
            if error.connectionErrors.isEmpty, let dns = error.dnsAError ?? error.dnsAAAAError {
                self.init(classifying: dns)
            } else if let first = error.connectionErrors.first {
                self.init(classifying: first.error)
            } else {
                self.init(.connectFailed, "\(error)")
            }
        case let error as SocketAddressError.UnknownHost:
            self.init(.nameNotResolved, "\(error.host): \(error.errorDescription)")
        case let error as ChannelError:
            guard case .connectTimeout(let amount) = error else { return nil }
            self.init(.connectTimeout, "no answer in \(Double(amount.nanoseconds) / 1e9) s")
        case let error as IOError:
            switch error.errnoCode {
            case ECONNREFUSED: self.init(.connectionRefused, "ECONNREFUSED")
            case ETIMEDOUT: self.init(.connectTimeout, "ETIMEDOUT")
            default: self.init(.connectFailed, "\(error)")
            }
        case let error as NIOSSLExtraError where error == .failedToValidateHostname:
            self.init(.certificateNameMismatch, "the certificate does not name the host asked for")
        case let error as NIOSSLError:
            self.init(tls: error)
        case let error as HTTP2ChannelError:
            switch error {
            case .alpnNotNegotiated: self.init(.alpnNotH2, error.description)
            case .answeredInHTTP1, .answeredInTLS, .notHTTP2Preface: self.init(.notHTTP2, error.description)
            }
        case let error as HTTP2FrameError where error.stream == nil:
            if error.code == .settingsTimeout {
                self.init(.closedBeforeSettings, Self.noSettings)
            } else {
                self.init(.notHTTP2, "the server broke HTTP/2: \(error.reason)")
            }
        default:
            return nil
        }
    }

    private init(tls error: NIOSSLError) {
        guard case .handshakeFailed(let failure) = error else {
            if case .uncleanShutdown = error {
                self.init(.tlsHandshakeFailed, "the server closed the connection during the handshake")
            } else {
                self.init(.tlsHandshakeFailed, "\(error)")
            }
            return
        }
        let words = "\(failure)"
        if words.contains("NO_APPLICATION_PROTOCOL") {
            self.init(
                .alpnNotH2,
                "the server offers no protocol the client asked for (h2): it does not speak HTTP/2 over TLS"
            )
        } else if words.contains("CERTIFICATE_VERIFY_FAILED") {
            self.init(.certificateNotTrusted, "the certificate does not chain to a trusted CA")
        } else if words.contains("WRONG_VERSION_NUMBER") || words.contains("UNKNOWN_PROTOCOL") {
            self.init(.tlsHandshakeFailed, "the server did not answer in TLS: an http:// endpoint?")
        } else {
            self.init(.tlsHandshakeFailed, words)
        }
    }

    /// Why a connection that ended got no answer, `nil` when it got one (`answered`): its
    /// GOAWAY before any answer, its error, or a close before the server's SETTINGS.
    public static func ended(
        answered: Bool,
        goAway: EndpointFailure?,
        error: (any Error)?,
        _ connection: borrowing HTTP2Connection
    ) -> EndpointFailure? {
        guard !answered else { return nil }
        if let goAway { return goAway }
        if let error { return EndpointFailure(classifying: error) }
        guard !connection.hasPeerSettings else { return nil }
        return EndpointFailure(.closedBeforeSettings, "the server closed the connection before its SETTINGS")
    }

    /// The peer's GOAWAY before any answer: its code and the reason in its debug data (APNs
    /// puts `{"reason":"…"}` there).
    public static func goAway(code: HTTP2ErrorCode, debugData: UnsafeRawBufferPointer) -> EndpointFailure {
        if code == .enhanceYourCalm, let refusal = refusal(in: debugData) {
            return EndpointFailure(.goAwayBeforeAnswer, refusal)
        }
        let reason = APNsErrorBody.reason(in: debugData).map { ", reason \($0.rawValue)" } ?? ""
        return EndpointFailure(.goAwayBeforeAnswer, "\(code)\(reason)")
    }

    /// A connection refused in words (ENHANCE_YOUR_CALM with text, as `fanout sink` refuses one
    /// past its connection limits: `HTTP2Refusal`), said as such: "the sink refused the
    /// connection: 256 connections from 10.0.0.7, the per-peer limit". `nil` for debug data that
    /// is empty or not text.
    static func refusal(in debugData: UnsafeRawBufferPointer) -> String? {
        guard !debugData.isEmpty, debugData.count <= 512, debugData.allSatisfy({ (0x20..<0x7F).contains($0) }) else {
            return nil
        }
        let text = String(decoding: debugData, as: UTF8.self)
        // `fanout sink`'s refusals start so (its `ConnectionAdmission.prefix`).
        let sink = "fanout sink: "
        if text.hasPrefix(sink) { return "the sink refused the connection: " + text.dropFirst(sink.count) }
        return "the server refused the connection: " + text
    }

    /// A first answer that says the connection's credentials were refused: 403 with a reason
    /// another request on the same credentials would get too (APNs' `ExpiredProviderToken` is
    /// not one: the sender renews its token and tries again; nor is FCM's `SENDER_ID_MISMATCH`,
    /// which is one token's; FCM's 403 without a code is a project the account may not send
    /// to), or, sending to FCM (`fcm`), its 401 without a code: the bearer refused on a
    /// connection's first request. APNs answers no 401: one from a gateway is an answer.
    public static func forbidden(status: Int, reason: PushReason?, fcm: Bool = false) -> EndpointFailure? {
        if fcm && status == 401 && reason == nil { return EndpointFailure(.forbidden, Self.bearerRefused) }
        guard status == 403, reason != .apns(.expiredProviderToken), reason != .fcm(.senderIDMismatch) else {
            return nil
        }
        return EndpointFailure(.forbidden, reason.map { "403 \($0.rawValue)" } ?? "403 without a reason")
    }

    /// A certificate that failed verification, looked at again: expired (or not yet valid)
    /// is said as such; otherwise it is not trusted.
    public func refined(byLeaf leaf: NIOSSLCertificate?, now: Date = Date()) -> EndpointFailure {
        guard cause == .certificateNotTrusted, let leaf else { return self }
        let seconds = Int(now.timeIntervalSince1970)
        if Int(leaf.notValidAfter) < seconds {
            return EndpointFailure(.certificateExpired, "expired \(Self.day(leaf.notValidAfter))")
        }
        if Int(leaf.notValidBefore) > seconds {
            return EndpointFailure(.certificateExpired, "not valid before \(Self.day(leaf.notValidBefore))")
        }
        return self
    }

    /// `time` as YYYY-MM-DD (UTC): days to a civil date (H. Hinnant's algorithm).
    static func day(_ time: time_t) -> String {
        let z = Int(time).floorDivided(by: 86_400) + 719_468
        let era = z.floorDivided(by: 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shifted = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shifted + 2) / 5 + 1
        let month = shifted < 10 ? shifted + 3 : shifted - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(year)-\(two(month))-\(two(day))"
    }
}

extension Int {
    fileprivate func floorDivided(by divisor: Int) -> Int {
        (self >= 0 ? self : self - divisor + 1) / divisor
    }
}
