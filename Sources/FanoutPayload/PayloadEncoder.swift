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

    /// Whether `token` is known to be hex, as the token reader guarantees for every token it
    /// hands out. The encoder then copies the token as it is instead of checking it again for
    /// characters JSON would need escaped; when `false`, it checks.
    public var tokenIsValidatedHex: Bool

    /// Creates an input; the pointers must stay valid while it is used.
    @inlinable
    public init(
        token: UnsafeRawBufferPointer,
        sequence: UInt64,
        fields: UnsafeRawBufferPointer = .init(start: nil, count: 0),
        tokenIsValidatedHex: Bool = false
    ) {
        self.token = token
        self.sequence = sequence
        self.fields = fields
        self.tokenIsValidatedHex = tokenIsValidatedHex
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
    /// The value for `source` is a `type` but outside what APNs or JSON readers take (`allowed`):
    /// a number past a 64-bit float (`1e999` is read as infinity), an int below 0 or past
    /// 2^63−1 for a key APNs defines (`aps.badge`).
    case outOfRange(Placeholder.Source, Placeholder.ValueType, allowed: String)

    public var description: String { description(fieldNames: []) }

    /// The words, a field named as the template wrote it when `fieldNames` (`--field-names`)
    /// name it: `the value of {{field.badge}} (field 1) is an int outside 0…2^63−1`.
    public func description(fieldNames: [String]) -> String {
        func named(_ source: Placeholder.Source) -> String {
            guard case .field(let index) = source, index >= 1, index <= fieldNames.count else { return "\(source)" }
            return "{{field.\(fieldNames[index - 1])}} (field \(index))"
        }
        return switch self {
        case .tooLarge(let size, let limit):
            "the payload is \(size) bytes, over the \(limit)-byte limit"
        case .missingField(let index):
            "the token line has no field \(index), which the template's \(named(.field(index))) needs"
        case .invalidValue(let source, let type):
            "the value of \(named(source)) is not \(type == .int ? "an int" : "a \(type.rawValue)")"
        case .invalidUTF8(let source):
            "the value of \(named(source)) is not valid UTF-8"
        case .outOfRange(let source, let type, let allowed):
            "the value of \(named(source)) is \(type == .int ? "an int" : "a \(type.rawValue)") outside \(allowed)"
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

    /// The template's compiled form, which every encode reads.
    private var compiled: CompiledPayload { template.compiled }

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
        let compiled = self.compiled
        let capacity = compiled.capacity(for: input)
        // In steady state the reused buffer has room; asking NIO anyway costs a call.
        if buffer.writableBytes < capacity { buffer.reserveCapacity(minimumWritableBytes: capacity) }
        // The closure captures nothing mutable: a captured `var` would cost a dynamic
        // exclusivity check per call.
        let outcome = buffer.withUnsafeMutableWritableBytes { out in compiled.write(input, to: out.baseAddress!) }
        let size = try check(outcome)
        buffer.moveWriterIndex(forwardBy: size)
        return size
    }

    /// The bytes `encode(_:into:)` on raw memory needs for `input`: enough for its worst case,
    /// every field value escaped six-fold.
    public func requiredCapacity(for input: NotificationInput) -> Int {
        compiled.capacity(for: input)
    }

    /// Writes the notification for `input` into `buffer` (grown if it needs more room) and
    /// returns its bytes, valid until the buffer is next written.
    public func encode(
        _ input: NotificationInput,
        into buffer: inout PayloadBuffer
    ) throws(PayloadEncodingError) -> UnsafeRawBufferPointer {
        let compiled = self.compiled
        let memory = buffer.memory(atLeast: compiled.capacity(for: input))
        let size = try check(compiled.write(input, to: memory.baseAddress!))
        return UnsafeRawBufferPointer(rebasing: memory[..<size])
    }

    /// Writes the notification for `input` at the start of `memory` and returns its size.
    ///
    /// For a writer that fills one region with many frames: it pays for reaching into its
    /// buffer once per batch rather than once per notification. `memory` must hold at least
    /// `requiredCapacity(for:)` bytes. On failure the bytes written are garbage and must not
    /// be sent.
    public func encode(
        _ input: NotificationInput,
        into memory: UnsafeMutableRawBufferPointer
    ) throws(PayloadEncodingError) -> Int {
        precondition(memory.count >= compiled.capacity(for: input), "memory is smaller than requiredCapacity(for:)")
        return try check(compiled.write(input, to: memory.baseAddress!))
    }

    @inline(__always)
    private func check(_ outcome: Int) throws(PayloadEncodingError) -> Int {
        guard outcome >= 0 else { throw CompiledPayload.SlotFailure(outcome).error(in: compiled) }
        if outcome > compiled.sizeLimit && oversizePolicy == .reject {
            throw .tooLarge(size: outcome, limit: compiled.sizeLimit)
        }
        return outcome
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
                    return .success(
                        try encode(NotificationInput(token: token, sequence: sequence, fields: fields), into: &buffer)
                    )
                } catch {
                    return .failure(error)
                }
            }
        }
        return try result.get()
    }
}
