import Foundation
import Testing

@testable import FanoutClient

/// `AnswerIDSample` alone: bounded, every id kept whole with its apns-id, and a uniform choice
/// once more than its capacity arrive.
@Suite struct AnswerIDSampleTests {
    /// The `index`th id's text, `8-4-4-4-12` hex digits with `index` in the last group.
    static func id(_ index: Int, prefix: String) -> [UInt8] {
        Array((prefix + String(format: "-0b3d-4e5f-8a9b-%012x", index)).utf8)
    }

    static func offer(_ sample: AnswerIDSample, _ index: Int, apnsID: Bool = true) {
        let unique = Self.id(index, prefix: "11111111")
        let apns = Self.id(index, prefix: "22222222")
        unique.withUnsafeBytes { uniqueBytes in
            apns.withUnsafeBytes { apnsBytes in
                sample.offer(uniqueID: uniqueBytes, apnsID: apnID(apnsBytes, apnsID))
            }
        }
    }

    private static func apnID(_ bytes: UnsafeRawBufferPointer, _ present: Bool) -> UnsafeRawBufferPointer? {
        present ? bytes : nil
    }

    /// Fewer than its capacity: all of them, in order, each with its own apns-id (or none).
    @Test func fewerThanItsCapacityAreAllKept() {
        let sample = AnswerIDSample()
        for index in 0..<10 { Self.offer(sample, index, apnsID: index != 3) }
        // Not an id: ignored.
        [UInt8](repeating: 0x41, count: 12).withUnsafeBytes { sample.offer(uniqueID: $0, apnsID: nil) }
        #expect(sample.answersSeen == 10)
        let ids = sample.ids
        #expect(
            ids.map(\.uniqueID) == (0..<10).map { String(decoding: Self.id($0, prefix: "11111111"), as: UTF8.self) }
        )
        #expect(ids[3].apnsID == nil)
        #expect(ids[4].apnsID == String(decoding: Self.id(4, prefix: "22222222"), as: UTF8.self))
    }

    /// Fifty times its capacity: it keeps its capacity, distinct ids each with its own apns-id,
    /// drawn from the whole run — as many from its second half as from its first, within
    /// chance (a uniform sample's half is 500 ± 16: 5σ is 80).
    @Test func manyMoreAreSampledUniformly() throws {
        let sample = AnswerIDSample()
        let total = 50 * AnswerIDSample.capacity
        for index in 0..<total { Self.offer(sample, index) }
        #expect(sample.answersSeen == total)
        let ids = sample.ids
        #expect(ids.count == AnswerIDSample.capacity)
        #expect(Set(ids.map(\.uniqueID)).count == ids.count)
        let indices = try ids.map { entry -> Int in
            let apnsID = try #require(entry.apnsID)
            #expect(apnsID.suffix(12) == entry.uniqueID.suffix(12))
            return try #require(Int(entry.uniqueID.suffix(12), radix: 16))
        }
        let secondHalf = indices.filter { $0 >= total / 2 }.count
        #expect(abs(secondHalf - 500) < 80, "\(secondHalf) of 1000 from the second half")
        #expect(indices.contains { $0 >= total - total / 10 })
    }
}
