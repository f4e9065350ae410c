/// A campaign's template: one notification written for both push services in one file, as push
/// providers take it (the push services' `"settings": {"apns": …, "gcm": …}`; gorush's and
/// OneSignal's requests carry both platforms' fields the same way):
///
/// ```
///   {
///     "apns": {"aps": {"alert": {"title": "Poll", "body": "{{field.question}}"}}},
///     "fcm":  {"message": {"notification": {"title": "Poll", "body": "{{field.question}}"}}}
///   }
/// ```
///
/// `apns` is what `fanout send --template` takes for APNs (the payload), `fcm` what it takes
/// with `--service fcm` (the send request, whose message gets the device's token). Each is
/// compiled as it would be alone, with the same placeholders; an error is placed in this file.
public struct CampaignTemplate: Sendable {
    /// The APNs payload.
    public let apns: PayloadTemplate
    /// The FCM HTTP v1 send request.
    public let fcm: PayloadTemplate

    /// The two members a campaign template has.
    static let members = ["apns", "fcm"]

    /// Compiles both halves of the campaign template `json`; `file` names it in errors.
    /// `apnsOptions` are the APNs payload's (push type, size limit, unknown aps keys);
    /// `options.fieldNames` name the token file's fields for both.
    public init(
        json: [UInt8],
        file: String = "<template>",
        apnsOptions options: PayloadTemplate.Options = PayloadTemplate.Options()
    ) throws(PayloadTemplateError) {
        let source = SourceText(file: file, bytes: json)
        let root = try JSONSourceParser.parse(source)
        guard case .object(let members) = root.value else {
            throw PayloadTemplateError(
                .invalidPayload,
                "a campaign template is an object, {\"apns\": {APNs payload}, \"fcm\": {\"message\": {…}}}, not \(root.kindDescription)",
                at: source.location(of: root.offset)
            )
        }
        var found: [String: SourceNode] = [:]
        for member in members {
            guard Self.members.contains(member.key) else {
                let hint = member.key == "gcm" ? " (FCM's half is \"fcm\": an HTTP v1 send request)" : ""
                throw PayloadTemplateError(
                    .invalidPayload,
                    "\"\(member.key)\" is not a push service of a campaign template: its members are \"apns\" and \"fcm\"\(hint)",
                    at: source.location(of: member.keyOffset)
                )
            }
            guard case .object = member.value.value else {
                throw PayloadTemplateError(
                    .invalidPayload,
                    "\"\(member.key)\" is \(member.value.kindDescription): it is the \(member.key == "apns" ? "APNs payload" : "FCM send request"), an object",
                    at: source.location(of: member.value.offset)
                )
            }
            found[member.key] = member.value
        }
        for name in Self.members where found[name] == nil {
            throw PayloadTemplateError(
                .invalidPayload,
                "the campaign template has no \"\(name)\": a campaign sends both services' notifications, "
                    + "\(name == "apns" ? "\"apns\": {APNs payload}" : "\"fcm\": {\"message\": {…}}")",
                at: source.location(of: root.offset)
            )
        }
        apns = try PayloadTemplate(root: found["apns"]!, source: source, options: options)
        fcm = try PayloadTemplate(fcmSendRoot: found["fcm"]!, source: source, fieldNames: options.fieldNames)
    }

    /// Reads, parses and compiles the campaign template file at `path`.
    public init(
        contentsOf path: String,
        apnsOptions options: PayloadTemplate.Options = PayloadTemplate.Options()
    ) throws(PayloadTemplateError) {
        try self.init(json: TemplateFile.contents(of: path), file: path, apnsOptions: options)
    }
}
