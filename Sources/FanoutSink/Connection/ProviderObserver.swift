import FanoutAPNs
import FanoutHTTP2
import FanoutInstrument
import FanoutMeasure
import FanoutPush
import FanoutScenarioTerms
import Foundation
import NIOCore

/// The sink as the provider's instrument, on one connection: it is told what the connection
/// sees (requests read, their verdicts, answers written, PING acknowledgements, the HTTP/2
/// layer's refusals, the end) and puts on the conformance card (`ProviderCard`) and the
/// connection's record what the provider did. It changes nothing the connection answers.
///
/// Whether the provider read its answers: the sink sends a PING behind its answers (one
/// outstanding at a time, its opaque data the count written before it), and the provider's
/// acknowledgement says it read them (frames are read in order).
///
/// ```
///   sink:      answer 41 · answer 42 · PING(42) ··········· answer 43 · PING(43) ─╳ reset
///   provider:           read ········· PING ACK(42) ─►                    (unread)
///   → answersRead 42; the reset leaves answer 43 "answered, maybe unread"
/// ```
struct ProviderObserver {
    let instrument: ProviderInstrument
    private let record: SinkConnectionRecord
    /// Streams in flight over time, and the HTTP/2 layer's refusals already on the card.
    private(set) var streamUse = StreamUse()
    private var refusalsCarded = 0
    private var afterGoAwayCarded = 0
    private var answersWritten = 0
    private var answersRead = 0
    private var readMarkerOutstanding = false
    /// When the last request was read (for the card's churn: what opened after it replaced
    /// this connection).
    private var lastRequestAt: UInt64 = 0

    init(_ instrument: ProviderInstrument, record: SinkConnectionRecord, openedAt: UInt64) {
        self.instrument = instrument
        self.record = record
        instrument.card.connectionOpened(record.id, now: openedAt)
    }

    /// A request was read with `openStreams` streams open.
    mutating func requestRead(openStreams: Int, now: UInt64) {
        streamUse.note(openStreams, at: now)
        lastRequestAt = now
    }

    /// The card's checks of one request whose token was read: a retry it should not be, streams
    /// past the initial limit (`limited`: the connection still holds a token connection to
    /// Apple's one stream), its apns-id, its payload's size. Returns the notification's digest
    /// hash when it worked it out for the apns-id (0 otherwise), so that it is not worked out
    /// twice.
    func tokenRead(
        _ request: HTTP2Message,
        token: UnsafeRawBufferPointer,
        hash: UInt64,
        fields: APNsRequestCheck.Fields,
        bytes: UnsafeRawBufferPointer,
        echoedID: Bool,
        limited: Bool,
        _ streams: SinkConnection.StreamsSeen,
        now: UInt64
    ) -> UInt64 {
        let card = instrument.card
        card.arrived(token: token, hash: hash, connection: record.id, now: now)
        // Apple's one stream until a valid provider token applies to token connections, and
        // only once the provider knew it: it had acknowledged the SETTINGS that said 1 (before
        // that it may open streams against RFC 9113's default of no limit: §5.1.2, §6.5.3).
        if limited, let acknowledged = streams.acknowledgedLimit, streams.open > Int(acknowledged) {
            card.beforeFirstAcceptance(
                open: streams.open,
                limit: Int(acknowledged),
                token: token,
                connection: record.id,
                now: now
            )
        }
        var digestHash: UInt64 = 0
        if echoedID {
            let id = APNsRequestCheck.view(fields.apnsID, bytes)
            digestHash = NotificationDigest.hash(token: token, payload: request.body)
            card.identified(
                idHash: TokenList.hash(id),
                digestHash: digestHash,
                token: token,
                connection: record.id,
                now: now
            )
        }
        // Every limit is at least the standard one: a body well under it needs no push type.
        if ProviderRule.isNearLimit(request.bodyLength, limit: APNsPayloadLimit.standard) {
            let pushType =
                fields.pushType.isPresent ? APNsPushType(bytes: APNsRequestCheck.view(fields.pushType, bytes)) : nil
            card.payload(
                length: request.bodyLength,
                limit: pushType?.payloadSizeLimit ?? APNsPayloadLimit.standard,
                token: token,
                connection: record.id,
                now: now
            )
        }
        return digestHash
    }

    /// The verdict's provider-token news: a token refused as expired or refreshed too often, or
    /// a newly issued one accepted (`issuedAt`, its `iat`).
    func providerToken(_ verdict: RequestVerdict, issuedAt: Int64, now: UInt64) {
        if let reason = verdict.rejection, reason == .expiredProviderToken || reason == .tooManyProviderTokenUpdates {
            instrument.card.providerToken(refused: reason, connection: record.id, now: now)
        } else if verdict.newProviderToken {
            instrument.card.providerToken(issuedAt: issuedAt, connection: record.id, now: now)
        }
    }

    /// A request received at `received` was decided: the sink's delay in reading it, and the
    /// token's outcome for the card and the expected-token list (`tokenHash` 0: none read).
    /// True when its acceptance completed `--expect-tokens`' set.
    func decided(
        received: UInt64,
        rejection: APNsReason?,
        accepted: Bool,
        tokenHash: UInt64,
        recorder: SinkLoopRecorder,
        now: UInt64
    ) -> Bool {
        let mark = instrument.mark(forRequestAt: received)
        recorder.arrived(after: received - min(received, mark), accepted: accepted)
        guard tokenHash != 0 else { return false }
        if let rejection { instrument.card.rejected(hash: tokenHash, rejection, now: now) }
        return accepted && instrument.expected?.accepted(hash: tokenHash) == true
    }

    /// A channel or broadcast request was decided (`answer`): the card's broadcast rules judge
    /// it (`BroadcastFindings`). Channel requests are rare: reading the id and the payload's
    /// timestamp here costs notifications nothing.
    func broadcastDecided(
        _ route: BroadcastRoute,
        _ fields: APNsRequestCheck.Fields,
        _ extra: BroadcastFields,
        _ answer: SinkConnection.BroadcastAnswer,
        body: UnsafeRawBufferPointer,
        in bytes: UnsafeRawBufferPointer,
        now: UInt64
    ) {
        guard let operation = route.operation else { return }
        var request = BroadcastFindings.Request(
            operation: operation,
            status: answer.status,
            rejection: answer.rejection,
            channel: answer.channelID,
            idHash: 0,
            priority: 10,
            timestamp: nil
        )
        if operation != .create, extra.channelID.isPresent {
            let text = APNsRequestCheck.view(extra.channelID, bytes)
            request.idHash = BroadcastFindings.hash(text)
            if case .id(let id) = ChannelID.parse(text) { request.channel = id }
        }
        if fields.priority.isPresent,
            let priority = HTTP2HeaderList.decimal(APNsRequestCheck.view(fields.priority, bytes))
        {
            request.priority = Int(priority)
        }
        if operation == .broadcast && answer.status == 200 {
            request.timestamp = LiveActivityPayload.timestamp(in: body)
        }
        let bundle = APNsRequestCheck.view(route.bundle, bytes)
        instrument.broadcasts.decided(request, bundle: bundle, connection: record.id, now: now)
    }

    /// An answer went into the connection's bytes.
    mutating func answerWritten() {
        answersWritten &+= 1
    }

    /// The provider acknowledged a PING: when it is the read marker, it read every answer
    /// written before it.
    mutating func pingAcknowledged(opaque: UInt64) {
        guard readMarkerOutstanding, opaque <= UInt64(answersWritten) else { return }
        answersRead = max(answersRead, Int(opaque))
        readMarkerOutstanding = false
    }

    /// After a turn that read requests or wrote answers: the streams now in flight, and a read
    /// marker behind answers not yet known read.
    mutating func turnEnded(now: UInt64, _ connection: inout HTTP2Writer) {
        streamUse.note(connection.openStreams, at: now)
        if !readMarkerOutstanding && answersWritten > answersRead && connection.sentGoAway == nil {
            connection.ping(opaque: UInt64(answersWritten))
            readMarkerOutstanding = true
        }
    }

    /// Puts the HTTP/2 layer's refusals since the last look on the card.
    mutating func connectionFaults(_ connection: borrowing HTTP2Connection, now: UInt64) {
        if connection.refusedStreams > refusalsCarded {
            instrument.card.refused(
                connection.refusedStreams - refusalsCarded,
                limit: connection.streamLimit,
                connection: record.id,
                now: now
            )
            refusalsCarded = connection.refusedStreams
        }
        if connection.streamsAfterGoAway > afterGoAwayCarded {
            instrument.card.afterGoAway(
                connection.streamsAfterGoAway - afterGoAwayCarded,
                connection: record.id,
                now: now
            )
            afterGoAwayCarded = connection.streamsAfterGoAway
        }
    }

    /// Copies the stream use and refusals to the connection's record (with each flush).
    func noteOnRecord() {
        record.note(streams: streamUse, refused: refusalsCarded)
    }

    /// The connection ended (`error`: how, if it broke). `byProvider`: closed by the provider,
    /// neither the sink's GOAWAY (a fault, the drain, idleness) nor its abort
    /// (`close-after-requests`, the connection limit) came first.
    mutating func ended(
        _ connection: borrowing HTTP2Connection,
        error: (any Error)?,
        byProvider: Bool,
        lifetime: UInt64,
        requests: Int,
        now: UInt64
    ) {
        connectionFaults(connection, now: now)
        record.closed(at: now, byProvider: byProvider)
        // A connection that broke (reset, timed out) with answers the provider never showed it
        // read: Linux answers a close with unread bytes in the receive buffer with a reset, so
        // a provider that died holding answers shows here. A clean close (FIN) read what had
        // arrived; answers still on the way then are not counted. Nor are they when the sink
        // closed first (its GOAWAY or abort: `--expect` reached, a drain): the provider's read
        // markers were still on their way, and the reset is the sink's own close meeting them
        // (newcomer pass 6: a send that read all 1,000,000 answers left 996 "maybe unread").
        if byProvider, answersWritten > answersRead, let error, Self.isBroken(error) {
            record.maybeUnread(answersWritten - answersRead)
        }
        if byProvider {
            instrument.card.providerClosed(
                record.id,
                lifetime: lifetime,
                requests: requests,
                lastRequest: lastRequestAt,
                now: now
            )
        }
    }
}

extension ProviderObserver {
    /// Whether a connection ended broken rather than closed: reset by the peer (ECONNRESET, a
    /// close with unread bytes), a write to a closed socket (EPIPE), or timed out.
    static func isBroken(_ error: any Error) -> Bool {
        guard let error = error as? IOError else { return false }
        switch error.errnoCode {
        case ECONNRESET, EPIPE, ETIMEDOUT: return true
        default: return false
        }
    }
}
