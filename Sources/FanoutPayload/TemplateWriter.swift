/// Compiles an `APNsPayload` into static bytes and slots, in the documented key order (see
/// `APNsPayload`). Runs once per template, so clarity wins over speed here.
struct TemplateWriter {
    private(set) var bytes: [UInt8] = []
    private(set) var slots: [CompiledPayload.Slot] = []

    mutating func write(_ payload: APNsPayload) throws(PayloadTemplateError) {
        var object = ObjectState()
        raw("{")
        key("aps", &object)
        try write(payload.aps)
        let actions = payload.dynamicActions
        if let categoryActions = actions.categoryActions {
            key("category-actions", &object)
            raw("[")
            for (position, action) in categoryActions.enumerated() {
                if position > 0 { raw(",") }
                try write(action, path: "category-actions[\(position)]")
            }
            raw("]")
        }
        if let action = actions.notificationAction {
            key("notification-action", &object)
            try write(action, path: "notification-action")
        }
        if let name = actions.categoryName { text(name, key: "category-name", &object) }
        for member in payload.customKeys {
            if member.key == "aps" || Self.dynamicActionKeys.contains(member.key) {
                throw PayloadTemplateError(
                    .invalidPayload,
                    "the custom key \"\(member.key)\" would repeat a key the payload model already writes"
                )
            }
            key(member.key, &object)
            try value(member.value, path: member.key)
        }
        raw("}")
    }

    /// An FCM send request's members, as given (`PayloadDecoder.decodeFCMSend`).
    mutating func write(fcmSend members: [JSONMember]) throws(PayloadTemplateError) {
        try object(members, path: "")
    }

    private static let dynamicActionKeys: Set<String> = ["category-actions", "notification-action", "category-name"]

    private mutating func write(_ aps: APNsPayload.APS) throws(PayloadTemplateError) {
        var object = ObjectState()
        raw("{")
        if let alert = aps.alert {
            switch alert {
            case .text(let alertText): text(alertText, key: "alert", &object)
            case .fields(let fields):
                key("alert", &object)
                write(fields)
            }
        }
        if let badge = aps.badge { try integer(badge, key: "badge", path: "aps.badge", &object) }
        if let sound = aps.sound {
            switch sound {
            case .named(let name): text(name, key: "sound", &object)
            case .critical(let critical):
                key("sound", &object)
                try write(critical)
            }
        }
        if let threadID = aps.threadID { text(threadID, key: "thread-id", &object) }
        if let category = aps.category { text(category, key: "category", &object) }
        if let flag = aps.contentAvailable { literal(flag, key: "content-available", &object) }
        if let flag = aps.mutableContent { literal(flag, key: "mutable-content", &object) }
        if let target = aps.targetContentID { text(target, key: "target-content-id", &object) }
        if let level = aps.interruptionLevel { text(TemplateText(level.rawValue), key: "interruption-level", &object) }
        if let score = aps.relevanceScore {
            key("relevance-score", &object)
            try number(score, path: "aps.relevance-score", range: 0...1)
        }
        if let criteria = aps.filterCriteria { text(criteria, key: "filter-criteria", &object) }
        if let date = aps.staleDate { try integer(date, key: "stale-date", path: "aps.stale-date", &object) }
        if let state = aps.contentState {
            key("content-state", &object)
            try value(.object(state), path: "aps.content-state")
        }
        if let timestamp = aps.timestamp { try integer(timestamp, key: "timestamp", path: "aps.timestamp", &object) }
        if let event = aps.event { text(TemplateText(event.rawValue), key: "event", &object) }
        if let date = aps.dismissalDate {
            try integer(date, key: "dismissal-date", path: "aps.dismissal-date", &object)
        }
        if let type = aps.attributesType { text(type, key: "attributes-type", &object) }
        if let attributes = aps.attributes {
            key("attributes", &object)
            try value(.object(attributes), path: "aps.attributes")
        }
        if let flag = aps.inputPushToken { literal(flag, key: "input-push-token", &object) }
        if let channel = aps.inputPushChannel { text(channel, key: "input-push-channel", &object) }
        if let changed = aps.contentChanged {
            key("content-changed", &object)
            raw(changed ? "true" : "false")
        }
        for member in aps.otherKeys {
            key(member.key, &object)
            try value(member.value, path: "aps.\(member.key)")
        }
        raw("}")
    }

    private mutating func write(_ alert: APNsPayload.AlertFields) {
        var object = ObjectState()
        raw("{")
        if let title = alert.title { text(title, key: "title", &object) }
        if let subtitle = alert.subtitle { text(subtitle, key: "subtitle", &object) }
        if let body = alert.body { text(body, key: "body", &object) }
        if let image = alert.launchImage { text(image, key: "launch-image", &object) }
        if let key = alert.titleLocKey { text(key, key: "title-loc-key", &object) }
        if let args = alert.titleLocArgs { texts(args, key: "title-loc-args", &object) }
        if let key = alert.subtitleLocKey { text(key, key: "subtitle-loc-key", &object) }
        if let args = alert.subtitleLocArgs { texts(args, key: "subtitle-loc-args", &object) }
        if let key = alert.locKey { text(key, key: "loc-key", &object) }
        if let args = alert.locArgs { texts(args, key: "loc-args", &object) }
        raw("}")
    }

    private mutating func write(_ sound: APNsPayload.CriticalSound) throws(PayloadTemplateError) {
        var object = ObjectState()
        raw("{")
        if let critical = sound.critical { literal(critical, key: "critical", &object) }
        if let name = sound.name { text(name, key: "name", &object) }
        if let volume = sound.volume {
            key("volume", &object)
            try number(.literal(volume), path: "aps.sound.volume", range: 0...1)
        }
        raw("}")
    }

    private mutating func write(_ action: APNsPayload.NotificationAction, path: String) throws(PayloadTemplateError) {
        var object = ObjectState()
        raw("{")
        if let name = action.name { text(name, key: "name", &object) }
        if let type = action.type { text(type, key: "type", &object) }
        if let value = action.value { text(value, key: "value", &object) }
        for member in action.otherMembers {
            key(member.key, &object)
            try value(member.value, path: "\(path).\(member.key)")
        }
        raw("}")
    }

    // MARK: Values

    private mutating func value(_ value: JSONValue, path: String) throws(PayloadTemplateError) {
        switch value {
        case .null: raw("null")
        case .bool(let flag): raw(flag ? "true" : "false")
        case .integer(let integer): decimal(integer)
        case .number(let number): try self.number(.literal(number), path: path, range: nil)
        case .string(let text): quoted(text)
        case .array(let elements):
            raw("[")
            for (position, element) in elements.enumerated() {
                if position > 0 { raw(",") }
                try self.value(element, path: "\(path)[\(position)]")
            }
            raw("]")
        case .object(let members):
            try object(members, path: path)
        case .placeholder(let placeholder, let type):
            if type == .string {
                quoted(.placeholder(placeholder))
            } else {
                try slot(placeholder, type, path: path)
            }
        }
    }

    /// An object's members in order, each key once; `path` names it in errors ("": the
    /// document itself).
    private mutating func object(_ members: [JSONMember], path: String) throws(PayloadTemplateError) {
        var object = ObjectState()
        raw("{")
        var seen = Set<String>()
        for member in members {
            guard seen.insert(member.key).inserted else {
                let owner = path.isEmpty ? "the document" : path
                throw PayloadTemplateError(.invalidPayload, "\(owner) has the key \"\(member.key)\" twice")
            }
            key(member.key, &object)
            try value(member.value, path: path.isEmpty ? member.key : "\(path).\(member.key)")
        }
        raw("}")
    }

    private mutating func integer(
        _ value: TemplateInteger,
        key name: String,
        path: String,
        _ object: inout ObjectState
    ) throws(PayloadTemplateError) {
        key(name, &object)
        switch value {
        case .literal(let integer): decimal(integer)
        // Every integer key APNs defines counts or dates from 1970: none is below 0.
        case .placeholder(let placeholder): try slot(placeholder, .int, path: path, nonNegative: true)
        }
    }

    private mutating func number(
        _ value: TemplateNumber,
        path: String,
        range: ClosedRange<Double>?
    ) throws(PayloadTemplateError) {
        switch value {
        case .placeholder(let placeholder):
            try slot(placeholder, .number, path: path)
        case .literal(let number):
            guard number.isFinite else {
                throw PayloadTemplateError(.unrepresentableNumber, "\(path) is \(number); JSON has no NaN or infinity")
            }
            if let range, !range.contains(number) {
                throw PayloadTemplateError(
                    .invalidPayload,
                    "\(path) must be from \(range.lowerBound) to \(range.upperBound), found \(number)"
                )
            }
            bytes.append(contentsOf: Self.shortestRoundTrip(number).utf8)
        }
    }

    /// Swift's `description` of a finite `Double` is its shortest round-trip form, and its
    /// syntax (`1.0`, `1e-07`, `5e-324`, `-0.0`) is already JSON's.
    static func shortestRoundTrip(_ number: Double) -> String {
        number.description
    }

    private mutating func slot(
        _ placeholder: Placeholder,
        _ type: Placeholder.ValueType,
        path: String,
        nonNegative: Bool = false
    ) throws(PayloadTemplateError) {
        if let mismatch = PlaceholderSyntax.mismatch(placeholder.source, type) {
            throw PayloadTemplateError(.invalidPlaceholder, "\(path): \(mismatch)")
        }
        if case .field(let index) = placeholder.source, index < 1 {
            throw PayloadTemplateError(.invalidPlaceholder, "\(path): fields are numbered from 1, not \(index)")
        }
        slots.append(
            CompiledPayload.Slot(
                offset: bytes.count,
                source: placeholder.source,
                type: type,
                nonNegative: nonNegative
            )
        )
    }

    // MARK: Bytes

    private struct ObjectState {
        var isFirst = true
    }

    private mutating func key(_ name: String, _ object: inout ObjectState) {
        if !object.isFirst { raw(",") }
        object.isFirst = false
        quoted(TemplateText(name))
        raw(":")
    }

    private mutating func text(_ value: TemplateText, key name: String, _ object: inout ObjectState) {
        key(name, &object)
        quoted(value)
    }

    private mutating func texts(_ values: [TemplateText], key name: String, _ object: inout ObjectState) {
        key(name, &object)
        raw("[")
        for (position, value) in values.enumerated() {
            if position > 0 { raw(",") }
            quoted(value)
        }
        raw("]")
    }

    private mutating func literal(_ integer: Int, key name: String, _ object: inout ObjectState) {
        key(name, &object)
        decimal(integer)
    }

    private mutating func quoted(_ text: TemplateText) {
        raw("\"")
        for part in text.parts {
            switch part {
            case .text(let string): escaped(string)
            case .placeholder(let placeholder):
                slots.append(CompiledPayload.Slot(offset: bytes.count, source: placeholder.source, type: .string))
            }
        }
        raw("\"")
    }

    private mutating func escaped(_ string: String) {
        var string = string
        string.withUTF8 { source in
            let start = bytes.count
            bytes.append(contentsOf: repeatElement(0, count: source.count * 6))
            let written = bytes.withUnsafeMutableBytes { buffer in
                // A Swift String is always valid UTF-8, so the escaper cannot refuse it.
                JSONWriting.escapedText(UnsafeRawBufferPointer(source), to: buffer.baseAddress! + start)!
            }
            bytes.removeLast(source.count * 6 - written)
        }
    }

    private mutating func decimal(_ integer: Int) {
        bytes.append(contentsOf: String(integer).utf8)
    }

    private mutating func raw(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }
}
