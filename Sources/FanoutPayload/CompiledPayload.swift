/// The hot part of a template: its fixed bytes and slots in memory of their own, so encoding
/// reads two pointers and a limit instead of reaching through the payload model.
///
/// Immutable after `init`, which writes the memory once; everything after only reads it. That
/// is what makes sharing it between threads safe.
final class CompiledPayload: @unchecked Sendable {
    /// Where a per-device value is written, and how.
    struct Slot: Sendable, Hashable {
        /// The offset in the static bytes at which the value is inserted.
        var offset: Int
        var source: Placeholder.Source
        /// `.string` writes escaped text inside quotes the static bytes already hold.
        var type: Placeholder.ValueType
        /// An `.int` of a key APNs defines (`aps.badge`, the dates): below 0 or past 2^63−1 is
        /// refused.
        var nonNegative = false
    }

    let staticBytes: UnsafeMutableRawBufferPointer
    let slots: UnsafeMutableBufferPointer<Slot>
    let sizeLimit: Int

    init(staticBytes bytes: [UInt8], slots: [Slot], sizeLimit: Int) {
        staticBytes = .allocate(byteCount: max(bytes.count, 1), alignment: 8)
        staticBytes.copyBytes(from: bytes)
        self.slots = .allocate(capacity: max(slots.count, 1))
        _ = self.slots.initialize(from: slots)
        self.slotCount = slots.count
        self.staticCount = bytes.count
        self.sizeLimit = sizeLimit
    }

    deinit {
        staticBytes.deallocate()
        slots.deallocate()
    }

    /// The number of fixed bytes and of slots (the buffers may be larger by one).
    let staticCount: Int
    let slotCount: Int

    /// The slots in use.
    var activeSlots: UnsafeMutableBufferPointer<Slot>.SubSequence { slots[0..<slotCount] }

    /// The most bytes `write` can produce for `input`: text may grow six-fold when escaped
    /// (`\u00XX`) and a sequence number has at most 20 digits.
    @inline(__always)
    func capacity(for input: NotificationInput) -> Int {
        staticCount &+ slotCount &* (6 &* max(input.token.count, input.fields.count) &+ 20)
    }

    /// Writes the notification for `input` at `out`, which has `capacity(for:)` bytes, and
    /// returns its size, or a negative `SlotFailure` code.
    @inline(__always)
    func write(_ input: NotificationInput, to out: UnsafeMutableRawPointer) -> Int {
        let fixed = UnsafeRawPointer(staticBytes.baseAddress!)
        var position = 0
        var copied = 0
        // A token often appears more than once (a URL per action); check it once.
        var token = input.tokenIsValidatedHex ? TokenText.plain : TokenText.unchecked
        for index in 0..<slotCount {
            let slot = slots[index]
            let run = slot.offset &- copied
            JSONWriting.copy(fixed + copied, to: out + position, count: run)
            position &+= run
            copied = slot.offset
            let count = Self.write(slot, input, &token, to: out + position)
            if count < 0 { return SlotFailure(slot: index, reason: count).code }
            position &+= count
        }
        JSONWriting.copy(fixed + copied, to: out + position, count: staticCount &- copied)
        return position &+ staticCount &- copied
    }

    /// What is known about the token's text within one notification.
    private enum TokenText {
        case unchecked
        case plain
        case needsEscaping
    }

    /// Writes one slot's value and returns its size, or a negative `SlotFailure` reason.
    @inline(__always)
    private static func write(
        _ slot: Slot,
        _ input: NotificationInput,
        _ token: inout TokenText,
        to out: UnsafeMutableRawPointer
    ) -> Int {
        let value: UnsafeRawBufferPointer
        switch slot.source {
        case .sequence:
            return JSONWriting.decimal(input.sequence, to: out)
        case .token where slot.type == .string:
            if token == .unchecked { token = JSONWriting.isPlainASCII(input.token) ? .plain : .needsEscaping }
            if token == .plain {
                JSONWriting.copy(input.token.baseAddress, to: out, count: input.token.count)
                return input.token.count
            }
            return JSONWriting.escapedTextByteByByte(input.token, to: out) ?? SlotFailure.invalidUTF8
        case .token:
            value = input.token
        case .field(let index):
            guard let field = field(index, in: input.fields) else { return SlotFailure.missingField }
            value = field
        }
        switch slot.type {
        case .string:
            return JSONWriting.escapedText(value, to: out) ?? SlotFailure.invalidUTF8
        case .int:
            guard JSONWriting.isInteger(value) else { return SlotFailure.invalidValue }
            // Any other integer is copied exactly as written (docs/templates.md).
            if slot.nonNegative && (JSONWriting.isNegative(value) || !JSONWriting.fitsInt64(value)) {
                return SlotFailure.outOfRange
            }
        case .number:
            guard JSONWriting.isNumber(value) else { return SlotFailure.invalidValue }
            guard JSONWriting.isFiniteDouble(value) else { return SlotFailure.outOfRange }
        case .bool:
            guard JSONWriting.isBoolean(value) else { return SlotFailure.invalidValue }
        }
        JSONWriting.copy(value.baseAddress, to: out, count: value.count)
        return value.count
    }

    /// Field `index` (from 1) of `fields`, or `nil` when the line has fewer.
    @inline(__always)
    static func field(_ index: Int, in fields: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        var remaining = index
        var cursor = 0
        while cursor < fields.count {
            if fields[cursor] == UInt8(ascii: "\t") {
                remaining &-= 1
                if remaining == 0 {
                    var end = cursor &+ 1
                    while end < fields.count && fields[end] != UInt8(ascii: "\t") { end &+= 1 }
                    return UnsafeRawBufferPointer(rebasing: fields[(cursor &+ 1)..<end])
                }
            }
            cursor &+= 1
        }
        return nil
    }

    /// A failed slot packed into one negative `Int`, so the write path returns a plain integer
    /// and the error is built only on the way out.
    struct SlotFailure {
        static let missingField = -1
        static let invalidValue = -2
        static let invalidUTF8 = -3
        static let outOfRange = -4

        let slot: Int
        let reason: Int

        init(slot: Int, reason: Int) {
            self.slot = slot
            self.reason = reason
        }

        init(_ code: Int) {
            self.slot = (-code - 1) >> 3
            self.reason = -((-code - 1) & 7)
        }

        var code: Int { -((slot << 3) | -reason) - 1 }

        func error(in compiled: CompiledPayload) -> PayloadEncodingError {
            let slot = compiled.slots[slot]
            switch (reason, slot.source) {
            case (Self.missingField, .field(let index)): return .missingField(index)
            case (Self.invalidUTF8, let source): return .invalidUTF8(source)
            case (Self.outOfRange, let source):
                let allowed =
                    switch slot.type {
                    case .int: "0…2^63−1, which APNs' integer keys (aps.badge, the dates) take"
                    default: "a 64-bit float's range (it would be read as infinity)"
                    }
                return .outOfRange(source, slot.type, allowed: allowed)
            default: return .invalidValue(slot.source, slot.type)
            }
        }
    }
}
