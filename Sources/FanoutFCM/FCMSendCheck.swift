/// Reads an FCM HTTP v1 send's body and checks it as FCM does (docs/fcm.md, "Message" and
/// "Validation"): the fields and their types, exactly one target, string data values and no
/// reserved data key, the size limit, the TTL's range, a topic's and an analytics label's form.
/// Every refusal is a 400 INVALID_ARGUMENT `FCMError`: the first one met, or `malformedJSON`
/// when the body is not JSON at all; what is not checked here (the token's registration,
/// quotas, credentials) is the sink's.
///
/// Both spellings of every field are read (`collapse_key` and `collapseKey`: proto3's JSON
/// mapping). Free-form objects (`apns.payload`, `webpush.notification`, `android.notification`,
/// the `fcm_options` of `apns` and `webpush`) are checked to be JSON objects and no further.
/// In place: the body is read once, and nothing is allocated unless it is refused or a key is
/// written with escapes (compared decoded).
public enum FCMSendCheck {
    /// "4096 bytes for most messages, or 2048 bytes in the case of messages to topics"
    /// (conditions address topics too: counted as topic messages, our assumption).
    public static let messageLimit = 4096
    public static let topicMessageLimit = 2048
    /// The longest `android.ttl`: four weeks, in seconds.
    public static let longestTTL = 2_419_200

    /// The send `body` asks for, or why FCM refuses it.
    public static func check(_ body: UnsafeRawBufferPointer) -> Result<FCMSend, FCMError> {
        var checker = Checker(cursor: JSONCursor(body))
        do {
            try checker.checkBody()
            return .success(checker.send)
        } catch {
            // Google parses the JSON before it looks at a field: a body that is not JSON is
            // refused as such, whatever field went wrong before the parse error. (A second
            // pass, on the way to a refusal only.)
            var whole = JSONCursor(body)
            guard error == .malformedJSON || (whole.skipValue() && whole.atEnd()) else {
                return .failure(.malformedJSON)
            }
            return .failure(error)
        }
    }
}

// MARK: Reading

extension FCMSend.TargetKind {
    /// The target's bit in `Checker.targets`.
    fileprivate var bit: UInt8 {
        switch self {
        case .token: 1
        case .fid: 2
        case .topic: 4
        case .condition: 8
        }
    }
}

/// One pass over a body, field by field, keeping what the send asks for.
private struct Checker {
    var cursor: JSONCursor
    var send = FCMSend()
    // A field given twice counts once, as its last occurrence ("the last occurrence takes
    // precedence", docs/fcm.md): each is assigned, not added up, and `message`, its
    // `notification` and its `android` start over when they come again. (A key twice in one
    // data map is the exception: both are counted, which can only overstate the size.)
    /// The targets set, a bit each (`TargetKind.bit`).
    private var targets: UInt8 = 0
    private var messageData = 0
    private var androidData: Int?
    /// The notification's title, body and image, decoded UTF-8 bytes.
    private var notificationFields = (title: 0, body: 0, image: 0)

    /// Whether the key being read was written with escapes (`is` then compares it decoded).
    private var keyEscaped = false
    /// `validate_only` as last given, kept when `message` starts over after it.
    private var validateOnlyGiven = false

    init(cursor: JSONCursor) { self.cursor = cursor }

    mutating func checkBody() throws(FCMError) {
        var sawMessage = false
        try members(of: "") { checker, key throws(FCMError) in
            if checker.is(key, "validate_only", "validateOnly") {
                checker.validateOnlyGiven = try checker.bool(at: "validate_only")
                checker.send.validateOnly = checker.validateOnlyGiven
            } else if checker.is(key, "message") {
                try checker.checkMessage()
                sawMessage = true
            } else {
                return false
            }
            return true
        }
        guard cursor.atEnd() else { throw .malformedJSON }
        guard sawMessage else { throw .invalidField("message", "The message is not set.") }
        // What holds of the message as a whole is judged once every field is read: a field given
        // again later replaces the first.
        guard targets != 0 else { throw .noTarget }
        guard targets.nonzeroBitCount == 1 else {
            throw .moreThanOneTarget(FCMSend.TargetKind.allCases.filter { targets & $0.bit != 0 }.map(\.rawValue))
        }
        send.countedBytes =
            (androidData ?? messageData) + notificationFields.title + notificationFields.body + notificationFields.image
        let limit =
            send.targetKind == .token || send.targetKind == .fid
            ? FCMSendCheck.messageLimit : FCMSendCheck.topicMessageLimit
        guard send.countedBytes <= limit else { throw .tooLarge }
    }

    private mutating func checkMessage() throws(FCMError) {
        targets = 0
        messageData = 0
        androidData = nil
        notificationFields = (0, 0, 0)
        send = FCMSend()
        send.validateOnly = validateOnlyGiven
        try members(of: "message") { checker, key throws(FCMError) in
            if let kind = checker.targetKind(key) {
                try checker.target(kind)
            } else if checker.is(key, "data") {
                checker.messageData = try checker.stringMap(at: "message.data", isData: true)
            } else if checker.is(key, "notification") {
                checker.send.hasNotification = true
                try checker.checkNotification()
            } else if checker.is(key, "android") {
                try checker.checkAndroid()
            } else if checker.is(key, "apns") {
                try checker.checkAPNs()
            } else if checker.is(key, "webpush") {
                try checker.checkWebpush()
            } else if checker.is(key, "fcm_options", "fcmOptions") {
                try checker.checkFCMOptions(at: "message.fcm_options")
            } else if checker.is(key, "name") {
                _ = try checker.string(at: "message.name")
            } else {
                return false
            }
            return true
        }
    }

    /// The target `key` names, if it names one.
    private func targetKind(_ key: Range<Int>) -> FCMSend.TargetKind? {
        if `is`(key, "token") { return .token }
        if `is`(key, "fid") { return .fid }
        if `is`(key, "topic") { return .topic }
        if `is`(key, "condition") { return .condition }
        return nil
    }

    private mutating func target(_ kind: FCMSend.TargetKind) throws(FCMError) {
        let value = try string(at: "message.\(kind.rawValue)")
        targets |= kind.bit
        send.targetKind = kind
        send.target = value
        if kind == .topic, !Self.isTopicName(cursor.bytes, value) {
            throw .invalidField("message.topic", "Invalid topic name \(text(value)).")
        }
    }

    private mutating func checkNotification() throws(FCMError) {
        notificationFields = (0, 0, 0)
        try members(of: "message.notification") { checker, key throws(FCMError) in
            if checker.is(key, "title") {
                checker.notificationFields.title = try checker.decodedString(at: "message.notification.title")
            } else if checker.is(key, "body") {
                checker.notificationFields.body = try checker.decodedString(at: "message.notification.body")
            } else if checker.is(key, "image") {
                checker.notificationFields.image = try checker.decodedString(at: "message.notification.image")
            } else {
                return false
            }
            return true
        }
    }

    private mutating func checkAndroid() throws(FCMError) {
        androidData = nil
        send.priority = nil
        send.ttlSeconds = nil
        send.collapseKey = nil
        try members(of: "message.android") { checker, key throws(FCMError) in
            let bytes = checker.cursor.bytes
            if checker.is(key, "collapse_key", "collapseKey") {
                checker.send.collapseKey = try checker.string(at: "message.android.collapse_key")
            } else if checker.is(key, "priority") {
                try checker.priority()
            } else if checker.is(key, "ttl") {
                try checker.ttl()
            } else if checker.is(key, "restricted_package_name", "restrictedPackageName") {
                _ = try checker.string(at: "message.android.restricted_package_name")
            } else if checker.is(key, "data") {
                checker.androidData = try checker.stringMap(at: "message.android.data", isData: true)
            } else if checker.is(key, "notification") {
                checker.send.hasNotification = true
                try checker.object(at: "message.android.notification")
            } else if checker.is(key, "fcm_options", "fcmOptions") {
                try checker.checkFCMOptions(at: "message.android.fcm_options")
            } else if checker.is(key, "direct_boot_ok", "directBootOk")
                || checker.is(key, "bandwidth_constrained_ok", "bandwidthConstrainedOk")
                || checker.is(key, "restricted_satellite_ok", "restrictedSatelliteOk")
            {
                _ = try checker.bool(at: "message.android.\(Self.text(bytes, key))")
            } else {
                return false
            }
            return true
        }
    }

    /// `apns`: its headers a map of strings, its payload and options free-form objects.
    private mutating func checkAPNs() throws(FCMError) {
        try members(of: "message.apns") { checker, key throws(FCMError) in
            let bytes = checker.cursor.bytes
            if checker.is(key, "headers") {
                _ = try checker.stringMap(at: "message.apns.headers", isData: false)
            } else if checker.is(key, "live_activity_token", "liveActivityToken") {
                _ = try checker.string(at: "message.apns.live_activity_token")
            } else if checker.is(key, "payload") || checker.is(key, "fcm_options", "fcmOptions") {
                try checker.object(at: "message.apns.\(Self.text(bytes, key))")
            } else {
                return false
            }
            return true
        }
    }

    /// `webpush`: its headers and data maps of strings, its notification and options free-form
    /// objects.
    private mutating func checkWebpush() throws(FCMError) {
        try members(of: "message.webpush") { checker, key throws(FCMError) in
            let bytes = checker.cursor.bytes
            if checker.is(key, "headers") || checker.is(key, "data") {
                _ = try checker.stringMap(at: "message.webpush.\(Self.text(bytes, key))", isData: false)
            } else if checker.is(key, "notification") || checker.is(key, "fcm_options", "fcmOptions") {
                try checker.object(at: "message.webpush.\(Self.text(bytes, key))")
            } else {
                return false
            }
            return true
        }
    }

    private mutating func checkFCMOptions(at path: StaticString) throws(FCMError) {
        try members(of: "\(path)") { checker, key throws(FCMError) in
            guard checker.is(key, "analytics_label", "analyticsLabel") else { return false }
            let label = try checker.string(at: "\(path).analytics_label")
            guard Self.isAnalyticsLabel(checker.cursor.bytes, label) else {
                throw .invalidField("\(path).analytics_label", "Invalid analytics label \(checker.text(label)).")
            }
            return true
        }
    }

    /// `normal` or `high`, in any case (firebase-admin sends them in lower case).
    private mutating func priority() throws(FCMError) {
        let start = cursor.index
        guard cursor.kind() == .string, let value = cursor.string() else {
            throw invalidValue(
                at: "message.android.priority",
                from: start,
                "google.firebase.fcm.v1.AndroidMessagePriority"
            )
        }
        if equalsIgnoringCase(value, "normal") {
            send.priority = .normal
        } else if equalsIgnoringCase(value, "high") {
            send.priority = .high
        } else {
            throw invalidValue(
                at: "message.android.priority",
                from: start,
                "google.firebase.fcm.v1.AndroidMessagePriority"
            )
        }
    }

    /// A protobuf Duration, `"3600s"` or `"3.5s"`: whole seconds at most four weeks (rounded
    /// down), nine fraction digits at most.
    private mutating func ttl() throws(FCMError) {
        let start = cursor.index
        let type = "type.googleapis.com/google.protobuf.Duration"
        guard cursor.kind() == .string, let value = cursor.string(), value.count >= 2,
            cursor.bytes[value.upperBound - 1] == UInt8(ascii: "s")
        else { throw invalidValue(at: "message.android.ttl", from: start, type) }
        var seconds = 0
        var at = value.lowerBound
        while at < value.upperBound - 1, JSONCursor.isDigit(cursor.bytes[at]) {
            // Saturated past four weeks: a longer TTL is refused as out of range, not as malformed.
            seconds = min(seconds * 10 + Int(cursor.bytes[at] - UInt8(ascii: "0")), FCMSendCheck.longestTTL + 1)
            at += 1
        }
        guard at > value.lowerBound else { throw invalidValue(at: "message.android.ttl", from: start, type) }
        var fraction = false
        if at < value.upperBound - 1, cursor.bytes[at] == UInt8(ascii: ".") {
            let digits = value.upperBound - 1 - (at + 1)
            guard (1...9).contains(digits),
                (at + 1..<value.upperBound - 1).allSatisfy({ JSONCursor.isDigit(cursor.bytes[$0]) })
            else { throw invalidValue(at: "message.android.ttl", from: start, type) }
            fraction = (at + 1..<value.upperBound - 1).contains { cursor.bytes[$0] != UInt8(ascii: "0") }
            at = value.upperBound - 1
        }
        guard at == value.upperBound - 1 else { throw invalidValue(at: "message.android.ttl", from: start, type) }
        guard seconds < FCMSendCheck.longestTTL || (seconds == FCMSendCheck.longestTTL && !fraction) else {
            throw .invalidField(
                "message.android.ttl",
                "The TTL is between 0 and 2419200s (4 weeks), not \(text(value))."
            )
        }
        send.ttlSeconds = seconds
    }

    // MARK: Values

    /// A map of strings; its keys' and values' bytes. `isData`: FCM's data map, some of whose
    /// keys FCM reserves.
    private mutating func stringMap(at path: @autoclosure () -> String, isData: Bool) throws(FCMError) -> Int {
        var bytes = 0
        var index = 0
        try members(of: path(), known: true) { checker, key throws(FCMError) in
            if isData, Self.isReserved(checker.cursor.bytes, key) {
                throw .invalidField(path(), "Invalid data key \(checker.text(key)): it is reserved.")
            }
            let start = checker.cursor.index
            if checker.cursor.kind() == .string, let value = checker.cursor.string() {
                bytes +=
                    JSONCursor.decodedLength(checker.cursor.bytes, key)
                    + JSONCursor.decodedLength(checker.cursor.bytes, value)
            } else {
                guard checker.cursor.skipValue() else { throw .malformedJSON }
                let written = checker.raw(from: start)
                throw .dataValueNotString(in: path(), index: index, value: written)
            }
            index += 1
            return true
        }
        return bytes
    }

    /// A string's decoded UTF-8 length, what FCM's size limit counts.
    private mutating func decodedString(at path: @autoclosure () -> String) throws(FCMError) -> Int {
        JSONCursor.decodedLength(cursor.bytes, try string(at: path()))
    }

    private mutating func string(at path: @autoclosure () -> String) throws(FCMError) -> Range<Int> {
        let start = cursor.index
        guard cursor.kind() == .string, let value = cursor.string() else {
            throw invalidValue(at: path(), from: start, "TYPE_STRING")
        }
        return value
    }

    private mutating func bool(at path: @autoclosure () -> String) throws(FCMError) -> Bool {
        let start = cursor.index
        guard cursor.kind() == .bool, let value = cursor.bool() else {
            throw invalidValue(at: path(), from: start, "TYPE_BOOL")
        }
        return value
    }

    /// A JSON object whose members are not checked.
    private mutating func object(at path: @autoclosure () -> String) throws(FCMError) {
        let start = cursor.index
        guard cursor.kind() == .object else { throw invalidValue(at: path(), from: start, "TYPE_MESSAGE") }
        guard cursor.skipValue() else { throw .malformedJSON }
    }

    /// Reads an object's members, handing each key to `visit` with the cursor at its value;
    /// `visit` reads the value and says whether it knew the key. `known`: every key is.
    private mutating func members(
        of path: @autoclosure () -> String,
        known: Bool = false,
        _ visit: (inout Checker, Range<Int>) throws(FCMError) -> Bool
    ) throws(FCMError) {
        let start = cursor.index
        guard cursor.kind() == .object else {
            let path = path()
            if path.isEmpty { throw .malformedJSON }
            throw invalidValue(at: path, from: start, "TYPE_MESSAGE")
        }
        let (_, empty) = cursor.enterObject()
        if empty { return }
        while true {
            guard let key = cursor.key() else { throw .malformedJSON }
            keyEscaped = cursor.lastStringEscaped
            guard try visit(&self, key) || known else { throw .unknownField(text(key), at: path()) }
            guard let more = cursor.nextMember() else { throw .malformedJSON }
            if !more { return }
        }
    }

    /// The refusal of the value starting at `start`, quoted as written (or what of it there is).
    private mutating func invalidValue(at path: String, from start: Int, _ type: String) -> FCMError {
        cursor = JSONCursor(cursor.bytes, at: start)
        guard cursor.skipValue() else { return .malformedJSON }
        return .invalidValue(at: path, expected: type, raw(from: start))
    }

    // MARK: Bytes

    /// Whether `key` is `name` (or `other`, a field's second spelling): two overloads, not a
    /// variadic list, so that a comparison allocates no array.
    /// A key written with escapes (`"to\u006ben"`, known from its reading: `keyEscaped`) is
    /// compared decoded; any other key is compared as written, not scanned again.
    private func `is`(_ key: Range<Int>, _ name: StaticString) -> Bool {
        let written =
            key.count == name.utf8CodeUnitCount
            && (0..<key.count).allSatisfy { cursor.bytes[key.lowerBound + $0] == name.utf8Start[$0] }
        guard !written, keyEscaped else { return written }
        return JSONCursor.decoded(cursor.bytes, key).elementsEqual(
            UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
        )
    }

    private func `is`(_ key: Range<Int>, _ name: StaticString, _ other: StaticString) -> Bool {
        `is`(key, name) || `is`(key, other)
    }

    private func equalsIgnoringCase(_ range: Range<Int>, _ word: StaticString) -> Bool {
        range.count == word.utf8CodeUnitCount
            && (0..<range.count).allSatisfy { cursor.bytes[range.lowerBound + $0] | 0x20 == word.utf8Start[$0] | 0x20 }
    }

    private func text(_ range: Range<Int>) -> String { Self.text(cursor.bytes, range) }

    static func text(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> String {
        String(decoding: UnsafeRawBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }

    /// What lies between `start` and the cursor, trimmed, cut at 64 bytes.
    private func raw(from start: Int) -> String {
        var range = start..<cursor.index
        while let first = range.first, [UInt8(ascii: " "), 0x0A, 0x0D, 0x09].contains(cursor.bytes[first]) {
            range = range.dropFirst()
        }
        let shown = range.count > 64 ? range.lowerBound..<range.lowerBound + 64 : range
        return text(shown) + (shown.count < range.count ? "…" : "")
    }

    /// `from`, `message_type`, and keys starting `google.` or `gcm.` (docs/fcm.md: the sources
    /// disagree; our assumption).
    static func isReserved(_ bytes: UnsafeRawBufferPointer, _ key: Range<Int>) -> Bool {
        if JSONCursor.hasEscape(bytes, key) { return isReserved(JSONCursor.decoded(bytes, key)) }
        return isReserved(UnsafeRawBufferPointer(rebasing: bytes[key]))
    }

    static func isReserved(_ key: some Collection<UInt8>) -> Bool {
        key.elementsEqual("from".utf8) || key.elementsEqual("message_type".utf8)
            || key.starts(with: "google.".utf8) || key.starts(with: "gcm.".utf8)
    }

    /// `^(/topics/)?(private/)?[a-zA-Z0-9-_.~%]+$` (firebase-admin-go's pattern).
    static func isTopicName(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> Bool {
        var text = UnsafeRawBufferPointer(rebasing: bytes[range])[...]
        if text.starts(with: "/topics/".utf8) { text = text.dropFirst(8) }
        if text.starts(with: "private/".utf8) { text = text.dropFirst(8) }
        return !text.isEmpty && text.allSatisfy(isNameByte)
    }

    /// `^[a-zA-Z0-9-_.~%]{1,50}$`
    static func isAnalyticsLabel(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> Bool {
        (1...50).contains(range.count) && range.allSatisfy { isNameByte(bytes[$0]) }
    }

    static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."),
            UInt8(ascii: "~"), UInt8(ascii: "%"):
            true
        default: false
        }
    }
}
