import FanoutAPNs
import FanoutClient
import FanoutPush

/// Whether a sender and the sink it sent to agree: every answer the sink gave was received
/// (200s, and errors by reason), the order-independent digests of accepted notifications are
/// equal, and the sink saw no request the sender did not send.
public struct Reconciliation: Sendable, Hashable {
    public var sinkRequests: Int
    public var sinkAccepted: Int
    public var sinkRejected: [PushReason: Int]
    public var sinkDigest: NotificationDigest
    /// What disagrees, one line each; empty when they agree.
    public var differences: [String]

    public var agrees: Bool { differences.isEmpty }

    public init(
        client: LoadSnapshot,
        sinkRequests: Int,
        sinkAccepted: Int,
        sinkRejected: [PushReason: Int],
        sinkDigest: NotificationDigest
    ) {
        self.sinkRequests = sinkRequests
        self.sinkAccepted = sinkAccepted
        self.sinkRejected = sinkRejected
        self.sinkDigest = sinkDigest
        var differences: [String] = []
        if client.answeredOK != sinkAccepted {
            differences.append("200 answers: sink sent \(sinkAccepted), sender received \(client.answeredOK)")
        }
        for reason in Set(sinkRejected.keys).union(client.answers.keys).sorted(by: { $0.rawValue < $1.rawValue }) {
            let sink = sinkRejected[reason] ?? 0
            let sender = client.answers[reason] ?? 0
            if sink != sender { differences.append("\(reason.rawValue): sink sent \(sink), sender received \(sender)") }
        }
        if client.digest != sinkDigest {
            differences.append("digest of accepted notifications: sink \(sinkDigest), sender \(client.digest)")
        }
        if sinkRequests > client.requests {
            differences.append("requests: sink saw \(sinkRequests), sender sent \(client.requests)")
        }
        self.differences = differences
    }
}
