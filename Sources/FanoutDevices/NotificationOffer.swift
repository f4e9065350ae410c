import FanoutFCM

/// What an APNs payload offers its device's engagement, found in the body's bytes in place (no
/// copy, no allocation: scanned per delivered notification while engagement is on). Ranges are
/// byte offsets into the body scanned, valid while it is.
///
/// ```
///   {"aps":{…,"category":"poll","mutable-content":1},          category, mutableContent
///    "category-actions":[{"name":"OK","type":"url","value":"https://example.com/ok"},…],
///                                                               categoryActions: the array
///    "notification-action":{"type":"url","value":"https://…"},  defaultURL: its value
///    "iosImageUrl":"http://…/beacon.jpg"}                       mediaURL: the first http(s) URL
///                                                               of a picture, film or sound,
///                                                               at the top or one object down
/// ```
/// A body that is not JSON offers nothing (APNs' checks answer it before the fleet sees it).
package struct NotificationOffer: Equatable {
    package var mutableContent = false
    /// The `category-actions` array, brackets included.
    package var categoryActions: Range<Int>?
    /// `notification-action`'s `value`: the URL the default action opens (the string's content).
    package var defaultURL: Range<Int>?
    /// The attachment the service extension downloads (the string's content).
    package var mediaURL: Range<Int>?
    /// `aps.category`: the category whose actions the app registered (the string's content).
    package var category: Range<Int>?

    package init() {}

    package static func scan(_ body: UnsafeRawBufferPointer) -> NotificationOffer {
        var offer = NotificationOffer()
        let json = JSONScan(body)
        _ = json.members(of: 0) { key, value in
            if json.equals(key, "message") {
                offer = scanFCM(json, message: value)
                return false
            }
            if json.equals(key, "aps") {
                _ = json.members(of: value) { key, value in
                    if json.equals(key, "mutable-content") { offer.mutableContent = json.literal(value, "1") }
                    if json.equals(key, "category") { offer.category = json.string(value) }
                    return true
                }
            } else if json.equals(key, "category-actions") {
                if let end = json.end(of: value), body[value] == UInt8(ascii: "[") {
                    offer.categoryActions = value..<end
                }
            } else if json.equals(key, "notification-action") {
                _ = json.members(of: value) { key, value in
                    if json.equals(key, "value"), let url = json.string(value), json.isURL(url) {
                        offer.defaultURL = url
                    }
                    return true
                }
            } else if offer.mediaURL == nil {
                offer.mediaURL = json.mediaURL(value)
                if offer.mediaURL == nil, body[value] == UInt8(ascii: "{") {
                    _ = json.members(of: value) { _, value in
                        offer.mediaURL = json.mediaURL(value)
                        return offer.mediaURL == nil
                    }
                }
            }
            return true
        }
        return offer
    }

    /// An FCM v1 send (`{"message":{…}}`, the FCM sink's): a notification message's image —
    /// `notification.image`, or `android.notification.image` over it — is downloaded when
    /// Android shows it, at delivery (as an iOS service extension's media); the app's
    /// `android.notification.click_action` stands for the category a category file names.
    ///
    /// ```
    ///   {"message":{"token":"…","notification":{"title":"…","image":"https://…/a.jpg"},
    ///     "android":{"notification":{"click_action":"poll","image":"https://…/b.jpg"}}}}
    /// ```
    static func scanFCM(_ json: JSONScan, message: Int) -> NotificationOffer {
        var offer = NotificationOffer()
        func image(in notification: Int) {
            _ = json.members(of: notification) { key, value in
                if json.equals(key, "image"), let url = json.string(value), json.isURL(url) {
                    offer.mediaURL = url
                    offer.mutableContent = true
                } else if json.equals(key, "click_action") {
                    offer.category = json.string(value)
                }
                return true
            }
        }
        _ = json.members(of: message) { key, value in
            if json.equals(key, "notification") {
                // The message-wide image, unless the Android block's came first.
                if offer.mediaURL == nil { image(in: value) }
            } else if json.equals(key, "android") {
                _ = json.members(of: value) { key, value in
                    if json.equals(key, "notification") { image(in: value) }
                    return true
                }
            }
            return true
        }
        return offer
    }

    /// Whether the payload's `category-actions` carry the action named `name`, and its `value`
    /// (a URL) when it has one: `nil` when it is not carried, `.some(nil)` when carried without one.
    package func action(named name: UnsafeRawBufferPointer, in body: UnsafeRawBufferPointer) -> Range<Int>?? {
        guard let actions = categoryActions else { return nil }
        let json = JSONScan(body)
        var found: Range<Int>?? = nil
        _ = json.elements(of: actions.lowerBound) { element in
            var named = false
            var url: Range<Int>?
            let whole = json.members(of: element) { key, value in
                if json.equals(key, "name"), let text = json.string(value) {
                    named =
                        text.count == name.count
                        && memcmp(body.baseAddress! + text.lowerBound, name.baseAddress!, name.count) == 0
                } else if json.equals(key, "value"), let text = json.string(value), json.isURL(text) {
                    url = text
                }
                return true
            }
            guard whole else { return false }
            if named { found = .some(url) }
            return !named
        }
        return found
    }
}

/// A payload walked in place for what `NotificationOffer` needs: objects' members and arrays'
/// elements by where their values start, on FCM's `JSONCursor` (one JSON walker for the
/// project), and the URLs and media a device acts on. Strings are ranges of their undecoded
/// content; every walk stops at the first byte that is not JSON.
struct JSONScan {
    let bytes: UnsafeRawBufferPointer

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    /// The content of the string at `index` (at its opening quote).
    func string(_ index: Int) -> Range<Int>? {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
        var cursor = JSONCursor(bytes, at: index)
        return cursor.string()
    }

    /// Where the value at `index` ends (one past its last byte).
    func end(of index: Int) -> Int? {
        var cursor = JSONCursor(bytes, at: index)
        return cursor.skipValue() ? cursor.index : nil
    }

    /// Calls `body` with each member's key (the string's content) and where its value starts,
    /// for the object at `index` (after any blanks), while `body` returns `true`; `false` when the
    /// walk stopped early or the bytes are not an object.
    func members(of index: Int, _ body: (Range<Int>, Int) -> Bool) -> Bool {
        var cursor = JSONCursor(bytes, at: index)
        let (entered, empty) = cursor.enterObject()
        guard entered else { return false }
        if empty { return true }
        while true {
            guard let key = cursor.key(), cursor.kind() != nil else { return false }
            let value = cursor.index
            guard cursor.skipValue(), body(key, value), let more = cursor.nextMember() else { return false }
            if !more { return true }
        }
    }

    /// Calls `body` with where each element starts, for the array at `index`, while it returns `true`.
    func elements(of index: Int, _ body: (Int) -> Bool) -> Bool {
        var cursor = JSONCursor(bytes, at: index)
        let (entered, empty) = cursor.enterArray()
        guard entered else { return false }
        if empty { return true }
        while true {
            guard cursor.kind() != nil else { return false }
            let element = cursor.index
            guard cursor.skipValue(), body(element), let more = cursor.nextElement() else { return false }
            if !more { return true }
        }
    }

    func equals(_ range: Range<Int>, _ text: StaticString) -> Bool {
        range.count == text.utf8CodeUnitCount
            && memcmp(bytes.baseAddress! + range.lowerBound, text.utf8Start, range.count) == 0
    }

    /// Whether the scalar at `index` is exactly `text` (`1`, `true`).
    func literal(_ index: Int, _ text: StaticString) -> Bool {
        guard let end = end(of: index) else { return false }
        return equals(index..<end, text)
    }

    /// Whether the string content `range` starts `http://` or `https://`.
    func isURL(_ range: Range<Int>) -> Bool { schemeLength(range) != nil }

    /// The length of the string's `http://` or `https://`, written plainly or with JSON's
    /// escaped slashes (`https:\/\/`, as PHP writes every URL).
    private func schemeLength(_ range: Range<Int>) -> Int? {
        for scheme in Self.schemes where range.count > scheme.utf8CodeUnitCount {
            if equals(range.lowerBound..<(range.lowerBound + scheme.utf8CodeUnitCount), scheme) {
                return scheme.utf8CodeUnitCount
            }
        }
        return nil
    }

    /// The schemes a URL starts with, made once (a literal array here would be made per call).
    private static let schemes: [StaticString] = ["https://", "http://", #"https:\/\/"#, #"http:\/\/"#]

    /// The value at `index` when it is a string holding an http(s) URL of a picture, film or
    /// sound: its path (before any query) ends in one of `mediaExtensions`.
    func mediaURL(_ index: Int) -> Range<Int>? {
        guard let url = string(index), isURL(url) else { return nil }
        var end = url.lowerBound
        while end < url.upperBound, bytes[end] != UInt8(ascii: "?"), bytes[end] != UInt8(ascii: "#") { end += 1 }
        var dot = end
        while dot > url.lowerBound, bytes[dot - 1] != UInt8(ascii: "."), bytes[dot - 1] != UInt8(ascii: "/") {
            dot -= 1
        }
        guard dot > url.lowerBound, bytes[dot - 1] == UInt8(ascii: "."), end - dot <= 4, end > dot else { return nil }
        var word: UInt32 = 0
        for at in dot..<end { word = word << 8 | UInt32(bytes[at] | 0x20) }
        return Self.mediaExtensions.contains(word) ? url : nil
    }

    /// The extensions of the files a service extension attaches (`UNNotificationAttachment`'s
    /// types: images, audio, video), each as its lowercase bytes in one word.
    static let mediaExtensions: Set<UInt32> = Set(
        ["jpg", "jpeg", "png", "gif", "heic", "webp", "mp3", "m4a", "wav", "aiff", "aac", "mp4", "m4v", "mov", "mpeg"]
            .map { $0.utf8.reduce(UInt32(0)) { $0 << 8 | UInt32($1) } }
    )

    /// The path and query of the URL whose content is `range` (`/` when it has none): where it is
    /// asked for at the backend.
    func pathOfURL(_ range: Range<Int>) -> Range<Int> {
        let start = range.lowerBound + (schemeLength(range) ?? 0)
        var at = start
        while at < range.upperBound, bytes[at] != UInt8(ascii: "/") {
            // `\/`: JSON's escaped slash, as PHP writes every URL.
            if bytes[at] == UInt8(ascii: "\\"), at + 1 < range.upperBound, bytes[at + 1] == UInt8(ascii: "/") { break }
            at += 1
        }
        return at..<range.upperBound
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
