import FanoutDevices
import Foundation
import NIOCore
import NIOHTTP1

/// The requests of the return wave, by what made them (docs/return-wave.md, "Requests").
public enum ReturnRequestKind: String, Sendable, CaseIterable, Codable {
    /// The service extension's download of the notification's media.
    case media
    /// An open by the default action.
    case open
    /// An open by one of the named actions: the action's own request.
    case action
    /// The app's launch fetches after a foreground open (its second request on).
    case launch

    var index: Int {
        switch self {
        case .media: 0
        case .open: 1
        case .action: 2
        case .launch: 3
        }
    }
}

/// What one kind of return request is: a method, a path and a body, each of which may name the
/// event's fields — `{token}`, `{apns-id}`, `{action}`, `{campaign}`, `{event}` (the kind) and
/// `{n}` (the launch fetch's number, from 1). A URL the payload gave (the media's, an action's)
/// replaces the path and is fetched with GET, as a device does.
public struct ReturnRequestTemplate: Sendable, Hashable {
    public var method: String
    public var path: String
    /// Sent with `content-type: application/json` when there is one.
    public var body: String?

    public init(method: String, path: String, body: String? = nil) {
        self.method = method
        self.path = path
        self.body = body
    }

    /// The default body of a POST: the event's fields as JSON.
    static let eventBody =
        #"{"event":"{event}","token":"{token}","apns_id":"{apns-id}","action":"{action}","campaign":"{campaign}"}"#

    /// What `--return-to URL` alone sends.
    public static func defaultTemplate(for kind: ReturnRequestKind) -> ReturnRequestTemplate {
        switch kind {
        case .media: ReturnRequestTemplate(method: "GET", path: "/media/{campaign}")
        case .open: ReturnRequestTemplate(method: "POST", path: "/opens", body: eventBody)
        case .action: ReturnRequestTemplate(method: "POST", path: "/actions/{action}", body: eventBody)
        case .launch: ReturnRequestTemplate(method: "GET", path: "/launch/{n}")
        }
    }

    /// `METHOD PATH`, like `POST /v1/opens` (`--return-request KIND=METHOD PATH`).
    public init(parsing text: String, body: String? = nil) throws(ReturnSettingsError) {
        let parts = text.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].allSatisfy({ $0.isLetter && $0.isUppercase }), parts[1].hasPrefix("/") else {
            throw ReturnSettingsError("a return request is METHOD PATH, like POST /v1/opens; got \(text)")
        }
        self.init(method: String(parts[0]), path: String(parts[1]), body: body)
        _ = try ReturnFieldText(path)
        if let body { _ = try ReturnFieldText(body) }
    }
}

/// A problem with the return wave's settings, saying which and what.
public struct ReturnSettingsError: Error, CustomStringConvertible, Equatable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// One event's fields, as `ReturnFieldText` fills them in.
struct ReturnFields {
    var event: ReturnRequestKind
    var token: UnsafeRawBufferPointer
    var apnsID: UnsafeRawBufferPointer
    var action: [UInt8]
    var campaign: [UInt8]
    var number: Int
}

/// A text with `{field}`s, cut once into its literal pieces and fields.
struct ReturnFieldText: Hashable {
    enum Piece: Hashable {
        case literal([UInt8])
        case token
        case apnsID
        case action
        case campaign
        case event
        case number
    }

    let pieces: [Piece]

    init(_ text: String) throws(ReturnSettingsError) {
        var pieces: [Piece] = []
        var literal: [UInt8] = []
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "{") {
            literal += Array(rest[..<open].utf8)
            guard let close = rest[open...].firstIndex(of: "}") else {
                throw ReturnSettingsError(
                    "\(text): a { opens no field (they are {token}, {apns-id}, {action}, {campaign}, {event}, {n})"
                )
            }
            let name = rest[rest.index(after: open)..<close]
            let piece: Piece
            switch name {
            case "token": piece = .token
            case "apns-id": piece = .apnsID
            case "action": piece = .action
            case "campaign": piece = .campaign
            case "event": piece = .event
            case "n": piece = .number
            default:
                // JSON's own braces pass as they are: only a known name is a field.
                literal.append(UInt8(ascii: "{"))
                rest = rest[rest.index(after: open)...]
                continue
            }
            if !literal.isEmpty { pieces.append(.literal(literal)) }
            literal = []
            pieces.append(piece)
            rest = rest[rest.index(after: close)...]
        }
        literal += Array(rest.utf8)
        if !literal.isEmpty { pieces.append(.literal(literal)) }
        self.pieces = pieces
    }

    func write(_ fields: ReturnFields, into buffer: inout ByteBuffer) {
        for piece in pieces {
            switch piece {
            case .literal(let bytes): buffer.writeBytes(bytes)
            case .token: buffer.writeBytes(fields.token)
            case .apnsID: buffer.writeBytes(fields.apnsID)
            case .action: buffer.writeBytes(fields.action)
            case .campaign: buffer.writeBytes(fields.campaign)
            case .event: buffer.writeString(fields.event.rawValue)
            case .number: buffer.writeString(String(fields.number))
            }
        }
    }

    func string(_ fields: ReturnFields) -> String {
        var buffer = ByteBuffer()
        write(fields, into: &buffer)
        return buffer.readString(length: buffer.readableBytes) ?? ""
    }
}

/// One request of the wave, made: what to send, and the event's times for its measures.
struct ReturnRequest {
    var kind: ReturnRequestKind
    /// When the device sends it (uptime nanoseconds): its latency counts from here.
    var due: UInt64
    var head: HTTPRequestHead
    var body: ByteBuffer?
}

/// The requests an event makes, from the templates (`ReturnRequestKind`'s) and `--return-to`.
struct ReturnRequestMaker {
    let templates: [(template: ReturnRequestTemplate, path: ReturnFieldText, body: ReturnFieldText?)]
    let host: String
    let pathPrefix: String
    let campaign: [UInt8]
    let actionNames: [[UInt8]]
    /// Each action's own request from the category file, where it names one.
    let actionTemplates: [(template: ReturnRequestTemplate, path: ReturnFieldText, body: ReturnFieldText?)?]
    let requestsPerOpen: Int

    init(
        settings: EngagementSettings,
        templates: [ReturnRequestKind: ReturnRequestTemplate],
        campaign: String
    ) throws(ReturnSettingsError) {
        var made: [(template: ReturnRequestTemplate, path: ReturnFieldText, body: ReturnFieldText?)] = []
        for kind in ReturnRequestKind.allCases {
            let template = templates[kind] ?? .defaultTemplate(for: kind)
            made.append(
                (
                    template, try ReturnFieldText(template.path),
                    try template.body.map { (text) throws(ReturnSettingsError) in try ReturnFieldText(text) }
                )
            )
        }
        self.templates = made
        guard let url = settings.returnTo else { throw ReturnSettingsError("the return wave needs --return-to URL") }
        let defaultPort = url.isTLS ? 443 : 80
        let host = url.host.contains(":") ? "[\(url.host)]" : url.host
        self.host = url.port == defaultPort ? host : "\(host):\(url.port)"
        pathPrefix = url.pathPrefix
        self.campaign = Array(campaign.utf8)
        actionNames = settings.actions.map { Array($0.name.utf8) }
        var filed: [(template: ReturnRequestTemplate, path: ReturnFieldText, body: ReturnFieldText?)?] = []
        for action in settings.actions {
            guard let named = settings.categories?.action(action.name), let request = named.request else {
                filed.append(nil)
                continue
            }
            do {
                // The action kind's body (`--return-body action=…`, else the event's JSON) for a
                // method that carries one; none for GET, HEAD or DELETE.
                var template = try ReturnRequestTemplate(parsing: request)
                if ["POST", "PUT", "PATCH"].contains(template.method) {
                    template.body = (templates[.action] ?? .defaultTemplate(for: .action)).body
                }
                filed.append(
                    (template, try ReturnFieldText(template.path), try template.body.map(ReturnFieldText.init))
                )
            } catch {
                throw ReturnSettingsError("\(named.place): \(error.description)")
            }
        }
        actionTemplates = filed
        requestsPerOpen = settings.requestsPerOpen
    }

    /// Calls `send` with each request `event` makes: one for a media download, and for an open
    /// its action's request then `requestsPerOpen − 1` launch fetches.
    func requests(_ event: ReturnEventView, _ send: (ReturnRequest) -> Void) {
        let action = event.action.map { actionNames[$0] } ?? Array("default".utf8)
        var fields = ReturnFields(
            event: .media,
            token: event.token,
            apnsID: event.id,
            action: action,
            campaign: campaign,
            number: 0
        )
        switch event.kind {
        case .media:
            send(make(.media, fields, payloadPath: event.path, due: event.due))
        case .open:
            fields.event = event.action == nil ? .open : .action
            send(make(fields.event, fields, payloadPath: event.path, action: event.action, due: event.due))
            fields.event = .launch
            for number in stride(from: 1, to: requestsPerOpen, by: 1) {
                fields.number = number
                send(make(.launch, fields, payloadPath: nil, due: event.due))
            }
        case .background:
            fields.event = .action
            send(make(.action, fields, payloadPath: nil, action: event.action, due: event.due))
        }
    }

    private func make(
        _ kind: ReturnRequestKind,
        _ fields: ReturnFields,
        payloadPath: UnsafeRawBufferPointer?,
        action: Int? = nil,
        due: UInt64
    ) -> ReturnRequest {
        // An action's own request (the category file's) before its kind's.
        let (template, pathText, bodyText) =
            kind == .action ? action.flatMap { actionTemplates[$0] } ?? templates[kind.index] : templates[kind.index]
        var uri = pathPrefix
        var method = HTTPMethod(rawValue: template.method)
        var body: ByteBuffer?
        if let payloadPath {
            method = .GET
            uri += Self.unescaped(payloadPath)
            if !uri.hasPrefix("/") { uri = "/" + uri }
        } else {
            uri += pathText.string(fields)
            if let bodyText {
                var buffer = ByteBuffer()
                bodyText.write(fields, into: &buffer)
                body = buffer
            }
        }
        var headers = HTTPHeaders()
        headers.reserveCapacity(8)
        headers.add(name: "host", value: host)
        headers.add(name: "user-agent", value: "fanout-return-wave")
        headers.add(name: "x-fanout-event", value: kind.rawValue)
        headers.add(name: "x-fanout-token", value: String(decoding: fields.token, as: UTF8.self))
        if fields.apnsID.count > 0 {
            headers.add(name: "x-fanout-apns-id", value: String(decoding: fields.apnsID, as: UTF8.self))
        }
        if kind == .open || kind == .action {
            headers.add(name: "x-fanout-action", value: String(decoding: fields.action, as: UTF8.self))
        }
        headers.add(name: "x-fanout-campaign", value: String(decoding: campaign, as: UTF8.self))
        if let body {
            headers.add(name: "content-type", value: "application/json")
            headers.add(name: "content-length", value: String(body.readableBytes))
        } else if method == .POST || method == .PUT {
            headers.add(name: "content-length", value: "0")
        }
        return ReturnRequest(
            kind: kind,
            due: due,
            head: HTTPRequestHead(version: .http1_1, method: method, uri: uri, headers: headers),
            body: body
        )
    }

    /// A path as JSON wrote it, its `\/` a slash.
    static func unescaped(_ bytes: UnsafeRawBufferPointer) -> String {
        var text = String(decoding: bytes, as: UTF8.self)
        if text.contains("\\/") { text = text.replacingOccurrences(of: "\\/", with: "/") }
        return text
    }
}
