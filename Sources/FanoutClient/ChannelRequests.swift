import FanoutAPNs
import FanoutHTTP2
import NIOCore

/// One channel-management request (docs/apns.md, "Broadcast channels") and what came back.
public enum ChannelRequest: Sendable, Hashable {
    /// `POST /1/apps/<bundle id>/channels` with the storage policy: 201 and `apns-channel-id`.
    case create(storagePolicy: Int)
    /// `DELETE /1/apps/<bundle id>/channels` with `apns-channel-id`: 204.
    case delete(channel: String)

    /// The request's answer: its status, APNs' reason when it refused, and the channel id a
    /// creation returned; status 0 when no answer came (the connection ended, the stream reset).
    public struct Answer: Sendable, Hashable {
        public var status: Int
        public var reason: String?
        public var channel: String?

        public init(status: Int, reason: String? = nil, channel: String? = nil) {
            self.status = status
            self.reason = reason
            self.channel = channel
        }

        /// 201 for a creation, 204 for a deletion (200 taken too).
        public var succeeded: Bool { (200...204).contains(status) }
    }
}

/// A connection to the channel-management endpoint that sends a list of `ChannelRequest`s, at
/// most `inFlight` at a time, and hands their answers over when the last one is in (or the
/// connection ended): the few requests before and after a broadcast run, not a load.
///
/// ```
///   :method POST | DELETE   :path /1/apps/<bundle id>/channels   :scheme https   :authority
///   authorization (token auth)   apns-channel-id (delete)
///   body (create)  {"message-storage-policy":1,"push-type":"LiveActivity"}
/// ```
package struct ChannelRequests: HTTP2ConnectionDelegate {
    private let requests: [ChannelRequest]
    private let common: [(name: String, value: String)]
    private let authorization: String?
    private var answers: [ChannelRequest.Answer]
    private var next = 0
    private var answered = 0
    private var reported = false
    private let inFlight: Int
    private let done: @Sendable ([ChannelRequest.Answer], String?) -> Void

    package init(
        requests: [ChannelRequest],
        app: String,
        authority: String,
        scheme: String = "https",
        authorization: String?,
        inFlight: Int = 100,
        done: @escaping @Sendable ([ChannelRequest.Answer], String?) -> Void
    ) {
        self.requests = requests
        common = [(":scheme", scheme), (":authority", authority), (":path", "/1/apps/\(app)/channels")]
        self.authorization = authorization
        answers = Array(repeating: ChannelRequest.Answer(status: 0), count: requests.count)
        self.inFlight = max(1, inFlight)
        self.done = done
    }

    package mutating func connectionStarted(_ connection: inout HTTP2Writer) {
        turn(&connection)
    }

    package mutating func handle(_ event: HTTP2Event, connection: inout HTTP2Writer) {
        switch event {
        case .message(let response):
            let index = Int(response.tag)
            var answer = ChannelRequest.Answer(status: response.status)
            if !answer.succeeded { answer.reason = APNsErrorBody.reason(in: response.body)?.rawValue }
            answer.channel = response.headers.first(APNsRequest.Header.channelID).map {
                String(decoding: $0, as: UTF8.self)
            }
            answers[index] = answer
            answered += 1
        case .streamReset(_, let tag, _, _):
            answers[Int(tag)] = ChannelRequest.Answer(status: 0, reason: "StreamReset")
            answered += 1
        case .remoteSettingsChanged, .goAway, .pingAcknowledged, .connectionError:
            break
        }
        turn(&connection)
    }

    package mutating func connectionEnded(_ connection: borrowing HTTP2Connection, error: (any Error)?) {
        guard answered < requests.count else { return report(failure: nil) }
        report(
            failure: error.map { "\($0)" }
                ?? "the connection ended with \(requests.count - answered) requests unanswered"
        )
    }

    private mutating func report(failure: String?) {
        guard !reported else { return }
        reported = true
        done(answers, failure)
    }

    private mutating func turn(_ connection: inout HTTP2Writer) {
        guard connection.hasPeerSettings else { return }
        while next < requests.count && next - answered < inFlight && connection.availableStreams > 0 {
            var fields = common
            var body: ByteBuffer?
            switch requests[next] {
            case .create(let policy):
                fields.insert((":method", "POST"), at: 0)
                body = ByteBuffer(string: #"{"message-storage-policy":\#(policy),"push-type":"LiveActivity"}"#)
            case .delete(let channel):
                fields.insert((":method", "DELETE"), at: 0)
                fields.append(("\(APNsRequest.Header.channelID)", channel))
            }
            if let authorization { fields.append(("\(APNsRequest.Header.authorization)", authorization)) }
            do {
                try connection.sendRequest(
                    HTTP2Fields(fields, indexing: .withoutIndexing),
                    body: body,
                    tag: UInt64(next)
                )
            } catch {
                break
            }
            next += 1
        }
        if answered == requests.count {
            connection.goAway()
            report(failure: nil)
        }
    }
}
