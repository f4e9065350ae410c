/// An HTTP/2 setting (RFC 9113 §6.5.2).
public struct HTTP2Setting: Sendable, Hashable {
    /// A setting's identifier.
    public struct Identifier: RawRepresentable, Sendable, Hashable {
        public let rawValue: UInt16
        public init(rawValue: UInt16) { self.rawValue = rawValue }

        public static let headerTableSize = Identifier(rawValue: 0x1)
        public static let enablePush = Identifier(rawValue: 0x2)
        public static let maxConcurrentStreams = Identifier(rawValue: 0x3)
        public static let initialWindowSize = Identifier(rawValue: 0x4)
        public static let maxFrameSize = Identifier(rawValue: 0x5)
        public static let maxHeaderListSize = Identifier(rawValue: 0x6)
    }

    public var identifier: Identifier
    public var value: UInt32

    public init(_ identifier: Identifier, _ value: UInt32) {
        self.identifier = identifier
        self.value = value
    }

    /// Calls `body` with each setting of a SETTINGS payload, a whole number of 6-byte entries:
    ///
    /// ```
    ///  +-------------------------------+
    ///  |       Identifier (16)         |
    ///  +-------------------------------+-------------------------------+
    ///  |                        Value (32)                             |
    ///  +---------------------------------------------------------------+
    /// ```
    static func forEach(in payload: UnsafeRawBufferPointer, _ body: (HTTP2Setting) -> Void) {
        var offset = 0
        while offset + 6 <= payload.count {
            let identifier = payload.bigEndian(at: offset, as: UInt16.self)
            body(HTTP2Setting(Identifier(rawValue: identifier), payload.bigEndian(at: offset + 2, as: UInt32.self)))
            offset += 6
        }
    }
}

extension UnsafeRawBufferPointer {
    /// The big-endian (network order) integer at `offset`, which the caller has checked is in bounds.
    @inline(__always)
    func bigEndian<Integer: FixedWidthInteger>(at offset: Int, as: Integer.Type) -> Integer {
        Integer(bigEndian: loadUnaligned(fromByteOffset: offset, as: Integer.self))
    }
}

/// The settings in force for one side of a connection, with RFC 9113's initial values.
public struct HTTP2Settings: Sendable, Hashable {
    public var headerTableSize: UInt32 = 4096
    public var enablePush: Bool = true
    /// `nil` means no limit has been set.
    public var maxConcurrentStreams: UInt32? = nil
    public var initialWindowSize: UInt32 = 65_535
    public var maxFrameSize: UInt32 = 16_384
    /// `nil` means no limit has been set.
    public var maxHeaderListSize: UInt32? = nil

    public init() {}

    /// Applies one received setting, checking the RFC's bounds; unknown identifiers are ignored.
    public mutating func apply(_ setting: HTTP2Setting) throws(HTTP2FrameError) {
        switch setting.identifier {
        case .headerTableSize: headerTableSize = setting.value
        case .enablePush:
            guard setting.value <= 1 else {
                throw HTTP2FrameError(.protocolError, "SETTINGS_ENABLE_PUSH must be 0 or 1")
            }
            enablePush = setting.value == 1
        case .maxConcurrentStreams: maxConcurrentStreams = setting.value
        case .initialWindowSize:
            guard setting.value <= 0x7FFF_FFFF else {
                throw HTTP2FrameError(.flowControlError, "SETTINGS_INITIAL_WINDOW_SIZE is over 2^31-1")
            }
            initialWindowSize = setting.value
        case .maxFrameSize:
            guard (16_384...16_777_215).contains(setting.value) else {
                throw HTTP2FrameError(.protocolError, "SETTINGS_MAX_FRAME_SIZE must be from 16384 to 16777215")
            }
            maxFrameSize = setting.value
        case .maxHeaderListSize: maxHeaderListSize = setting.value
        default: break
        }
    }
}
