import FanoutAPNs
import FanoutPush
import NIOConcurrencyHelpers

/// What the card's broadcast rules need to remember of a provider (issue #45), shared by every
/// connection of one sink: the channels it created and has not deleted, each with its highest
/// accepted `aps.timestamp` and its priority-10 count in the current budget window; the channel
/// ids it deleted; the ids a broadcast was answered ChannelNotRegistered for; each app's open
/// channels. It keeps its own state and never asks `ChannelStore`: the store answers, this
/// judges what the provider did with the answers.
///
/// ```
///   create 201 ──► open[id] = {app, created, highest ts, window}   app's open += 1 ─► ≥ 9,000? near-limit
///   create 400 CannotCreateChannelConfig ──────────────────────────────────────────► near-limit
///   delete 204 ──► open[id] removed, deleted += hash(id)
///   broadcast ──► hash(id) in notRegistered? ────────────────────────────────────────► retried
///        400 ChannelNotRegistered ──► notRegistered += hash(id)
///        200 ──► priority 10 past the budget in open[id]'s window? ──────────────────► over budget
///            └─► aps.timestamp < open[id]'s highest? ────────────────────────────────► backwards
///   folder written ──► every id still in open ───────────────────────────────────────► left open
/// ```
///
/// Memory is bounded: at most `channelMemory` open channels (the store holds at most 64 apps ×
/// 10,000), `idMemory` deleted and unregistered ids each; what did not fit is counted in
/// `forgotten`, so the card never claims more than it checked. Channel requests are rare next
/// to notifications: one lock, taken once a channel or broadcast request.
package final class BroadcastFindings: Sendable {
    /// A channel the provider created and has not deleted.
    struct OpenChannel {
        var app: Int
        var createdAt: UInt64
        var connection: Int
        /// The highest `aps.timestamp` of an accepted broadcast; `nil` before one.
        var highestTimestamp: Int64?
        /// The current budget window's start (uptime ns) and its priority-10 broadcasts.
        var windowStart: UInt64 = 0
        var windowCount = 0
    }

    /// One channel or broadcast request as the sink decided it.
    package struct Request {
        package var operation: BroadcastOperation
        /// The answer's status and reason.
        package var status: Int
        package var rejection: APNsReason?
        /// The channel the answer created (create), or the one `apns-channel-id` names when it
        /// parses as one of the sink's ids.
        package var channel: ChannelID?
        /// A hash of `apns-channel-id`'s text as sent (0: absent).
        package var idHash: UInt64
        /// `apns-priority` (10 when absent: APNs's default).
        package var priority: Int
        /// The payload's `aps.timestamp`, when it has a number there.
        package var timestamp: Int64?

        package init(
            operation: BroadcastOperation,
            status: Int,
            rejection: APNsReason? = nil,
            channel: ChannelID? = nil,
            idHash: UInt64,
            priority: Int,
            timestamp: Int64? = nil
        ) {
            self.operation = operation
            self.status = status
            self.rejection = rejection
            self.channel = channel
            self.idHash = idHash
            self.priority = priority
            self.timestamp = timestamp
        }
    }

    static let channelMemory = 1 << 20
    static let idMemory = 1 << 16
    /// Apps whose channels are counted (as `ChannelStore.appLimit`).
    static let appMemory = 64

    private struct State {
        var seen = false
        var open: [ChannelID: OpenChannel] = [:]
        var apps: [[UInt8]] = []
        var appOpen: [Int] = []
        var deleted: Set<UInt64> = []
        /// Ids answered ChannelNotRegistered: whether the provider had deleted them.
        var notRegistered: [UInt64: Bool] = [:]
        var forgotten = 0
    }

    private let state = NIOLockedValueBox(State())
    private let card: ProviderCard
    /// Priority-10 broadcasts a channel may carry per `window` (ns).
    let budget: Int
    let window: UInt64

    init(card: ProviderCard, budget: Int, window: Duration) {
        self.card = card
        self.budget = budget
        self.window = UInt64(max(1, window.wholeNanoseconds))
    }

    /// Whether a channel or broadcast request came: the broadcast rules are on the card then.
    package var sawRequests: Bool { state.withLockedValue(\.seen) }

    /// Channels, deleted ids and unregistered ids the findings could not hold.
    package var forgotten: Int { state.withLockedValue(\.forgotten) }

    /// The channels created and not deleted, oldest first (the card's `channels-left-open`).
    package func leftOpen() -> [(id: String, createdAt: UInt64, connection: Int)] {
        state.withLockedValue { state in
            state.open.sorted { $0.value.createdAt < $1.value.createdAt }
                .map { (id: $0.key.text, createdAt: $0.value.createdAt, connection: $0.value.connection) }
        }
    }

    /// Judges one decided request of `bundle` on `connection` at `now` (uptime ns).
    package func decided(_ request: Request, bundle: UnsafeRawBufferPointer, connection: Int, now: UInt64) {
        state.withLockedValue { state in
            state.seen = true
            switch request.operation {
            case .create: created(request, bundle: bundle, &state, connection: connection, now: now)
            case .delete:
                guard request.status == 204, let id = request.channel else { return }
                if let channel = state.open.removeValue(forKey: id) { state.appOpen[channel.app] -= 1 }
                if state.deleted.count < Self.idMemory {
                    state.deleted.insert(request.idHash)
                } else {
                    state.forgotten += 1
                }
            case .broadcast: broadcast(request, &state, connection: connection, now: now)
            case .read, .list: break
            }
        }
    }

    private func created(
        _ request: Request,
        bundle: UnsafeRawBufferPointer,
        _ state: inout State,
        connection: Int,
        now: UInt64
    ) {
        if request.rejection == .cannotCreateChannelConfig {
            card.broadcastViolated(.channelsNearLimit, connection: connection, at: now) {
                "a creation refused with CannotCreateChannelConfig (the app's limit)"
            }
            return
        }
        guard request.status == 201, let id = request.channel else { return }
        guard state.open.count < Self.channelMemory else {
            state.forgotten += 1
            return
        }
        var app = state.apps.firstIndex { $0.elementsEqual(bundle) }
        if app == nil && state.apps.count < Self.appMemory {
            state.apps.append(Array(bundle))
            state.appOpen.append(0)
            app = state.apps.count - 1
        }
        guard let app else {
            state.forgotten += 1
            return
        }
        state.open[id] = OpenChannel(app: app, createdAt: now, connection: connection)
        state.appOpen[app] += 1
        let held = state.appOpen[app]
        if held == ProviderRule.Broadcast.nearLimit {
            card.broadcastViolated(.channelsNearLimit, connection: connection, at: now) {
                "\(String(decoding: bundle, as: UTF8.self)) holds \(held) of \(ProviderRule.Broadcast.channelLimit) channels"
            }
        }
    }

    private func broadcast(_ request: Request, _ state: inout State, connection: Int, now: UInt64) {
        if request.idHash != 0, let deleted = state.notRegistered[request.idHash] {
            card.broadcastViolated(.deletedChannelRetried, connection: connection, at: now) {
                "a broadcast again to a channel answered ChannelNotRegistered ("
                    + (deleted ? "deleted by the provider)" : "never created here)")
            }
        }
        if request.rejection == .channelNotRegistered, request.idHash != 0 {
            if state.notRegistered.count < Self.idMemory || state.notRegistered[request.idHash] != nil {
                state.notRegistered[request.idHash] = state.deleted.contains(request.idHash)
            } else {
                state.forgotten += 1
            }
        }
        guard request.status == 200, let id = request.channel, var channel = state.open[id] else { return }
        if request.priority == 10 {
            if channel.windowCount == 0 || now &- channel.windowStart >= window {
                channel.windowStart = now
                channel.windowCount = 0
            }
            channel.windowCount += 1
            if channel.windowCount > budget {
                let (count, budget, window) = (channel.windowCount, budget, window)
                card.broadcastViolated(.liveActivityOverBudget, connection: connection, at: now) {
                    "priority-10 broadcast \(count) on channel \(id.text) within \(window / 1_000_000_000) s "
                        + "(budget \(budget))"
                }
            }
        }
        if let timestamp = request.timestamp {
            if let highest = channel.highestTimestamp, timestamp < highest {
                card.broadcastViolated(.timestampBackwards, connection: connection, at: now) {
                    "timestamp \(timestamp) on channel \(id.text) after \(highest)"
                }
            }
            channel.highestTimestamp = max(channel.highestTimestamp ?? timestamp, timestamp)
        }
        state.open[id] = channel
    }

    /// FNV-1a of an `apns-channel-id` as sent (base64 is case-sensitive: no folding); never 0.
    package static func hash(_ text: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in text { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        return hash == 0 ? 1 : hash
    }
}
