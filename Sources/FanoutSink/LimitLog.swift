import FanoutListening
import NIOConcurrencyHelpers
import NIOCore

/// The sink's lines about refusals and limits reached (a connection turned away, a stream
/// reset for never ending, an admin connection closed), each with the peer: at most one line a
/// second for each kind, the next saying how many were left out, so a client that provokes a
/// limit ten thousand times a second cannot flood the log.
///
/// ```
///   fanout sink: refused 127.0.0.2:41234: 256 connections from 127.0.0.2, the per-peer limit
///   fanout sink: refused 127.0.0.2:41240: 256 connections from 127.0.0.2, the per-peer limit (and 811 more since the last line)
/// ```
package final class LimitLog: Sendable {
    /// Where a line goes (`nil`: nowhere; the lines are still counted).
    private let write: (@Sendable (String) -> Void)?
    private let interval: UInt64
    /// Where a limit was reached: the sink's HTTP/2 port, or its admin endpoint (whose lines
    /// begin `admin`).
    package enum Place: Hashable, Sendable {
        case sink
        case admin
    }

    /// What lines are thinned by: a kind of event at a place.
    package struct Kind: Hashable, Sendable, Comparable, CustomStringConvertible {
        package var kind: LimitKind
        package var place: Place

        package var description: String { place == .admin ? "admin " + kind.rawValue : kind.rawValue }

        package static func < (lhs: Kind, rhs: Kind) -> Bool { lhs.description < rhs.description }
    }

    /// For each kind: when its last line went out, and how many were left out since.
    private let kinds = NIOLockedValueBox<[Kind: (last: UInt64, skipped: Int)]>([:])
    /// Every event noted, written or not.
    private let total = NIOLockedValueBox(0)

    package init(interval: Duration = .seconds(1), write: (@Sendable (String) -> Void)?) {
        self.write = write
        self.interval =
            UInt64(interval.components.seconds) * 1_000_000_000
            + UInt64(interval.components.attoseconds / 1_000_000_000)
    }

    /// Events noted so far (for tests).
    package var noted: Int { total.withLockedValue { $0 } }

    /// Writes, for each kind with events left out since its last line, how many: the sink
    /// calls it when it stops, so the last of a flood is not lost.
    package func flush() {
        guard let write else { return }
        let left = kinds.withLockedValue { kinds in
            defer { for kind in kinds.keys { kinds[kind]?.skipped = 0 } }
            return kinds.filter { $0.value.skipped > 0 }.map { ($0.key, $0.value.skipped) }.sorted { $0.0 < $1.0 }
        }
        for (kind, skipped) in left { write("\(kind): \(skipped) more since the last line") }
    }

    /// Notes one event of `kind` with `peer`; writes "`kind` `peer`: `detail`" unless a line of
    /// that kind went out less than the interval ago.
    package func note(
        _ limit: LimitKind,
        on place: Place = .sink,
        peer: String,
        _ detail: @autoclosure () -> String,
        now: UInt64 = 0
    ) {
        let kind = Kind(kind: limit, place: place)
        total.withLockedValue { $0 += 1 }
        guard let write else { return }
        let now = now == 0 ? NIODeadline.now().uptimeNanoseconds : now
        let skipped: Int? = kinds.withLockedValue { kinds in
            if let entry = kinds[kind], now < entry.last + interval {
                kinds[kind] = (entry.last, entry.skipped + 1)
                return nil
            }
            let skipped = kinds[kind]?.skipped ?? 0
            kinds[kind] = (now, 0)
            return skipped
        }
        guard let skipped else { return }
        let more = skipped > 0 ? " (and \(skipped) more since the last line)" : ""
        write("\(kind) \(peer): \(detail())\(more)")
    }
}
