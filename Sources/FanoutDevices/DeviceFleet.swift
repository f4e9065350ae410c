import FanoutAPNs
import FanoutInstrument
import FanoutNotation
import FanoutScenarioTerms

/// A notification APNs accepted, as the fleet needs it.
@usableFromInline
package struct DeviceNotification {
    /// The device token's `TokenList.hash`.
    @usableFromInline
    package var token: UInt64
    /// `apns-priority`: 10 (the default), 5 or 1.
    @usableFromInline
    package var priority = 10
    @usableFromInline
    package var expiration = Expiration.unset
    /// The `apns-collapse-id`'s hash (0: none).
    @usableFromInline
    package var collapse: UInt32 = 0
    /// The apns-id answered, 36 bytes of text, for its history (`nil`: none kept); read only
    /// while `accept` runs.
    @usableFromInline
    package var id: UnsafeRawBufferPointer?
    /// `apns-push-type: background`: counted against the device's budget when there is one.
    @usableFromInline
    package var isBackground = false
    /// An alert (`apns-push-type: alert`, or none): only an alert is stale when delivered late.
    @usableFromInline
    package var isAlert = true
    /// The token's text and the payload, read only while `accept` runs: with engagement on,
    /// what the device that gets it sends back (`Engagement`), decided at once (events parked
    /// when it is stored). `nil`: no return events.
    @usableFromInline
    package var tokenText: UnsafeRawBufferPointer?
    @usableFromInline
    package var body: UnsafeRawBufferPointer?

    /// A notification for the token whose `TokenList.hash` is `token`, APNs' defaults for what
    /// is not given (the memberwise initialiser, spelt out for other modules; made per accepted
    /// request: inlinable).
    @inlinable
    package init(
        token: UInt64,
        priority: Int = 10,
        expiration: Expiration = .unset,
        collapse: UInt32 = 0,
        id: UnsafeRawBufferPointer? = nil,
        isBackground: Bool = false,
        isAlert: Bool = true
    ) {
        self.token = token
        self.priority = priority
        self.expiration = expiration
        self.collapse = collapse
        self.id = id
        self.isBackground = isBackground
        self.isAlert = isAlert
    }

    /// `apns-expiration`, on the model's clock.
    @usableFromInline
    package enum Expiration: Equatable {
        /// Absent: stored for `DeviceFleetSettings.defaultExpiry`.
        case unset
        /// 0: delivered at once or discarded, never stored.
        case immediately
        /// A date: stored until then (nanoseconds on the model's clock).
        case at(UInt64)
    }
}

/// APNs' store-and-forward in front of a fleet of devices (issue #51), as a state machine told
/// each accepted notification and the time, never reading a clock: the sink's loops and a
/// test's made-up clock drive it alike. Times are nanoseconds on the caller's monotonic clock.
///
/// ```
///   accept(n, now) ─► device can take it now? ── yes ─► at now + delay: Delivered to Device
///        │                                               (Discarded – Disabled / – Token Unregistered)
///        │ no (offline; low power and priority 5)
///        ▼
///   apns-expiration 0 or past ─► Discarded – Expired
///   else Stored – Device Offline / – Power Considerations, replacing any older one
///        (Discarded – Replaced, once), until the device is back (dueAt) or it expires:
///   advance(now) ─► dueAt ≤ expiry: Delivered to Device (From Storage) … ; else Discarded – Expired
/// ```
/// An uninstalled device's token is unregistered from APNs' first delivery attempt on: a later
/// request for it is answered 410 with that attempt's time (`Answer.unregistered`).
///
/// Online devices take no memory; a device with a notification stored or an unregistered token
/// takes one `DeviceStore` entry, and when the store is full the notification is counted
/// `forgotten` (so `counts.accountedFor == counts.received` always).
package struct DeviceFleet: ~Copyable {
    let settings: DeviceFleetSettings
    private var store: DeviceStore
    private(set) var counts = DeliveryCounts()
    private(set) var times = DeliveryTimes()
    /// What the outcomes say of the provider, for its card (`FleetFindings`).
    private(set) var findings = FleetFindings()
    /// The fan-out's first request: offline devices come back, low-power ones burst, from here.
    private(set) var fanOutStart: UInt64?
    /// Draws of the delivery delay, per notification.
    private var random: SinkRandom
    /// The recent notifications' histories (`/deliveries/ID`).
    private var history: DeliveryHistory
    /// Records kept per fleet (per shard in the sink).
    package static let historyCapacity = 4096
    /// The messages kept without a collapse key so far (FCM's store): each one's key.
    private var messagesKept: UInt64 = 0
    /// What devices do after a delivery, with a backend named (`nil`: nothing comes back).
    private let engagement: Engagement?
    /// What they send back, until it is due (`takeReturns`).
    private var returns: ReturnEvents
    /// The events of each stored notification, parked until it is delivered: the store entry's
    /// key to the first of its chain (`ReturnEvents.park`). Grown to the most stored at once with
    /// engagement on; never touched without.
    private var parked: [UInt64: UInt32] = [:]
    private(set) var engaged: EngagementCounts
    /// The last payload engagement read, and what it offered: a campaign's notifications share
    /// their payload, so most are compared (one `memcmp`) rather than read again.
    private var offers = OfferCache()

    /// What to answer a request for a notification.
    package enum Answer: Equatable {
        case accepted
        /// 410 Unregistered: APNs learnt at `since` that the app is gone.
        case unregistered(since: UInt64)
    }

    /// A fleet (or one of a sharded fleet's parts: `stream` numbers it, so that each part draws
    /// its delays from a sequence of its own; parts drawing alike would repeat each other's draws).
    init(
        settings: DeviceFleetSettings,
        capacity: Int? = nil,
        historyCapacity: Int = Self.historyCapacity,
        stream: UInt64 = 0
    ) {
        self.settings = settings
        store = DeviceStore(capacity: capacity ?? settings.storeCapacity)
        history = DeliveryHistory(capacity: historyCapacity)
        random = SinkRandom(seed: settings.seed ^ 0xD1B5_4A32_D192_ED03 ^ (stream &* 0x9E37_79B9_7F4A_7C15))
        engagement = settings.engagement.isEnabled ? Engagement(settings.engagement, seed: settings.seed) : nil
        engaged = EngagementCounts(actions: settings.engagement.actions.count)
        returns = ReturnEvents(tokenBytes: ReturnEvents.tokenBytes(for: settings.service))
    }

    /// Sets the fan-out's start (a sharded fleet gives every shard the same one); by default it
    /// is the first notification's arrival.
    mutating func start(at time: UInt64) {
        if fanOutStart == nil { fanOutStart = time }
    }

    /// When the fleet must be advanced next: a stored notification falls due or expires.
    var nextEvent: UInt64? { store.earliest?.time }

    /// Devices the store holds something for.
    var devicesKept: Int { store.count }

    /// When the service learnt that `token`'s app is gone, if it has by `now` (what fell due by
    /// then is delivered first): a request for it is then answered unregistered, and counted so.
    mutating func unregisteredSince(_ token: UInt64, now: UInt64) -> UInt64? {
        advance(to: now)
        return unregisteredSince(token, DeviceProfile(token: token, settings: settings), now: now)
    }

    /// The same, for a device whose profile is drawn, the fleet advanced to `now`.
    private mutating func unregisteredSince(_ token: UInt64, _ profile: DeviceProfile, now: UInt64) -> UInt64? {
        guard profile.app == .uninstalled, let slot = store.find(token) else { return nil }
        let since = store[slot].unregisteredSince
        guard since != 0 && since <= now else { return nil }
        counts.unregisteredAnswers += 1
        return since
    }

    /// A notification for `notification.token` arrived at `now`.
    mutating func accept(_ notification: DeviceNotification, now: UInt64) -> Answer {
        advance(to: now)
        let profile = DeviceProfile(token: notification.token, settings: settings)
        if let since = unregisteredSince(notification.token, profile, now: now) { return .unregistered(since: since) }
        start(at: now)
        let start = fanOutStart ?? now
        counts.received += 1
        let token = DeviceStore.key(notification.token)
        var place = -1
        if let id = notification.id, id.count == DeliveryHistory.idLength {
            place = history.start(id: id, token: token, .init(kind: .received, time: now))
        }
        var reachableAt: UInt64? = now
        var storedFor: UInt8 = 0
        switch profile.reach {
        case .online: break
        case .offline(let returnsAfter):
            reachableAt = returnsAfter.map { max(now, start &+ $0) }
        case .lowPower(let phase) where notification.priority == 5:
            reachableAt = Self.nextBurst(after: now, start: start, phase: phase, interval: settings.burstInterval)
            storedFor = DeviceStoreEntry.forPower
        case .lowPower: break
        }
        if reachableAt == now, notification.isBackground, let budget = settings.backgroundBudget {
            switch charge(budget, token: token, now: now) {
            case .within: break
            case .over(let until):
                reachableAt = until
                storedFor = DeviceStoreEntry.forPower
                findings.record(.backgroundOverBudget, id: notification.id, at: now) {
                    "a background push past its device's budget of \(budget.limit) per \(DurationNotation.format(budget.window)): stored for power considerations for \(FleetFindings.seconds(until - now))"
                }
            case .untracked:
                counts.forgotten += 1
                note(.forgotten, at: now, place, token)
                return .accepted
            }
        }
        if reachableAt == now {
            let reached = deliver(
                token: token,
                app: profile.app,
                arrival: now,
                at: now,
                fromStorage: false,
                history: place,
                alert: notification.isAlert
            )
            if let reached, let engagement { _ = engage(notification, engagement, deliveredAt: reached) }
            return .accepted
        }
        keep(notification, token: token, history: place, until: reachableAt, for: storedFor, app: profile.app, now: now)
        return .accepted
    }

    /// A notification its device cannot take now: discarded when it may not be stored
    /// (`apns-expiration` 0 or past), forgotten when the store is full, else stored (replacing
    /// any older one) until the device can take it (`reachableAt`, `nil`: not within the run).
    private mutating func keep(
        _ notification: DeviceNotification,
        token: UInt64,
        history place: Int,
        until reachableAt: UInt64?,
        for storedFor: UInt8,
        app: DeviceProfile.App,
        now: UInt64
    ) {
        let expiresAt: UInt64
        switch notification.expiration {
        case .immediately: expiresAt = now
        case .at(let time): expiresAt = time
        case .unset: expiresAt = now &+ settings.defaultExpiry.wholeNanoseconds
        }
        // APNs tries once; a device that cannot take it loses it (expiration 0, or a past date).
        guard expiresAt > now else {
            counts.discardedExpired += 1
            note(.discardedExpired, at: now, place, token)
            // What the provider chose to lose: it said "once, or never" to a device that was away.
            if notification.expiration == .immediately && storedFor == 0 {
                findings.record(.expirationZeroOffline, id: notification.id, at: now) {
                    let back =
                        reachableAt.map { "back \(FleetFindings.seconds($0 - now)) later" } ?? "not back within the run"
                    let zero = settings.service == .fcm ? "ttl 0s" : "apns-expiration 0"
                    return "sent with \(zero) while its device was offline (\(back)): discarded"
                }
            }
            return
        }
        var flags = storedFor | Self.flags(of: app) | (notification.isAlert ? 0 : DeviceStoreEntry.notAlert)
        let key: UInt64
        switch settings.service {
        case .apns:
            key = token
        case .fcm:
            // One entry a collapse key, or one for the message alone (numbered past every key).
            if notification.collapse == 0 { messagesKept &+= 1 }
            key = Self.messageKey(
                device: token,
                notification.collapse != 0 ? UInt64(notification.collapse) : (1 << 32) | messagesKept
            )
            flags |= DeviceStoreEntry.message
        }
        // A message entry keeps its device's key where a device's keeps its collapse id and history.
        let message = flags & DeviceStoreEntry.message != 0 ? DeviceStoreEntry.deviceFields(token) : nil
        guard let slot = store.findOrInsert(key) else {
            counts.forgotten += 1
            note(.forgotten, at: now, place, token)
            return
        }
        if store[slot].isStored {
            if let chain = parked.removeValue(forKey: store[slot].key) { returns.drop(chain) }
            counts.discardedReplaced += 1
            counts.stored -= 1
            if store[slot].collapsedBy(notification.collapse) { counts.collapsed += 1 }
            note(.discardedReplaced, at: now, store[slot].historyPlace, store[slot].device)
        }
        store.store(
            in: slot,
            arrivedAt: now,
            dueAt: reachableAt ?? .max,
            expiresAt: expiresAt,
            collapse: message?.collapse ?? notification.collapse,
            history: message?.history ?? UInt32(place + 1),
            flags: flags
        )
        counts.stored += 1
        // Its device's engagement is decided now, while the token and payload are at hand, and
        // parked until the delivery.
        if let engagement {
            let chain = engage(notification, engagement, deliveredAt: nil)
            if chain != ReturnEvents.noSlot { parked[store[slot].key] = chain }
        }
        if storedFor == DeviceStoreEntry.forPower {
            counts.storedPower += 1
            note(.storedPower, at: now, place, token)
        } else {
            counts.storedOffline += 1
            note(.storedOffline, at: now, place, token)
        }
    }

    /// Delivers or discards every stored notification whose device came back, or whose
    /// expiration went by, at or before `now`.
    mutating func advance(to now: UInt64) {
        while let (slot, time) = store.earliest, time <= now {
            let entry = store[slot]
            guard entry.isStored else {
                store.endBudget(slot)
                continue
            }
            counts.stored -= 1
            let chain = engagement == nil ? nil : parked.removeValue(forKey: entry.key)
            if entry.dueAt <= entry.expiresAt {
                let app: DeviceProfile.App =
                    entry.flags & DeviceStoreEntry.uninstalled != 0
                    ? .uninstalled : entry.flags & DeviceStoreEntry.disabled != 0 ? .disabled : .enabled
                let reached = deliver(
                    token: entry.device,
                    app: app,
                    arrival: entry.arrivedAt,
                    at: entry.dueAt,
                    fromStorage: true,
                    history: entry.historyPlace,
                    alert: entry.flags & DeviceStoreEntry.notAlert == 0
                )
                if reached != nil, engagement != nil { engaged.fromStorage += 1 }
                if let chain {
                    if let reached {
                        // Its events, decided when it was stored, fall due from this delivery.
                        var next = chain
                        while let event = returns.release(&next, deliveredAt: reached) {
                            count(event.kind, action: event.action, notCarried: event.notCarried)
                        }
                    } else {
                        returns.drop(chain)
                    }
                }
            } else {
                if let chain { returns.drop(chain) }
                counts.discardedExpired += 1
                note(.discardedExpired, at: entry.expiresAt, entry.historyPlace, entry.device)
            }
            store.unstore(slot)
        }
    }

    /// The notifications stored now, and the earliest and latest of their expirations.
    var storedExpiries: (count: Int, earliest: UInt64, latest: UInt64)? {
        var count = 0
        var earliest = UInt64.max
        var latest: UInt64 = 0
        store.forEachStored { entry in
            count += 1
            earliest = min(earliest, entry.expiresAt)
            latest = max(latest, entry.expiresAt)
        }
        return count == 0 ? nil : (count, earliest, latest)
    }

    /// What a background push does to its device's budget.
    enum BudgetCharge: Equatable {
        /// Within the budget: counted, delivered.
        case within
        /// Over it: stored for power considerations until the window ends.
        case over(until: UInt64)
        /// No room in the store to count it.
        case untracked
    }

    /// Counts a background push to `token` at `now` against `budget` pushes per window (the
    /// window opens at the device's first background push and lasts `budget.window`).
    private mutating func charge(_ budget: Rate, token: UInt64, now: UInt64) -> BudgetCharge {
        guard let slot = store.findOrInsert(token) else { return .untracked }
        let entry = store[slot]
        let open = entry.budgetUntil > now
        let used = open ? Int(entry.budgetUsed) : 0
        let until = open ? entry.budgetUntil : now &+ budget.window.wholeNanoseconds
        guard used < budget.limit else { return .over(until: until) }
        store.setBudget(slot, until: until, used: UInt16(clamping: used + 1))
        return .within
    }

    /// The service hands a notification that arrived at `arrival` to a device that can take it
    /// from `time`; it reaches the device after the drawn delay. On Android (the FCM sink's fleet)
    /// notifications disabled stop what would be shown, not a data message, which
    /// the app still receives. Returns when the device got it, if it did.
    @discardableResult
    private mutating func deliver(
        token: UInt64,
        app: DeviceProfile.App,
        arrival: UInt64,
        at time: UInt64,
        fromStorage: Bool,
        history place: Int,
        alert: Bool = true
    ) -> UInt64? {
        let app = app == .disabled && !alert && settings.service == .fcm ? .enabled : app
        switch app {
        case .enabled:
            let reached = time &+ (settings.delay?.sample(&random) ?? 0)
            times.record(arrival: arrival, delivered: reached, start: fanOutStart ?? arrival, stored: fromStorage)
            if fromStorage { counts.deliveredFromStorage += 1 } else { counts.delivered += 1 }
            note(fromStorage ? .deliveredFromStorage : .delivered, at: reached, place, token)
            let age = reached &- arrival
            let bound = settings.staleAfter
            if fromStorage && alert && age > bound.wholeNanoseconds {
                let id = findings.keepsExample(.staleDelivery) ? history.id(at: place, token: token) : nil
                findings.record(.staleDelivery, idText: id, at: reached) {
                    let alert = settings.service == .fcm ? "a notification message" : "an alert"
                    return
                        "\(alert) delivered from storage \(FleetFindings.seconds(age)) after \(settings.service.name) received it (stale after \(DurationNotation.format(bound)))"
                }
            }
            return reached
        case .disabled:
            if fromStorage { counts.discardedDisabledFromStorage += 1 } else { counts.discardedDisabled += 1 }
            note(fromStorage ? .discardedDisabledFromStorage : .discardedDisabled, at: time, place, token)
        case .uninstalled:
            if fromStorage {
                counts.discardedUnregisteredFromStorage += 1
            } else {
                counts.discardedUnregistered += 1
            }
            note(fromStorage ? .discardedUnregisteredFromStorage : .discardedUnregistered, at: time, place, token)
            // The attempt tells the service the token is gone.
            markUnregistered(token, since: time)
        }
        return nil
    }

    /// What the device that got `notification` at `deliveredAt` sends back, held until due: the
    /// media download at once (mutable-content), the open after its drawn delay. A notification
    /// stored (`deliveredAt` `nil`) has its events parked instead, and counted at its delivery;
    /// returns the first of the chain parked (`ReturnEvents.noSlot`: none).
    private mutating func engage(
        _ notification: DeviceNotification,
        _ engagement: Engagement,
        deliveredAt: UInt64?
    ) -> UInt32 {
        guard let token = notification.tokenText else { return ReturnEvents.noSlot }
        let body = notification.body ?? UnsafeRawBufferPointer(start: nil, count: 0)
        let offer = offers.offer(of: body, actions: engagement.actionNames.count)
        let json = JSONScan(body)
        let decision = engagement.decide(
            token: notification.token,
            mutableContent: offer.mutableContent && notification.isAlert,
            &random
        )
        var chain = ReturnEvents.noSlot
        /// Holds the event `after` the delivery, or parks it ahead of `chain`.
        func hold(_ kind: ReturnEventKind, after: UInt64, action: Int?, notCarried: Int?, url: Range<Int>?) {
            let path = url.map { UnsafeRawBufferPointer(rebasing: body[json.pathOfURL($0)]) }
            if let deliveredAt {
                count(kind, action: action, notCarried: notCarried)
                returns.add(
                    kind,
                    due: deliveredAt &+ after,
                    deliveredAt: deliveredAt,
                    action: action,
                    token: token,
                    id: notification.id,
                    path: path
                )
            } else {
                chain = returns.park(
                    kind,
                    after: after,
                    action: action,
                    notCarried: notCarried,
                    token: token,
                    id: notification.id,
                    path: path,
                    onto: chain
                )
            }
        }
        if decision.fetchesMedia {
            hold(.media, after: 0, action: nil, notCarried: nil, url: offer.mediaURL)
        }
        guard let after = decision.opensAfter else { return chain }
        var action = decision.action
        var notCarried: Int?
        var url = offer.defaultURL
        var kind = ReturnEventKind.open
        if let index = action {
            let carried = offers.action(index, of: offer, in: body) { engagement.actionNames[index] }
            if let carried {
                url = carried
            } else if offer.categoryActions == nil, let filed = engagement.filed[index], let category = offer.category,
                filed.categories.contains(where: { Self.equal(body, category, $0) })
            {
                // The category file's: its request (the maker's), foreground or background.
                url = nil
                kind = filed.background ? .background : .open
            } else {
                // Counted, and taken as the default action: the sink cannot refuse what a
                // device would do with a notification it was sent.
                notCarried = index
                action = nil
            }
        }
        hold(kind, after: after, action: action, notCarried: notCarried, url: url)
        return chain
    }

    /// Counts what a device did, as its event is held: a media download, or an open (a
    /// background action) by `action` (`nil`: the default; `notCarried`: the action it drew that
    /// its payload did not carry).
    private mutating func count(_ kind: ReturnEventKind, action: Int?, notCarried: Int?) {
        switch kind {
        case .media:
            engaged.mediaFetches += 1
            return
        case .open: engaged.opens += 1
        case .background: engaged.backgroundActions += 1
        }
        if let action { engaged.actions[action] += 1 } else { engaged.defaultOpens += 1 }
        if let notCarried { engaged.notCarried[notCarried] += 1 }
    }

    /// Whether `body[range]` is `bytes`.
    private static func equal(_ body: UnsafeRawBufferPointer, _ range: Range<Int>, _ bytes: [UInt8]) -> Bool {
        range.count == bytes.count
            && bytes.withUnsafeBytes { memcmp(body.baseAddress! + range.lowerBound, $0.baseAddress!, bytes.count) == 0 }
    }

    /// Return events waiting.
    var returnsWaiting: Int { returns.count }
    /// Return events parked for notifications still stored.
    var returnsParked: Int { returns.parked }
    /// When the earliest return event is due, and the latest any was.
    var nextReturn: UInt64? { returns.earliest }
    var latestReturn: UInt64 { returns.latestDue }

    /// Hands each return event due at `now` to `body` (at most `limit`), returns how many.
    mutating func takeReturns(now: UInt64, limit: Int, _ body: (ReturnEventView) -> Void) -> Int {
        returns.takeDue(now: now, limit: limit, body)
    }

    /// Events whose path was not kept, and tokens cut to 64 bytes (`ReturnEvents`).
    var returnsCut: (paths: Int, tokens: Int) { (returns.pathsNotKept, returns.tokensCut) }

    /// `token`'s app is known gone from `time` on; with no room to remember it, a later request
    /// is accepted (and discarded) again rather than answered unregistered.
    private mutating func markUnregistered(_ token: UInt64, since time: UInt64) {
        guard let slot = store.findOrInsert(token) else { return }
        let known = store[slot].unregisteredSince
        store.markUnregistered(slot, since: known == 0 ? time : min(known, time))
    }

    /// The store's key of a message kept for `device` (FCM's store): its collapse
    /// key's hash, or its number past every hash, mixed with the device's key (SplitMix64's
    /// finaliser), so that it falls apart from every device's own.
    static func messageKey(device: UInt64, _ message: UInt64) -> UInt64 {
        var mixed = device ^ (message &* 0x9E37_79B9_7F4A_7C15)
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return DeviceStore.key(mixed ^ (mixed >> 31))
    }

    /// Adds an event to the history record at `place` (-1: none kept), if it is still `token`'s.
    private mutating func note(_ kind: DeliveryEvent.Kind, at time: UInt64, _ place: Int, _ token: UInt64) {
        guard place >= 0 else { return }
        history.add(.init(kind: kind, time: time), at: place, token: token)
    }

    /// The history of the notification whose apns-id is `id` (its text, either case), if it is
    /// among the recent ones.
    func events(of id: UnsafeRawBufferPointer) -> [DeliveryEvent]? {
        history.events(of: id)
    }

    private static func flags(of app: DeviceProfile.App) -> UInt8 {
        switch app {
        case .enabled: 0
        case .disabled: DeviceStoreEntry.disabled
        case .uninstalled: DeviceStoreEntry.uninstalled
        }
    }

    /// The first burst of a low-power device at or after `now`: `start + phase + k · interval`.
    static func nextBurst(after now: UInt64, start: UInt64, phase: UInt64, interval: Duration) -> UInt64 {
        let period = max(1, interval.wholeNanoseconds)
        let first = start &+ phase
        guard now > first else { return first }
        let periods = (now - first + period - 1) / period
        return first &+ periods &* period
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
