import FanoutAPNs
import FanoutChannels
import FanoutResults
import Foundation
import Testing

@testable import FanoutRun
@testable import FanoutSink

/// The sink folder's broadcast figures: deliveries from storage timed at their subscribers'
/// returns (docs/sink.md, "Stored updates").
@Suite struct BroadcastReadingTests {
    static let second: UInt64 = 1_000_000_000

    static func bytes<Result>(_ text: String, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        Array(text.utf8).withUnsafeBytes(body)
    }

    /// Half of 10,000 subscribers offline, back uniformly within 20 s; broadcasts at 0 and 10 s,
    /// read at 30 s. The first's stored update reaches those back within (0, 10 s]: uniform, so
    /// its p50 is 5 s and p99 9.9 s after it; the second's those back within (10 s, 20 s], also
    /// p50 5 s after it. A fixed 40 ms delivery delay adds to each.
    @Test func storedDeliveriesAreTimedAtTheReturns() throws {
        let store = ChannelStore(
            subscribers: .fixed(10_000),
            shares: DeliveryShares(offline: 0.5),
            delay: .fixed(.milliseconds(40)),
            returnAfter: .uniform(.zero, .seconds(20)),
            seed: 1
        )
        guard case .created(let id) = Self.bytes("com.example.app", { store.create(bundle: $0, storagePolicy: 1) })
        else {
            Issue.record("the channel was not created")
            return
        }
        for seconds: UInt64 in [0, 10] {
            _ = Self.bytes("com.example.app") {
                store.broadcast(id, bundle: $0, now: 1 + seconds * Self.second)
            }
        }
        let (summary, rows) = BroadcastReading.read(store.records(now: 1 + 30 * Self.second))
        #expect(rows.map(\.devices.fromStorage) == [2500, 2500])
        for row in rows {
            #expect(abs(row.storageP50Ms - 5040) < 1, "\(row.storageP50Ms)")
            #expect(abs(row.storageP99Ms - 9940) < 1, "\(row.storageP99Ms)")
            // The last of 2,500 returns uniform over 10 s, at its median: 10 s × 0.5^(1/2500).
            #expect(abs(row.lastMs - (10_000 * pow(0.5, 1 / 2500.0) + 40)) < 1, "\(row.lastMs)")
            #expect(row.p50Ms == 40 && row.p99Ms == 40)
            // The file keeps microseconds.
            #expect(BroadcastRow(line: row.line)?.line == row.line)
        }
        let storage = try #require(summary.storageMs)
        #expect(abs(storage.p50 - 5040) / 5040 < 0.01, "\(storage)")
        #expect(abs(storage.p90 - 9040) / 9040 < 0.01, "\(storage)")
        #expect(summary.deliveryMs == .init(p50: 40, p90: 40, p99: 40, last: 40))
        #expect(summary.lastSubscriberMs?.max == rows.map(\.lastMs).max())
        #expect(summary.devices?.fromStorage == 5000 && summary.devices?.discarded == 2500)
        #expect(
            summary.lines.contains(
                "stored updates: 5,000 delivered from storage, 2,500 replaced or deleted, 0 expired, 0 still stored"
            )
        )
    }

    /// A file written before stored updates were timed (11 columns) still reads.
    @Test func anOlderRowStillReads() throws {
        let row = try #require(
            BroadcastRow(line: "1,0.000,q7nE0wM1pS2o3Lr9Yx2bUg==,10000,9000,1000,0,0,40.000,40.000,40.000")
        )
        #expect(row.devices == .init(subscribers: 10_000, delivered: 9000, stored: 1000, stillStored: 1000))
        #expect((row.p50Ms, row.storageP50Ms, row.lastMs) == (40, 0, 40))
        #expect(BroadcastRow(line: BroadcastRow.header) == nil)
    }
}
