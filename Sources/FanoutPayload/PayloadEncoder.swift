import NIOCore

/// One notification's per-device values, as bytes the caller owns for the duration of a call.
///
/// The token reader parses a token file in place and hands these views straight over, so
/// nothing is copied or allocated per device.
public struct NotificationInput {
    /// The device token as hex text.
    public var token: UnsafeRawBufferPointer
    /// The notification's sequence number in the run.
    public var sequence: UInt64
    /// The rest of the token's line after the token: each field preceded by a tab, as in
    /// `\t3\tAlice` for fields `3` and `Alice`; empty when the line has no fields.
    public var fields: UnsafeRawBufferPointer

    /// Creates an input; the pointers must stay valid while it is used.
    @inlinable
    public init(token: UnsafeRawBufferPointer, sequence: UInt64, fields: UnsafeRawBufferPointer = .init(start: nil, count: 0)) {
        self.token = token
        self.sequence = sequence
        self.fields = fields
    }
}

/// Why one notification could not be encoded. It is a value, not a failure of the run: the
/// load engine counts it as the notification's outcome and goes on.
public enum PayloadEncodingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The payload would be `size` bytes, over `limit`; it is not written.
    case tooLarge(size: Int, limit: Int)
    /// The token line has no field `index` (from 1), which the template needs.
    case missingField(Int)
    /// The value for `source` is not a valid `type` (for example field 1 is `x` for `:int`).
    case invalidValue(Placeholder.Source, Placeholder.ValueType)
    /// The value for `source` is not valid UTF-8, so it cannot go into a JSON string.
    case invalidUTF8(Placeholder.Source)

    public var description: String {
        switch self {
        case .tooLarge(let size, let limit):
            "the payload is \(size) bytes, over the \(limit)-byte limit"
        case .missingField(let index):
            "the token line has no field \(index), which the template's {{field.\(index)}} needs"
        case .invalidValue(let source, let type):
            "the value of \(source) is not \(type == .int ? "an int" : "a \(type.rawValue)")"
        case .invalidUTF8(let source):
            "the value of \(source) is not valid UTF-8"
        }
    }
}

/// Writes notifications from a `PayloadTemplate` into buffers the caller owns and reuses.
///
/// In steady state, with a buffer that is cleared and reused, encoding allocates nothing: the
/// static runs are copied, the slots' values are escaped or validated straight into the buffer's
/// memory, and the size is checked at the end.
///
/// ```swift
/// var buffer = ByteBufferAllocator().buffer(capacity: 4096)   // once per worker
/// let encoder = PayloadEncoder(template: template)
/// buffer.clear()
/// let size = try encoder.encode(input, into: &buffer)        // per notification
/// ```
public struct PayloadEncoder: Sendable {
    /// What to do with a notification over the size limit.
    public enum OversizePolicy: Sendable, Hashable {
        /// Write nothing and throw `PayloadEncodingError.tooLarge` (the default).
        case reject
        /// Write it anyway, to exercise a server's 413 PayloadTooLarge.
        case send
    }

    /// The template notifications come from.
    public let template: PayloadTemplate
    /// What happens to a notification over the size limit.
    public var oversizePolicy: OversizePolicy

    /// Creates an encoder for `template`.
    public init(template: PayloadTemplate, oversizePolicy: OversizePolicy = .reject) {
        self.template = template
        self.oversizePolicy = oversizePolicy
    }

    /// Appends the notification for `input` at `buffer`'s writer index and returns its size.
    ///
    /// On failure nothing is appended. Capacity grows only when `buffer` is too small for the
    /// largest notification seen, so a reused buffer stops allocating after the first one.
    public func encode(_ input: NotificationInput, into buffer: inout ByteBuffer) throws(PayloadEncodingError) -> Int {
        let slots = template.slots
        // Text may grow six-fold when escaped (\u00XX); a sequence number has at most 20 digits.
        let largestValue = max(input.token.count, input.fields.count)
        let bound = template.staticBytes.count + slots.count * (6 * largestValue + 20)
        var failure: PayloadEncodingError?
        let limit = template.sizeLimit
        let rejectOversize = oversizePolicy == .reject
        let written = template.staticBytes.withUnsafeBytes { staticBytes in
            buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: bound) { out in
                let base = out.baseAddress!
                var position = 0
                var copied = 0
                for slot in slots {
                    let run = slot.offset - copied
                    (base + position).copyMemory(from: staticBytes.baseAddress! + copied, byteCount: run)
                    position += run
                    copied = slot.offset
                    switch Self.write(slot, input, to: base + position) {
                    case .success(let count): position += count
                    case .failure(let error):
                        failure = error
                        return 0
                    }
                }
                let tail = staticBytes.count - copied
                (base + position).copyMemory(from: staticBytes.baseAddress! + copied, byteCount: tail)
                position += tail
                if position > limit && rejectOversize {
                    failure = .tooLarge(size: position, limit: limit)
                    return 0
                }
                return position
            }
        }
        if let failure { throw failure }
        return written
    }

    /// Writes one slot's value; `out` has room for the bound `encode` reserved.
    @inline(__always)
    private static func write(
        _ slot: PayloadTemplate.Slot,
        _ input: NotificationInput,
        to out: UnsafeMutableRawPointer
    ) -> Result<Int, PayloadEncodingError> {
        let value: UnsafeRawBufferPointer
        switch slot.source {
        case .sequence:
            return .success(JSONWriting.decimal(input.sequence, to: out))
        case .token:
            value = input.token
        case .field(let index):
            guard let field = Self.field(index, in: input.fields) else { return .failure(.missingField(index)) }
            value = field
        }
        switch slot.type {
        case .string:
            guard let count = JSONWriting.escapedText(value, to: out) else { return .failure(.invalidUTF8(slot.source)) }
            return .success(count)
        case .int:
            guard JSONWriting.isInteger(value) else { return .failure(.invalidValue(slot.source, .int)) }
        case .number:
            guard JSONWriting.isNumber(value) else { return .failure(.invalidValue(slot.source, .number)) }
        case .bool:
            guard JSONWriting.isBoolean(value) else { return .failure(.invalidValue(slot.source, .bool)) }
        }
        if let start = value.baseAddress { out.copyMemory(from: start, byteCount: value.count) }
        return .success(value.count)
    }

    /// Field `index` (from 1) of `fields`, or `nil` when the line has fewer.
    @inline(__always)
    static func field(_ index: Int, in fields: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        var remaining = index
        var cursor = 0
        while cursor < fields.count {
            if fields[cursor] == UInt8(ascii: "\t") {
                remaining -= 1
                if remaining == 0 {
                    var end = cursor + 1
                    while end < fields.count && fields[end] != UInt8(ascii: "\t") { end += 1 }
                    return UnsafeRawBufferPointer(rebasing: fields[(cursor + 1)..<end])
                }
            }
            cursor += 1
        }
        return nil
    }
}

extension PayloadEncoder {
    /// Encodes for a token and fields given as text: for tools and tests, not the hot path.
    public func encode(
        token: String,
        sequence: UInt64 = 0,
        fields: [String] = [],
        into buffer: inout ByteBuffer
    ) throws(PayloadEncodingError) -> Int {
        let tokenBytes = Array(token.utf8)
        let fieldBytes = Array(fields.map { "\t" + $0 }.joined().utf8)
        let result: Result<Int, PayloadEncodingError> = tokenBytes.withUnsafeBytes { token in
            fieldBytes.withUnsafeBytes { fields in
                do throws(PayloadEncodingError) {
                    return .success(try encode(NotificationInput(token: token, sequence: sequence, fields: fields), into: &buffer))
                } catch {
                    return .failure(error)
                }
            }
        }
        return try result.get()
    }
}
