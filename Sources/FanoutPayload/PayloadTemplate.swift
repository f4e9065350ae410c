import FanoutAPNs

/// A notification compiled once into bytes: its fixed JSON pre-encoded, with slots where
/// per-device values go.
///
/// ```
///  static bytes   {"aps":{"alert":…,"badge":│…:"https://example.com/ok?device=│"}…
///  slots                                    ▲ field.1 as int                    ▲ token as text
/// ```
/// Encoding a notification (see `PayloadEncoder`) copies the static runs and writes each slot's
/// value between them; nothing else is computed per device.
public struct PayloadTemplate: Sendable {
    /// How a template is read and limited.
    public struct Options: Sendable, Hashable {
        /// The push type the notification is sent as; it sets the default size limit.
        public var pushType: APNsPushType
        /// The payload size limit in bytes; `nil` takes the push type's (4096, or 5120 for voip).
        public var sizeLimit: Int?
        /// Names for the token file's fields, in column order, so that `{{field.NAME}}` works.
        public var fieldNames: [String]
        /// Whether `aps` keys Fanout does not know pass through instead of being an error.
        public var allowUnknownAPSKeys: Bool

        /// Creates options; every parameter has a default.
        public init(
            pushType: APNsPushType = .alert,
            sizeLimit: Int? = nil,
            fieldNames: [String] = [],
            allowUnknownAPSKeys: Bool = false
        ) {
            self.pushType = pushType
            self.sizeLimit = sizeLimit
            self.fieldNames = fieldNames
            self.allowUnknownAPSKeys = allowUnknownAPSKeys
        }

        /// The limit in force: `sizeLimit`, or the push type's.
        public var effectiveSizeLimit: Int { sizeLimit ?? pushType.payloadSizeLimit }
    }

    /// What a template holds: an APNs payload, or an FCM HTTP v1 send request.
    public enum Document: Sendable, Hashable {
        /// `{"aps": …}`, checked key by key (`APNsPayload`).
        case apns(APNsPayload)
        /// `{"message": {…}}`: any JSON with placeholders, its message naming a target
        /// (`PayloadDecoder.decodeFCMSend`).
        case fcmSend([JSONMember])
    }

    /// What this template was compiled from.
    public let document: Document
    /// The APNs payload this template was compiled from; `nil` for an FCM send.
    public var payload: APNsPayload? {
        if case .apns(let payload) = document { payload } else { nil }
    }
    /// The largest FCM send request body a template may produce: what `fanout sink --service
    /// fcm` reads of a body. FCM's own limit (4096 bytes of data and notification text) is the
    /// service's to judge, on what it counts, and answers INVALID_ARGUMENT.
    public static let fcmBodyLimit = 64 * 1024
    /// The options it was compiled with.
    public let options: Options
    /// The fixed bytes and the slots, laid out for the encoder.
    let compiled: CompiledPayload

    /// The payload size limit in bytes.
    public var sizeLimit: Int { options.effectiveSizeLimit }
    /// The size of the fixed bytes: the smallest payload this template can produce.
    public var staticSize: Int { compiled.staticCount }
    /// The placeholders in the order they are filled in.
    public var placeholders: [Placeholder] { compiled.activeSlots.map { Placeholder($0.source) } }
    /// The highest field number the template reads (0 when it reads no field).
    public var highestField: Int {
        compiled.activeSlots.reduce(0) { highest, slot in
            if case .field(let index) = slot.source { return max(highest, index) }
            return highest
        }
    }

    /// Compiles `payload`.
    ///
    /// - Throws: `PayloadTemplateError` for a number JSON cannot carry, a value out of its range,
    ///   a placeholder whose source cannot have its type (the token as an integer), or fixed
    ///   bytes that already exceed the size limit.
    public init(payload: APNsPayload, options: Options = Options()) throws(PayloadTemplateError) {
        var writer = TemplateWriter()
        try writer.write(payload)
        self.document = .apns(payload)
        self.options = options
        self.compiled = CompiledPayload(
            staticBytes: writer.bytes,
            slots: writer.slots,
            sizeLimit: options.effectiveSizeLimit
        )
        if writer.bytes.count > options.effectiveSizeLimit {
            throw PayloadTemplateError(
                .tooLarge,
                "the template is \(writer.bytes.count) bytes before any placeholder is filled in, over the "
                    + "\(options.effectiveSizeLimit)-byte limit for \(options.pushType.rawValue) pushes"
            )
        }
    }

    /// Parses and compiles a template from JSON text; `file` names it in error messages.
    public init(json: [UInt8], file: String = "<template>", options: Options = Options()) throws(PayloadTemplateError) {
        let source = SourceText(file: file, bytes: json)
        try self.init(root: JSONSourceParser.parse(source), source: source, options: options)
    }

    /// Compiles the APNs payload `root` of `source` (the whole file, or one member of a
    /// campaign's template: its errors are placed in the file).
    init(root: SourceNode, source: SourceText, options: Options) throws(PayloadTemplateError) {
        let decoder = PayloadDecoder(
            source: source,
            syntax: PlaceholderSyntax(fieldNames: options.fieldNames),
            allowUnknownAPSKeys: options.allowUnknownAPSKeys
        )
        let payload = try decoder.decode(root)
        do {
            try self.init(payload: payload, options: options)
        } catch {
            var located = error
            located.location = located.location ?? source.location(of: root.offset)
            throw located
        }
    }

    /// Compiles an FCM HTTP v1 send request (`{"message": {…}}`) from JSON text; `file` names
    /// it in error messages. `fieldNames` name the token file's fields for `{{field.NAME}}`.
    public init(
        fcmSend json: [UInt8],
        file: String = "<template>",
        fieldNames: [String] = []
    ) throws(PayloadTemplateError) {
        let source = SourceText(file: file, bytes: json)
        try self.init(fcmSendRoot: JSONSourceParser.parse(source), source: source, fieldNames: fieldNames)
    }

    /// Compiles the FCM send request `root` of `source` (the whole file, or a campaign
    /// template's `fcm` member).
    init(fcmSendRoot root: SourceNode, source: SourceText, fieldNames: [String]) throws(PayloadTemplateError) {
        let decoder = PayloadDecoder(
            source: source,
            syntax: PlaceholderSyntax(fieldNames: fieldNames),
            allowUnknownAPSKeys: false
        )
        let members = try decoder.decodeFCMSend(root)
        var writer = TemplateWriter()
        do {
            try writer.write(fcmSend: members)
        } catch {
            var located = error
            located.location = located.location ?? source.location(of: root.offset)
            throw located
        }
        document = .fcmSend(members)
        options = Options(sizeLimit: Self.fcmBodyLimit, fieldNames: fieldNames)
        compiled = CompiledPayload(staticBytes: writer.bytes, slots: writer.slots, sizeLimit: Self.fcmBodyLimit)
        if writer.bytes.count > Self.fcmBodyLimit {
            throw PayloadTemplateError(
                .tooLarge,
                "the FCM send is \(writer.bytes.count) bytes before any placeholder is filled in, over the "
                    + "\(Self.fcmBodyLimit)-byte body a send may have here",
                at: source.location(of: root.offset)
            )
        }
    }

    /// Reads, parses and compiles the FCM send request file at `path`.
    public init(fcmSendContentsOf path: String, fieldNames: [String] = []) throws(PayloadTemplateError) {
        let bytes = try TemplateFile.contents(of: path)
        try self.init(fcmSend: bytes, file: path, fieldNames: fieldNames)
    }

    /// Reads, parses and compiles the template file at `path`.
    public init(contentsOf path: String, options: Options = Options()) throws(PayloadTemplateError) {
        let bytes = try TemplateFile.contents(of: path)
        try self.init(json: bytes, file: path, options: options)
    }
}
