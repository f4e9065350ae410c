extension LatencyDistribution {
    /// `count` draws in seconds, from a generator seeded with `seed`: the sink's own draws, so
    /// that a model of the sink's fleet (`fanout plan`'s devices) draws as the fleet does.
    public func draws(_ count: Int, seed: UInt64) -> [Double] {
        var random = SinkRandom(seed: seed)
        return (0..<max(0, count)).map { _ in Double(sample(&random)) / 1e9 }
    }
}
