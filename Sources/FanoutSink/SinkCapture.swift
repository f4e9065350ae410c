import Atomics
import FanoutAPNs
import FanoutFiles
import FanoutScenarioTerms
import Foundation
import NIOConcurrencyHelpers
import NIOCore

/// Received notifications written to a file, one JSON object a line, for the first N of them
/// or a sampled share, so that a run of any length keeps no list in memory. Each connection
/// gathers its lines in one buffer and hands them over every 64 KiB, every second and when it
/// ends; writes to the file are serialised by a lock.
///
/// A line holds the notification as the sink saw it and what it answered:
///
///     {"time_ms":1763769600123,"connection":3,"stream":7,"token":"ab…","topic":"com.example.app",
///      "push_type":"alert","apns_id":"8E2A…","status":200,"payload":{"aps":{…}}}
///
/// (on one line; a rejected one has `"reason":"Unregistered"` after `status`). Only requests
/// that passed APNs' validation are notifications: their payload is a JSON object and is
/// written as it came.
public final class SinkCapture: Sendable {
    /// Which notifications are written.
    public enum Selection: Sendable, Hashable {
        /// The first N the sink received, over all connections.
        case first(Int)
        /// Each with this probability (0...1), drawn from the scenario's seed.
        case sample(Double)
    }

    public let path: String
    public let selection: Selection
    private let file: AppendingFile
    private let claimed = ManagedAtomic<Int>(0)
    private let lines = ManagedAtomic<Int>(0)

    /// Creates (or empties) the file at `path`.
    public init(path: String, selection: Selection) throws(AppendingFile.CannotCreate) {
        self.path = path
        self.selection = selection
        file = try AppendingFile(path: path)
    }

    /// Notifications written so far.
    public var count: Int { lines.load(ordering: .relaxed) }

    /// Whether the next notification is written.
    func claim(_ random: inout SinkRandom) -> Bool {
        switch selection {
        case .first(let limit):
            return claimed.load(ordering: .relaxed) < limit
                && claimed.wrappingIncrementThenLoad(ordering: .relaxed) <= limit
        case .sample(let share):
            return random.unit() < share
        }
    }

    /// Appends `count` whole lines held in `buffer` and empties it.
    func write(_ buffer: inout ByteBuffer, count: Int) {
        guard buffer.readableBytes > 0 else { return }
        // A full disk ends the capture, not the sink.
        if file.append(buffer.readableBytesView.withUnsafeBytes { Data($0) }) {
            lines.wrappingIncrement(by: count, ordering: .relaxed)
        }
        buffer.clear()
    }

    /// Flushes and closes the file; later lines are dropped.
    public func close() {
        file.close()
    }
}

/// One connection's captured lines waiting to be written.
struct CaptureBuffer {
    var bytes = ByteBuffer()
    var lines = 0

    /// Buffered bytes past which lines are handed to the capture.
    static let limit = 64 * 1024

    /// Writes one notification's line.
    mutating func append(
        connection: Int,
        stream: UInt32,
        token: UnsafeRawBufferPointer,
        topic: UnsafeRawBufferPointer,
        pushType: UnsafeRawBufferPointer,
        apnsID: UnsafeRawBufferPointer,
        rejection: APNsReason?,
        payload: UnsafeRawBufferPointer
    ) {
        let milliseconds = Int64(Date().timeIntervalSince1970 * 1000)
        bytes.writeString(#"{"time_ms":\#(milliseconds),"connection":\#(connection),"stream":\#(stream),"token":""#)
        bytes.writeBytes(token)
        bytes.writeString(#"","topic":""#)
        Self.writeEscaped(topic, into: &bytes)
        bytes.writeString(#"","push_type":""#)
        if pushType.isEmpty { bytes.writeString("alert") } else { bytes.writeBytes(pushType) }
        bytes.writeString(#"","apns_id":""#)
        bytes.writeBytes(apnsID)
        bytes.writeString(#"","status":\#(rejection?.status ?? 200)"#)
        if let rejection { bytes.writeString(#","reason":"\#(rejection.rawValue)""#) }
        bytes.writeString(#","payload":"#)
        bytes.writeBytes(payload)
        bytes.writeString("}\n")
        lines += 1
    }

    /// Bytes already checked to be printable ASCII, with `"` and `\` escaped for JSON.
    static func writeEscaped(_ text: UnsafeRawBufferPointer, into bytes: inout ByteBuffer) {
        for byte in text {
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { bytes.writeInteger(UInt8(ascii: "\\")) }
            bytes.writeInteger(byte)
        }
    }

    mutating func flush(to capture: SinkCapture) {
        capture.write(&bytes, count: lines)
        lines = 0
    }
}
