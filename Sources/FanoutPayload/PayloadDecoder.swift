/// Turns a parsed template file into an `APNsPayload`, checking every `aps` key's type and range
/// and naming the key path and source position of anything wrong.
struct PayloadDecoder {
    let source: SourceText
    let syntax: PlaceholderSyntax
    let allowUnknownAPSKeys: Bool

    func decode(_ root: SourceNode) throws(PayloadTemplateError) -> APNsPayload {
        guard case .object(let members) = root.value else {
            throw invalid("a notification is a JSON object with an \"aps\" key, found \(root.kindDescription)", root)
        }
        guard members.contains(where: { $0.key == "aps" }) else {
            throw invalid(
                "the payload has no \"aps\" dictionary; APNs requires one (custom keys go beside it)",
                root
            )
        }
        var payload = APNsPayload(aps: APNsPayload.APS())
        for member in members {
            let node = member.value
            switch member.key {
            case "aps":
                payload.aps = try decodeAPS(node)
            case "category-actions":
                payload.dynamicActions.categoryActions = try array(node, "category-actions") {
                    element,
                    path throws(PayloadTemplateError) in
                    let action = try decodeAction(element, path)
                    if action.name == nil {
                        throw invalid("\(path) needs a \"name\": it is the button's title", element)
                    }
                    return action
                }
            case "notification-action":
                payload.dynamicActions.notificationAction = try decodeAction(node, "notification-action")
            case "category-name":
                payload.dynamicActions.categoryName = try text(node, "category-name")
            default:
                payload.customKeys.append(JSONMember(member.key, try value(node)))
            }
        }
        return payload
    }

    /// An FCM HTTP v1 send request (docs/fcm.md, "Endpoint and request"): an object whose
    /// `message` is an object. Every value may hold placeholders; FCM's own rules are the
    /// service's to check (the send job checks one rendered sample with `FCMSendCheck`). A
    /// message naming no target (`token`, `fid`, `topic`, `condition`) gets `"token":
    /// "{{token}}"` as its first member: each device's request names it.
    func decodeFCMSend(_ root: SourceNode) throws(PayloadTemplateError) -> [JSONMember] {
        guard case .object(let members) = root.value else {
            throw invalid(
                "an FCM send is a JSON object with a \"message\" object ({\"message\": {\"notification\": …}}), found \(root.kindDescription)",
                root
            )
        }
        guard let message = members.last(where: { $0.key == "message" }) else {
            throw invalid(
                "the FCM send has no \"message\"; FCM requires one ({\"message\": {\"notification\": …}}): the request body, not the message alone",
                root
            )
        }
        guard case .object(let fields) = message.value.value else {
            throw invalid("message must be an object, found \(message.value.kindDescription)", message.value)
        }
        var decoded: [JSONMember] = []
        for member in members {
            guard member.key == "message" else {
                decoded.append(JSONMember(member.key, try value(member.value)))
                continue
            }
            var message: [JSONMember] = []
            let targets: Set<String> = ["token", "fid", "topic", "condition"]
            if !fields.contains(where: { targets.contains($0.key) }) {
                message.append(JSONMember("token", .string(.placeholder(Placeholder(.token)))))
            }
            for field in fields { message.append(JSONMember(field.key, try value(field.value))) }
            decoded.append(JSONMember("message", .object(message)))
        }
        return decoded
    }

    private func decodeAPS(_ node: SourceNode) throws(PayloadTemplateError) -> APNsPayload.APS {
        guard case .object(let members) = node.value else {
            throw invalid("aps must be an object, found \(node.kindDescription)", node)
        }
        var aps = APNsPayload.APS()
        for member in members {
            let node = member.value
            let path = "aps.\(member.key)"
            switch member.key {
            case "alert": aps.alert = try decodeAlert(node)
            case "badge": aps.badge = try integer(node, path, in: 0...Int.max)
            case "sound": aps.sound = try decodeSound(node)
            case "thread-id": aps.threadID = try text(node, path)
            case "category": aps.category = try text(node, path)
            case "content-available": aps.contentAvailable = try flag(node, path)
            case "mutable-content": aps.mutableContent = try flag(node, path)
            case "target-content-id": aps.targetContentID = try text(node, path)
            case "interruption-level":
                aps.interruptionLevel = try enumeration(node, path, APNsPayload.InterruptionLevel.self)
            case "relevance-score": aps.relevanceScore = try number(node, path, in: 0...1)
            case "filter-criteria": aps.filterCriteria = try text(node, path)
            case "stale-date": aps.staleDate = try integer(node, path, in: 0...Int.max)
            case "content-state": aps.contentState = try object(node, path)
            case "timestamp": aps.timestamp = try integer(node, path, in: 0...Int.max)
            case "event": aps.event = try enumeration(node, path, APNsPayload.LiveActivityEvent.self)
            case "dismissal-date": aps.dismissalDate = try integer(node, path, in: 0...Int.max)
            case "attributes-type": aps.attributesType = try text(node, path)
            case "attributes": aps.attributes = try object(node, path)
            case "input-push-token": aps.inputPushToken = try flag(node, path)
            case "input-push-channel": aps.inputPushChannel = try text(node, path)
            case "content-changed":
                guard case .bool(let changed) = node.value else {
                    throw invalid("\(path) must be true or false, found \(node.kindDescription)", node)
                }
                aps.contentChanged = changed
            default:
                guard allowUnknownAPSKeys else {
                    throw PayloadTemplateError(
                        .invalidPayload,
                        "unknown key \"\(member.key)\" in aps; custom keys belong beside aps, not in it "
                            + "(or allow unknown aps keys to pass it through)",
                        at: source.location(of: member.keyOffset)
                    )
                }
                aps.otherKeys.append(JSONMember(member.key, try value(node)))
            }
        }
        return aps
    }

    private func decodeAlert(_ node: SourceNode) throws(PayloadTemplateError) -> APNsPayload.Alert {
        if case .string = node.value { return .text(try text(node, "aps.alert")) }
        guard case .object(let members) = node.value else {
            throw invalid("aps.alert must be a string or an object, found \(node.kindDescription)", node)
        }
        var alert = APNsPayload.AlertFields()
        for member in members {
            let node = member.value
            let path = "aps.alert.\(member.key)"
            switch member.key {
            case "title": alert.title = try text(node, path)
            case "subtitle": alert.subtitle = try text(node, path)
            case "body": alert.body = try text(node, path)
            case "launch-image": alert.launchImage = try text(node, path)
            case "title-loc-key": alert.titleLocKey = try text(node, path)
            case "title-loc-args": alert.titleLocArgs = try textArray(node, path)
            case "subtitle-loc-key": alert.subtitleLocKey = try text(node, path)
            case "subtitle-loc-args": alert.subtitleLocArgs = try textArray(node, path)
            case "loc-key": alert.locKey = try text(node, path)
            case "loc-args": alert.locArgs = try textArray(node, path)
            default:
                throw PayloadTemplateError(
                    .invalidPayload,
                    "unknown key \"\(member.key)\" in aps.alert; known are title, subtitle, body, launch-image, "
                        + "title-loc-key, title-loc-args, subtitle-loc-key, subtitle-loc-args, loc-key, loc-args",
                    at: source.location(of: member.keyOffset)
                )
            }
        }
        return .fields(alert)
    }

    private func decodeSound(_ node: SourceNode) throws(PayloadTemplateError) -> APNsPayload.Sound {
        if case .string = node.value { return .named(try text(node, "aps.sound")) }
        guard case .object(let members) = node.value else {
            throw invalid("aps.sound must be a string or an object, found \(node.kindDescription)", node)
        }
        var sound = APNsPayload.CriticalSound(critical: nil)
        for member in members {
            let node = member.value
            let path = "aps.sound.\(member.key)"
            switch member.key {
            case "critical": sound.critical = try flag(node, path)
            case "name": sound.name = try text(node, path)
            case "volume":
                guard case .literal(let volume) = try number(node, path, in: 0...1) else {
                    throw invalid("\(path) must be a fixed number from 0 to 1", node)
                }
                sound.volume = volume
            default:
                throw PayloadTemplateError(
                    .invalidPayload,
                    "unknown key \"\(member.key)\" in aps.sound; known are critical, name, volume",
                    at: source.location(of: member.keyOffset)
                )
            }
        }
        return .critical(sound)
    }

    private func decodeAction(
        _ node: SourceNode,
        _ path: String
    ) throws(PayloadTemplateError) -> APNsPayload.NotificationAction {
        guard case .object(let members) = node.value else {
            throw invalid(
                "\(path) must be an object such as {\"name\": …, \"type\": \"url\", \"value\": …}, found \(node.kindDescription)",
                node
            )
        }
        var action = APNsPayload.NotificationAction()
        for member in members {
            switch member.key {
            case "name": action.name = try text(member.value, "\(path).name")
            case "type": action.type = try text(member.value, "\(path).type")
            case "value": action.value = try text(member.value, "\(path).value")
            default: action.otherMembers.append(JSONMember(member.key, try value(member.value)))
            }
        }
        return action
    }

    // MARK: Typed values

    private func text(_ node: SourceNode, _ path: String) throws(PayloadTemplateError) -> TemplateText {
        guard case .string(let string, let verbatim) = node.value else {
            throw invalid("\(path) must be a string, found \(node.kindDescription)", node)
        }
        switch try parsePlaceholders(string, verbatim: verbatim, at: node) {
        case .text(let text):
            return text
        case .value(let placeholder, let type):
            throw invalid(
                "\(path) is a string, but {{\(placeholder.source.bareName):\(type.rawValue)}} makes a \(type.rawValue); drop the type",
                node
            )
        }
    }

    private func textArray(_ node: SourceNode, _ path: String) throws(PayloadTemplateError) -> [TemplateText] {
        try array(node, path) { element, path throws(PayloadTemplateError) in try text(element, path) }
    }

    private func integer(
        _ node: SourceNode,
        _ path: String,
        in range: ClosedRange<Int>
    ) throws(PayloadTemplateError) -> TemplateInteger {
        switch node.value {
        case .integer(let value):
            guard range.contains(value) else {
                throw invalid("\(path) must be \(describe(range)), found \(value)", node)
            }
            return .literal(value)
        case .string(let string, let verbatim):
            if case .value(let placeholder, .int) = try parsePlaceholders(string, verbatim: verbatim, at: node) {
                return .placeholder(placeholder)
            }
            throw invalid(
                "\(path) must be an integer, found a string; to fill it in per device write \"{{field.1:int}}\"",
                node
            )
        default:
            throw invalid("\(path) must be an integer, found \(node.kindDescription)", node)
        }
    }

    private func number(
        _ node: SourceNode,
        _ path: String,
        in range: ClosedRange<Double>
    ) throws(PayloadTemplateError) -> TemplateNumber {
        let literal: Double
        switch node.value {
        case .integer(let value): literal = Double(value)
        case .number(let value): literal = value
        case .string(let string, let verbatim):
            if case .value(let placeholder, let type) = try parsePlaceholders(string, verbatim: verbatim, at: node),
                type == .number || type == .int
            {
                return .placeholder(placeholder)
            }
            throw invalid(
                "\(path) must be a number, found a string; to fill it in per device write \"{{field.1:number}}\"",
                node
            )
        default:
            throw invalid("\(path) must be a number, found \(node.kindDescription)", node)
        }
        guard range.contains(literal) else {
            throw invalid("\(path) must be from \(range.lowerBound) to \(range.upperBound), found \(literal)", node)
        }
        return .literal(literal)
    }

    /// `content-available`, `mutable-content` and the like: the integer 1 (0 is accepted too).
    private func flag(_ node: SourceNode, _ path: String) throws(PayloadTemplateError) -> Int {
        guard case .integer(let value) = node.value, value == 0 || value == 1 else {
            let found = if case .integer(let value) = node.value { "\(value)" } else { node.kindDescription }
            throw invalid("\(path) must be the integer 1 (or 0), found \(found)", node)
        }
        return value
    }

    private func enumeration<Value: RawRepresentable<String> & CaseIterable>(
        _ node: SourceNode,
        _ path: String,
        _ type: Value.Type
    ) throws(PayloadTemplateError) -> Value {
        let known = Value.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
        guard case .string(let string, _) = node.value, let value = Value(rawValue: string) else {
            throw invalid("\(path) must be one of \(known), found \(describeFound(node))", node)
        }
        return value
    }

    private func object(_ node: SourceNode, _ path: String) throws(PayloadTemplateError) -> [JSONMember] {
        guard case .object = node.value, case .object(let members) = try value(node) else {
            throw invalid("\(path) must be an object, found \(node.kindDescription)", node)
        }
        return members
    }

    private func array<Element>(
        _ node: SourceNode,
        _ path: String,
        _ element: (SourceNode, String) throws(PayloadTemplateError) -> Element
    ) throws(PayloadTemplateError) -> [Element] {
        guard case .array(let nodes) = node.value else {
            throw invalid("\(path) must be an array, found \(node.kindDescription)", node)
        }
        var elements: [Element] = []
        elements.reserveCapacity(nodes.count)
        for (position, child) in nodes.enumerated() {
            elements.append(try element(child, "\(path)[\(position)]"))
        }
        return elements
    }

    /// Any JSON value, with placeholders in its strings.
    private func value(_ node: SourceNode) throws(PayloadTemplateError) -> JSONValue {
        switch node.value {
        case .null: return .null
        case .bool(let value): return .bool(value)
        case .integer(let value): return .integer(value)
        case .number(let value): return .number(value)
        case .string(let string, let verbatim):
            switch try parsePlaceholders(string, verbatim: verbatim, at: node) {
            case .text(let text): return .string(text)
            case .value(let placeholder, let type): return .placeholder(placeholder, type)
            }
        case .array(let nodes):
            var values: [JSONValue] = []
            values.reserveCapacity(nodes.count)
            for child in nodes { values.append(try value(child)) }
            return .array(values)
        case .object(let members):
            var values: [JSONMember] = []
            values.reserveCapacity(members.count)
            for member in members { values.append(JSONMember(member.key, try value(member.value))) }
            return .object(values)
        }
    }

    private func parsePlaceholders(
        _ string: String,
        verbatim: Bool,
        at node: SourceNode
    ) throws(PayloadTemplateError) -> PlaceholderSyntax.Parsed {
        // Without escapes a byte of the text sits one byte after the opening quote in the file;
        // with them, the string's start is the best place to point at.
        let start = node.offset
        return try syntax.parse(string, reportOffset: { verbatim ? start + 1 + $0 : start }, source: source)
    }

    private func describe(_ range: ClosedRange<Int>) -> String {
        range.upperBound == Int.max ? "at least \(range.lowerBound)" : "from \(range.lowerBound) to \(range.upperBound)"
    }

    private func describeFound(_ node: SourceNode) -> String {
        if case .string(let string, _) = node.value { return "\"\(string)\"" }
        return node.kindDescription
    }

    private func invalid(_ message: String, _ node: SourceNode) -> PayloadTemplateError {
        PayloadTemplateError(.invalidPayload, message, at: source.location(of: node.offset))
    }
}
