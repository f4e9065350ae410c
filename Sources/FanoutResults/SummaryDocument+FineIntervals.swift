extension SummaryDocument {
    /// A short run's throughput in bins finer than its seconds (`fine_intervals`, an added,
    /// optional field): what finished in each `bin_ms` from the run's start, the warm-up
    /// included, as `intervals`' `completed` counts it. Written for a run that lasted 10 s or
    /// less, every completion in a bin (the bins add up to the intervals' `completed`); absent
    /// for longer runs and in older folders.
    ///
    /// ```
    ///   "fine_intervals": {"bin_ms": 100, "completed": [812, 1204, 1198, …, 37]}
    ///                                                   0-100 ms  …          last bin
    /// ```
    public struct FineIntervals: Codable, Sendable, Equatable {
        /// A bin's length, milliseconds.
        public var binMilliseconds: Int
        /// Notifications that reached a final outcome in each bin, from the run's start.
        public var completed: [Int]

        /// The longest run whose bins are written, seconds.
        public static let longestRun = 10.0

        public init(binMilliseconds: Int, completed: [Int]) {
            self.binMilliseconds = binMilliseconds
            self.completed = completed
        }

        enum CodingKeys: String, CodingKey {
            case binMilliseconds = "bin_ms"
            case completed
        }

        /// A bin's length, seconds.
        public var binSeconds: Double { Double(binMilliseconds) / 1000 }

        /// The bins of a run `elapsedSeconds` long from a recording's counts (`counts`, bins of
        /// `binMilliseconds` from the start), or `nil` when they would not show the whole run: it
        /// lasted longer than `longestRun`, or some of its `completed` notifications finished
        /// past the bins. Kept up to the bin the run ended in, or the last one filed if later.
        public init?(counts: [Int], binMilliseconds: Int, elapsedSeconds: Double, completed: Int) {
            guard !counts.isEmpty, elapsedSeconds <= Self.longestRun, counts.reduce(0, +) == completed else {
                return nil
            }
            let ended = Int((elapsedSeconds * 1000 / Double(binMilliseconds)).rounded(.up))
            let lastFiled = (counts.lastIndex { $0 > 0 } ?? -1) + 1
            self.init(
                binMilliseconds: binMilliseconds,
                completed: Array(counts.prefix(max(1, ended, lastFiled)))
            )
        }

        /// Shards' bins as one (`fanout merge`; the shards started together, `--start-at`): bin
        /// by bin added up. `nil` when a shard has none or their bins differ in length: a run
        /// drawn from some shards' bins would pass them off as all.
        public static func merged(_ shards: [Self?]) -> Self? {
            let present = shards.compactMap { $0 }
            guard let first = present.first, present.count == shards.count,
                present.allSatisfy({ $0.binMilliseconds == first.binMilliseconds })
            else { return nil }
            var completed = [Int](repeating: 0, count: present.map(\.completed.count).max() ?? 0)
            for shard in present {
                for (bin, count) in shard.completed.enumerated() { completed[bin] += count }
            }
            return Self(binMilliseconds: first.binMilliseconds, completed: completed)
        }
    }
}
