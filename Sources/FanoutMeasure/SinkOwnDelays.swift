/// The sink's own delays: how late it wrote answers against their due time (its own share of a
/// client's latency), what the scenario held them for (not its own), how late its loops ran,
/// and how busy each loop's thread was (CPU time ÷ wall time, 1 = a whole core).
public struct SinkOwnDelays: Sendable, Hashable {
    public var lateness: DelayPercentiles
    /// Lateness counted from the client's send (transit included), for requests whose apns-id
    /// says when they were sent (`TimedAPNsID`); empty otherwise.
    public var fromSend: DelayPercentiles
    public var injected: DelayPercentiles
    public var loopLag: DelayPercentiles
    public var loopUtilisation: [Double]

    public init(
        lateness: DelayPercentiles = .init(),
        fromSend: DelayPercentiles = .init(),
        injected: DelayPercentiles = .init(),
        loopLag: DelayPercentiles = .init(),
        loopUtilisation: [Double] = []
    ) {
        self.lateness = lateness
        self.fromSend = fromSend
        self.injected = injected
        self.loopLag = loopLag
        self.loopUtilisation = loopUtilisation
    }
}
