import FanoutPush
import FanoutRandom
import FanoutScenarioTerms
import Foundation
import Testing

@testable import FanoutDevices

/// What devices do after a delivery (issue #63): the settings as users write them, what a
/// payload offers, the model's draws, and the events a fleet holds until they are due.
@Suite struct EngagementTests {
    static let poll =
        #"{"aps":{"alert":{"title":"Poll","body":"Do you like the new design?"},"badge":1,"sound":"default","category":"poll","mutable-content":1},"category-actions":[{"name":"OK","type":"url","value":"https://example.com/ok"},{"name":"NOK","type":"url","value":"https://example.com/nok"}]}"#

    static func error(_ name: String, _ value: String) -> String? {
        do {
            _ = try DeviceFleetSettings.Setting(name, value)
            return nil
        } catch {
            return error.description
        }
    }

    /// What `body` was refused with, `nil` when it was not.
    static func refusal(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch {
            return (error as? SinkScenarioError)?.description ?? "\(error)"
        }
    }

    // MARK: settings

    @Test func badSettingsEachSayWhatAndWhere() {
        #expect(
            Self.error("device-actions", "OK=70%,NOK=40%")
                == "device-actions' shares add up to 110% (OK 70%, NOK 40%), over 100%: the rest of the opens take the default action"
        )
        #expect(Self.error("device-actions", "OK=60%,OK=10%") == "device-actions names OK twice")
        #expect(Self.error("device-actions", "OK")?.hasPrefix("device-actions is NAME=SHARE") == true)
        #expect(
            Self.error("device-actions", "OK=lots") == "a share is from 0% to 100% (or 0 to 1), like 0.5%; got lots"
        )
        #expect(Self.error("device-open", "120%") == "a share is from 0% to 100% (or 0 to 1), like 0.5%; got 120%")
        #expect(
            Self.error("device-open-after", "soon")
                == "a latency is KIND:VALUES, like fixed:5ms or uniform:1ms-10ms; got soon"
        )
        #expect(
            Self.error("device-open-after", "uniform:9s-1s") == "uniform latency needs LOW ≤ HIGH; got uniform:9s-1s"
        )
        #expect(
            Self.error("device-requests-per-open", "0")
                == "device-requests-per-open takes a whole number from 1 to 64, not 0"
        )
        #expect(
            Self.error("return-to", "ftp://x")
                == "--return-to takes an http:// or https:// URL, like http://127.0.0.1:8080; got ftp://x"
        )
        #expect(
            Self.error("return-to", "http://x:99999") == "--return-to: http://x:99999 has a port that is not 1–65535"
        )
        #expect(
            Self.error("return-to", "http://x/a?b=1")
                == "--return-to: http://x/a?b=1 needs a host, and no user, query or fragment (the events' paths are appended)"
        )
        #expect(
            Self.error("return-to", "http:///path")
                == "--return-to: http:///path needs a host, and no user, query or fragment (the events' paths are appended)"
        )
        // Opens with nowhere to go.
        var settings = DeviceFleetSettings()
        settings.engagement.open = 0.2
        #expect(
            performing: { try settings.validate() },
            throws: {
                ($0 as? SinkScenarioError)?.description
                    == "--device-open and --device-actions need --return-to URL: the backend the opens go to"
            }
        )
    }

    /// A category file as users write it, and each mistake said at its line.
    @Test func aCategoryFileIsReadAndItsMistakesSaidWhere() throws {
        let categories = try ActionCategories(
            parsing: """
                # category  action    mode        request
                poll        poll_ok   foreground  POST /polls/{campaign}/ok
                poll        poll_nok  background  POST /polls/{campaign}/nok

                survey      poll_nok  background  POST /polls/{campaign}/nok   # the same action in two
                reminder    snooze    background
                """,
            file: "app.categories"
        )
        #expect(categories.actions.map(\.id) == ["poll_ok", "poll_nok", "snooze"])
        #expect(categories.action("poll_nok")?.categories == ["poll", "survey"])
        #expect(categories.action("poll_nok")?.background == true && categories.action("poll_ok")?.background == false)
        #expect(categories.action("poll_ok")?.request == "POST /polls/{campaign}/ok")
        #expect(categories.action("snooze")?.request == nil && categories.action("snooze")?.place == "app.categories:6")
        for (text, message) in [
            (
                "poll poll_ok",
                "app.categories:1: a line is CATEGORY ACTION foreground|background [METHOD PATH], like poll poll_ok foreground POST /polls/ok; got poll poll_ok"
            ),
            ("poll poll_ok sometimes", "app.categories:1: the mode is foreground or background, not sometimes"),
            (
                "poll poll_ok foreground post /ok",
                "app.categories:1: a request is METHOD PATH, like POST /polls/ok; got post /ok"
            ),
            (
                "poll poll_ok foreground POST ok",
                "app.categories:1: a request is METHOD PATH, like POST /polls/ok; got POST ok"
            ),
            (
                "poll a foreground\nsurvey a background",
                "app.categories:2: a was named at app.categories:1 with another mode or request (iOS runs an action by its id)"
            ),
            ("# nothing\n", "--device-categories app.categories names no action"),
        ] {
            #expect(
                Self.refusal { _ = try ActionCategories(parsing: text, file: "app.categories") } == message,
                "\(text)"
            )
        }
        #expect(
            Self.error("device-categories", "/nonexistent/app.categories")?.hasPrefix(
                "--device-categories /nonexistent/app.categories: cannot be read"
            ) == true
        )
        // --device-actions names what the file holds.
        var settings = EngagementSettings()
        settings.returnTo = try ReturnURL(parsing: "http://127.0.0.1:9")
        settings.categories = categories
        settings.actions = [.init(name: "poll_ok", share: 0.5), .init(name: "poll_maybe", share: 0.2)]
        #expect(
            Self.refusal { try settings.validate() }
                == "--device-actions: poll_maybe is in no category of app.categories (its actions: poll_ok, poll_nok, snooze)"
        )
    }

    @Test func returnURLsAreReadWhole() throws {
        let plain = try ReturnURL(parsing: "http://127.0.0.1:8080")
        #expect(!plain.isTLS && plain.host == "127.0.0.1" && plain.port == 8080 && plain.pathPrefix == "")
        let secure = try ReturnURL(parsing: "https://api.example.com/v2/")
        #expect(
            secure.isTLS && secure.port == 443 && secure.pathPrefix == "/v2"
                && secure.description == "https://api.example.com:443/v2"
        )
        let six = try ReturnURL(parsing: "http://[::1]:9000/x")
        #expect(six.host == "::1" && six.port == 9000 && six.description == "http://[::1]:9000/x")
    }

    // MARK: what a payload offers

    static func offer(_ json: String) -> NotificationOffer {
        Array(json.utf8).withUnsafeBytes { NotificationOffer.scan($0) }
    }

    static func text(_ json: String, _ range: Range<Int>?) -> String? {
        range.map { String(decoding: Array(json.utf8)[$0], as: UTF8.self) }
    }

    /// Whether the payload carries the action, and its URL if it has one: `nil` when it is not
    /// carried, `""` when it is without a URL.
    static func action(_ name: String, in json: String) -> String? {
        let offer = offer(json)
        let bytes = Array(json.utf8)
        let found = bytes.withUnsafeBytes { body in
            Array(name.utf8).withUnsafeBytes { offer.action(named: $0, in: body) }
        }
        return found.map { range in range.map { String(decoding: bytes[$0], as: UTF8.self) } ?? "" }
    }

    @Test func thePayloadsActionsAndMediaAreFoundInPlace() throws {
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("fixtures")
        let poll = try String(contentsOf: fixtures.appendingPathComponent("poll.json"), encoding: .utf8)
        #expect(Self.offer(poll).mutableContent)
        #expect(Self.action("OK", in: poll) == "https://example.com/ok")
        #expect(Self.action("NOK", in: poll) == "https://example.com/nok")
        #expect(Self.action("poll_ok", in: poll) == nil)
        let dynamic = try String(contentsOf: fixtures.appendingPathComponent("dynamic-category.json"), encoding: .utf8)
        let dynamicOffer = Self.offer(dynamic)
        #expect(dynamicOffer.mutableContent && Self.text(dynamic, dynamicOffer.defaultURL) == "https://ibm.com")
        #expect(Self.action("IBM_CA", in: dynamic) == "https://ibm.ca")
        let rich = try String(contentsOf: fixtures.appendingPathComponent("rich-actions.json"), encoding: .utf8)
        let richOffer = Self.offer(rich)
        #expect(
            Self.text(rich, richOffer.mediaURL)
                == "http://www.nfcworld.com/wp-content/uploads/2014/12/ubudu-ubeacon.jpg"
        )
        #expect(richOffer.categoryActions == nil && Self.action("OK", in: rich) == nil)
        // A URL of a page is no media; one object down, a film is; an action without a URL is carried.
        let nested =
            #"{"aps":{"alert":"x"},"data":{"page":"https://a.b/index.html","clip":"https://a.b/c/clip.MP4?s=1"},"category-actions":[{"name":"Later"}]}"#
        #expect(Self.text(nested, Self.offer(nested).mediaURL) == "https://a.b/c/clip.MP4?s=1")
        #expect(!Self.offer(nested).mutableContent)
        #expect(Self.action("Later", in: nested) == "")
    }

    /// An FCM send offers what Android shows: its image (the Android block's over the
    /// message's), its click_action as the category; a data message nothing to download.
    @Test func anFCMSendsImageAndClickActionAreFound() {
        func offer(_ text: String) -> (media: String?, category: String?, downloads: Bool) {
            Array(text.utf8).withUnsafeBytes { body in
                let offer = NotificationOffer.scan(body)
                func text(_ range: Range<Int>?) -> String? { range.map { String(decoding: body[$0], as: UTF8.self) } }
                return (text(offer.mediaURL), text(offer.category), offer.mutableContent)
            }
        }
        let both = offer(
            #"{"message":{"token":"t","notification":{"title":"a","image":"https://x/a.jpg"},"android":{"notification":{"click_action":"poll","image":"https://x/b.jpg"}}}}"#
        )
        #expect(both.media == "https://x/b.jpg" && both.category == "poll" && both.downloads)
        let androidFirst = offer(
            #"{"message":{"android":{"notification":{"image":"https://x/b.jpg"}},"notification":{"image":"https://x/a.jpg"}}}"#
        )
        #expect(androidFirst.media == "https://x/b.jpg")
        let data = offer(#"{"message":{"token":"t","data":{"image":"https://x/a.jpg"}}}"#)
        #expect(data.media == nil && data.category == nil && !data.downloads)
    }

    @Test func aPathIsTheURLsAfterItsHostEscapedSlashesAndAll() {
        let json = #"{"u":"https:\/\/example.com\/ok?x=1","v":"http://example.com"}"#
        let bytes = Array(json.utf8)
        bytes.withUnsafeBytes { body in
            let scan = JSONScan(body)
            let first = scan.string(5)!
            #expect(String(decoding: bytes[scan.pathOfURL(first)], as: UTF8.self) == #"\/ok?x=1"#)
            let second = scan.string(json.utf8.count - #""http://example.com"}"#.utf8.count)!
            #expect(String(decoding: bytes[second], as: UTF8.self) == "http://example.com")
            #expect(scan.pathOfURL(second).isEmpty)
        }
    }

    @Test func whatIsNotJSONOffersNothing() {
        for text in ["", "[", "{\"aps\":", "{\"aps\":{\"mutable-content\":1", "not json"] {
            #expect(Self.offer(text) == NotificationOffer(), "\(text)")
        }
        #expect(Self.action("OK", in: #"{"category-actions":[{"name":"OK",]}"#) == nil)
        #expect(!Self.offer(#"{"aps":{"mutable-content":0}}"#).mutableContent)
        #expect(!Self.offer(#"{"aps":{"mutable-content":10}}"#).mutableContent)
        // PHP's escaped slashes are a URL too.
        let escaped = #"{"notification-action":{"value":"https:\/\/example.com\/go"}}"#
        #expect(Self.text(escaped, Self.offer(escaped).defaultURL) == #"https:\/\/example.com\/go"#)
    }

    // MARK: the model's draws

    @Test func opensAndActionsFollowTheirSharesAndTheTokenDecides() {
        var settings = EngagementSettings()
        settings.open = 0.3
        settings.actions = [.init(name: "a", share: 0.5), .init(name: "b", share: 0.25)]
        settings.openAfter = .uniform(.seconds(1), .seconds(3))
        let engagement = Engagement(settings, seed: 7)
        var random = SinkRandom(seed: 1)
        var opens = 0
        var actions = [0, 0, 0]
        let total = 200_000
        for index in 0..<total {
            let token = SeededRandom.mix(UInt64(index) &+ 0x9E37_79B9_7F4A_7C15)
            let decision = engagement.decide(token: token, mutableContent: index % 2 == 0, &random)
            #expect(decision.fetchesMedia == (index % 2 == 0))
            guard let after = decision.opensAfter else { continue }
            #expect(after >= 1_000_000_000 && after <= 3_000_000_000)
            opens += 1
            actions[decision.action ?? 2] += 1
            // The same device decides alike again (its delay is drawn anew).
            let again = engagement.decide(token: token, mutableContent: false, &random)
            #expect(again.opensAfter != nil && again.action == decision.action)
        }
        // Binomial: σ of the open share 0.001; of each action's share of the opens below 0.002.
        #expect(abs(Double(opens) / Double(total) - 0.3) < 0.005)
        for (index, share) in [0.5, 0.25, 0.25].enumerated() {
            #expect(abs(Double(actions[index]) / Double(opens) - share) < 0.01, "\(actions)")
        }
    }

    // MARK: the events held

    static func add(_ events: inout ReturnEvents, due: UInt64, token: String, path: String?) {
        Array(token.utf8).withUnsafeBytes { token in
            Array("6f4a1c2e-0b3d-4e5f-8a9b-0c1d2e3f4a5b".utf8).withUnsafeBytes { id in
                if let path {
                    Array(path.utf8).withUnsafeBytes {
                        events.add(.open, due: due, deliveredAt: 0, action: 1, token: token, id: id, path: $0)
                    }
                } else {
                    events.add(.media, due: due, deliveredAt: 0, action: nil, token: token, id: id, path: nil)
                }
            }
        }
    }

    @Test func eventsGoOutInDueOrderWithTheirTexts() {
        var events = ReturnEvents()
        for (index, due) in [50, 10, 40, 20, 30].enumerated() {
            Self.add(&events, due: UInt64(due), token: "token\(index)", path: index % 2 == 0 ? "/p\(index % 4)" : nil)
        }
        #expect(events.count == 5 && events.earliest == 10)
        var seen: [(UInt64, String, String?)] = []
        var ids: Set<String> = []
        let taken = events.takeDue(now: 35, limit: 10) { event in
            seen.append(
                (
                    event.due, String(decoding: event.token, as: UTF8.self),
                    event.path.map { String(decoding: $0, as: UTF8.self) }
                )
            )
            ids.insert(String(decoding: event.id, as: UTF8.self))
        }
        #expect(taken == 3 && ids == ["6f4a1c2e-0b3d-4e5f-8a9b-0c1d2e3f4a5b"])
        #expect(seen.map(\.0) == [10, 20, 30] && seen.map(\.1) == ["token1", "token3", "token4"])
        #expect(seen.map(\.2) == [nil, nil, "/p0"])
        #expect(events.count == 2 && events.earliest == 40 && events.latestDue == 50)
        // A path met again is the same path; a token over 64 bytes is cut, and counted as sent.
        Self.add(&events, due: 60, token: String(repeating: "f", count: 70), path: "/p0")
        #expect(events.tokensCut == 0)
        var last: (String, String?) = ("", nil)
        _ = events.takeDue(now: .max, limit: 10) { event in
            last = (
                String(decoding: event.token, as: UTF8.self), event.path.map { String(decoding: $0, as: UTF8.self) }
            )
        }
        #expect(last.0 == String(repeating: "f", count: 64) && last.1 == "/p0" && events.count == 0)
        #expect(events.tokensCut == 1)
    }

    @Test func pathsPastTheCapacityGoToTheDefaultAndAreCounted() {
        var events = ReturnEvents()
        for index in 0...ReturnEvents.pathCapacity {
            Self.add(&events, due: 1, token: "t", path: "/item/\(index)")
        }
        #expect(events.pathsNotKept == 1)
        var withoutPath = 0
        _ = events.takeDue(now: 1, limit: .max) { if $0.path == nil { withoutPath += 1 } }
        #expect(withoutPath == 1)
    }

    // MARK: in the fleet

    static func deliver(_ fleet: inout DeviceFleet, token: String, body: String, at now: UInt64) {
        Array(token.utf8).withUnsafeBytes { tokenBytes in
            Array(body.utf8).withUnsafeBytes { bodyBytes in
                var notification = DeviceNotification(token: TokenList.hash(tokenBytes))
                notification.tokenText = tokenBytes
                notification.body = bodyBytes
                _ = fleet.accept(notification, now: now)
            }
        }
    }

    @Test func onlyDevicesThatGotItEngageAndAnActionNotCarriedIsTheDefault() throws {
        var settings = DeviceFleetSettings()
        settings.engagement.open = 1
        settings.engagement.openAfter = .fixed(.seconds(2))
        settings.engagement.actions = [.init(name: "poll_ok", share: 1)]
        settings.engagement.returnTo = try ReturnURL(parsing: "http://127.0.0.1:9")
        settings.disabled = 0.5
        var fleet = DeviceFleet(settings: settings)
        let t0: UInt64 = 1_000_000_000_000
        for index in 0..<1_000 { Self.deliver(&fleet, token: "device-\(index)", body: Self.poll, at: t0) }
        let counts = fleet.engaged
        let delivered = fleet.counts.delivered
        #expect(delivered > 400 && delivered < 600 && fleet.counts.discardedDisabled == 1_000 - delivered)
        // Every delivered device fetched its media and opened; poll_ok is not among the poll's
        // actions (OK and NOK are): counted, and taken as the default action.
        #expect(counts.mediaFetches == delivered && counts.opens == delivered)
        #expect(counts.notCarried == [delivered] && counts.defaultOpens == delivered && counts.actions == [0])
        var kinds: [ReturnEventKind: Int] = [:]
        var openDue: Set<UInt64> = []
        _ = fleet.takeReturns(now: .max, limit: .max) { event in
            kinds[event.kind, default: 0] += 1
            if event.kind == .open {
                openDue.insert(event.due - event.deliveredAt)
                #expect(event.action == nil && event.path == nil)
            }
        }
        #expect(kinds[.media] == delivered && kinds[.open] == delivered && openDue == [2_000_000_000])
        // A device offline at first gets it from storage: its events, decided when it was
        // stored, fall due from that delivery (`parkedEventsFallDueFromTheDeliveryFromStorage`).
        var offline = settings
        offline.disabled = 0
        offline.offline = 1
        offline.returnAfter = .fixed(.seconds(1))
        var later = DeviceFleet(settings: offline)
        Self.deliver(&later, token: "away", body: Self.poll, at: t0)
        #expect(later.returnsWaiting == 0 && later.engaged.opens == 0)
        later.advance(to: t0 + 2_000_000_000)
        #expect(later.counts.deliveredFromStorage == 1 && later.engaged.fromStorage == 1 && later.returnsWaiting == 2)
    }

    /// Devices away when their notification comes: its events are decided as it is stored (the
    /// token and payload at hand), parked, and counted and held from the delivery; a stored
    /// notification replaced, expired or meeting a disabled app sends nothing.
    @Test func parkedEventsFallDueFromTheDeliveryFromStorage() throws {
        var settings = DeviceFleetSettings()
        settings.engagement.open = 1
        settings.engagement.openAfter = .fixed(.seconds(2))
        settings.engagement.actions = [.init(name: "OK", share: 1)]
        settings.engagement.returnTo = try ReturnURL(parsing: "http://127.0.0.1:9")
        settings.offline = 1
        settings.returnAfter = .fixed(.seconds(5))
        let second: UInt64 = 1_000_000_000
        let t0 = 1_000 * second
        var fleet = DeviceFleet(settings: settings)
        // Two notifications for one device: APNs keeps the last (the first is replaced).
        Self.deliver(&fleet, token: "twice", body: Self.poll, at: t0)
        Self.deliver(&fleet, token: "twice", body: Self.poll, at: t0 + second)
        Self.deliver(&fleet, token: "once", body: Self.poll, at: t0)
        #expect(fleet.counts.discardedReplaced == 1 && fleet.returnsWaiting == 0)
        // The replaced notification's two events dropped; the kept two's parked, two each.
        #expect(fleet.returnsParked == 4)
        #expect(fleet.engaged.mediaFetches == 0 && fleet.engaged.opens == 0)
        fleet.advance(to: t0 + 4 * second)
        #expect(fleet.returnsWaiting == 0)
        fleet.advance(to: t0 + 6 * second)
        #expect(fleet.counts.deliveredFromStorage == 2 && fleet.engaged.fromStorage == 2 && fleet.returnsParked == 0)
        #expect(fleet.engaged.mediaFetches == 2 && fleet.engaged.opens == 2 && fleet.engaged.actions == [2])
        var events: [(ReturnEventKind, String, UInt64, UInt64, String?)] = []
        _ = fleet.takeReturns(now: .max, limit: .max) { event in
            events.append(
                (
                    event.kind, String(decoding: event.token, as: UTF8.self), event.deliveredAt, event.due,
                    event.path.map { String(decoding: $0, as: UTF8.self) }
                )
            )
        }
        // Delivered when the devices came back, 5 s after the fan-out's start: the media then,
        // the open (by OK, its URL's path) 2 s later.
        let back = t0 + 5 * second
        #expect(events.count == 4 && events.allSatisfy { $0.2 == back })
        #expect(Set(events.map(\.1)) == ["twice", "once"])
        #expect(events.filter { $0.0 == .media }.allSatisfy { $0.3 == back })
        #expect(events.filter { $0.0 == .open }.allSatisfy { $0.3 == back + 2 * second && $0.4 == "/ok" })

        // Expired in the store, or meeting a disabled app: no events, nothing counted.
        var lost = settings
        lost.disabled = 1
        var disabled = DeviceFleet(settings: lost)
        Self.deliver(&disabled, token: "disabled", body: Self.poll, at: t0)
        disabled.advance(to: t0 + 10 * second)
        #expect(
            disabled.counts.discardedDisabledFromStorage == 1 && disabled.returnsWaiting == 0
                && disabled.returnsParked == 0
        )
        #expect(disabled.engaged.opens == 0 && disabled.engaged.mediaFetches == 0 && disabled.engaged.fromStorage == 0)
        var expiring = DeviceFleet(settings: settings)
        Array("expiring".utf8).withUnsafeBytes { token in
            Array(Self.poll.utf8).withUnsafeBytes { body in
                var notification = DeviceNotification(token: TokenList.hash(token), expiration: .at(t0 + second))
                notification.tokenText = token
                notification.body = body
                _ = expiring.accept(notification, now: t0)
            }
        }
        expiring.advance(to: t0 + 10 * second)
        #expect(expiring.counts.discardedExpired == 1 && expiring.returnsWaiting == 0 && expiring.engaged.opens == 0)
        #expect(expiring.returnsParked == 0)

        // FCM keeps a message a collapse key: a newer one with the key replaces the stored one,
        // its events with it.
        var fcm = settings
        fcm.service = .fcm
        var collapsing = DeviceFleet(settings: fcm)
        for at in [t0, t0 + second] {
            Array("fcm-device".utf8).withUnsafeBytes { token in
                Array(Self.poll.utf8).withUnsafeBytes { body in
                    var notification = DeviceNotification(token: TokenList.hash(token), collapse: 7)
                    notification.tokenText = token
                    notification.body = body
                    _ = collapsing.accept(notification, now: at)
                }
            }
        }
        #expect(collapsing.counts.discardedReplaced == 1 && collapsing.returnsParked == 2)
        collapsing.advance(to: t0 + 6 * second)
        #expect(collapsing.returnsParked == 0 && collapsing.returnsWaiting == 2 && collapsing.engaged.opens == 1)
    }

    /// An FCM fleet keeps a registration token whole (up to 200 bytes) in its events; APNs'
    /// 64 bytes cut a longer one, and count it.
    @Test func anFCMTokenIsKeptWhole() throws {
        let token = "dXpLcWhvT2V1Qk06APA91b" + String(repeating: "Fz-9_q", count: 24)
        #expect(token.utf8.count > 64 && token.utf8.count <= 200)
        for service in [PushService.fcm, .apns] {
            var settings = DeviceFleetSettings()
            settings.service = service
            settings.engagement.open = 1
            settings.engagement.openAfter = .fixed(.seconds(0))
            settings.engagement.returnTo = try ReturnURL(parsing: "http://127.0.0.1:9")
            var fleet = DeviceFleet(settings: settings)
            Self.deliver(&fleet, token: token, body: Self.poll, at: 1_000)
            var sent: [String] = []
            _ = fleet.takeReturns(now: .max, limit: .max) { sent.append(String(decoding: $0.token, as: UTF8.self)) }
            let kept = service == .fcm ? token : String(token.prefix(64))
            #expect(sent.count == 2 && sent.allSatisfy { $0 == kept }, "\(service)")
            #expect(fleet.returnsCut.tokens == (service == .fcm ? 0 : 2))
        }
    }

    /// Parked events: released in their chain's order at the delivery's time plus each one's
    /// delay, told with their counts; dropped ones never come out, and their slots are reused.
    @Test func parkedEventsAreReleasedOrDropped() {
        var events = ReturnEvents()
        func park(_ kind: ReturnEventKind, after: UInt64, token: String, onto chain: UInt32) -> UInt32 {
            Array(token.utf8).withUnsafeBytes { token in
                events.park(
                    kind,
                    after: after,
                    action: nil,
                    notCarried: kind == .open ? 0 : nil,
                    token: token,
                    id: nil,
                    path: nil,
                    onto: chain
                )
            }
        }
        let kept = park(
            .open,
            after: 7,
            token: "kept",
            onto: park(.media, after: 0, token: "kept", onto: ReturnEvents.noSlot)
        )
        let dropped = park(.open, after: 3, token: "dropped", onto: ReturnEvents.noSlot)
        #expect(events.parked == 3 && events.count == 0)
        events.drop(dropped)
        // Its slot is the next one filled.
        let again = park(.media, after: 0, token: "again", onto: ReturnEvents.noSlot)
        #expect(again == dropped && events.parked == 3)
        events.drop(again)
        var chain = kept
        var told: [(ReturnEventKind, Int?, Int?)] = []
        while let event = events.release(&chain, deliveredAt: 100) {
            told.append((event.kind, event.action, event.notCarried))
        }
        #expect(chain == ReturnEvents.noSlot && events.parked == 0 && events.count == 2)
        #expect(told.map(\.0) == [.open, .media] && told.map(\.2) == [0, nil])
        var out: [(UInt64, String)] = []
        _ = events.takeDue(now: .max, limit: .max) { out.append(($0.due, String(decoding: $0.token, as: UTF8.self))) }
        #expect(out.map(\.0) == [100, 107] && out.allSatisfy { $0.1 == "kept" })
        // docs/return-wave.md ("Memory") says 144 bytes an event behind the APNs sink, 280 behind FCM's.
        #expect(ReturnEvents.bytesPerEvent(tokenBytes: ReturnEvents.tokenBytes(for: .apns)) == 144)
        #expect(ReturnEvents.bytesPerEvent(tokenBytes: ReturnEvents.tokenBytes(for: .fcm)) == 280)
    }
}
