import Testing

@testable import FanoutSink

/// `SinkConfiguration`'s connection limits as a sink's run takes them.
@Suite struct SinkConfigurationTests {
    /// A sink a run starts for itself has no neighbour: neither per-peer limit binds, so a pool
    /// that opens all its connections at once is held to the total only, however low the
    /// open-file limit made the per-peer default (167 under `ulimit -n 1024`: a run's own
    /// `--connections 200` was refused 33).
    @Test func aRunsOwnSinkHoldsItsPoolToTheTotalOnly() {
        var configuration = SinkConfiguration()
        #expect(configuration.peerLimits(defaultTotal: 1024) == (256, 64))
        #expect(configuration.embedded.peerLimits(defaultTotal: 669) == (.max, .max))
        configuration.maxConnectionsPerPeer = 8
        #expect(configuration.embedded.peerLimits(defaultTotal: 1024) == (.max, .max))
    }
}
