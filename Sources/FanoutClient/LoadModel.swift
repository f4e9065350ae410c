import FanoutAPNs
import FanoutHPACK
import FanoutHTTP2
import FanoutMeasure
import FanoutNotation
import FanoutPayload
import FanoutTokens
import NIOCore

import struct Foundation.Date

/// How load is offered: the closed model (each connection keeps its streams full) or the open
/// one (notifications due on a schedule, whatever the server does).
public struct LoadModel: Sendable {
    /// The open model: when each notification is due; latency is counted from that time.
    /// `nil` is the closed model.
    public var schedule: ArrivalSchedule?
    /// The closed model: after this long no new token is started; what is in flight finishes.
    public var duration: Duration?
    /// Notifications started in the first `warmUp` of sending (from the schedule's start, or
    /// the first request: `WarmUpOrigin`) count in every outcome but not in the latency
    /// histograms or the throughput.
    public var warmUp: Duration = .zero
    /// The open model: a run in which the generator fell further behind its schedule than this
    /// (with a stream free to send on) is invalid.
    public var maxLag: Duration = .milliseconds(100)
    /// The open model: a notification that waited longer than this for a stream (the offered
    /// rate above what the endpoint, or Fanout, carries) cuts the schedule there; the arrivals
    /// after it are not sent and the run is invalid (`--max-backlog`).
    public var maxBacklog: Duration = .seconds(10)
    /// A run whose harness (sender loops, answer reading, the embedded sink's lateness) accounts
    /// for more than this share of the measured p99 is flagged harness-bound (`--max-harness-share`).
    public var maxHarnessShare = 0.2
    /// A run that measured fewer answers than this (after the warm-up) is invalid
    /// (`--min-measured`): a p99 of 13 latencies is one of the slowest few, not a percentile.
    public var minMeasured = MinimumMeasured.default
    /// Which part of a sharded run this is (`--shard i/N`): with a schedule, the run sends
    /// its arrivals k ≡ i − 1 (mod N) (`ArrivalSchedule.sharded(_:)`); the token reader takes
    /// the same part of the tokens.
    public var shard = TokenShard.all
    /// When sending starts, by the wall clock (`--start-at`): connections open and exchange
    /// SETTINGS before it, the first request goes out at it, and seconds and the schedule
    /// count from it. `nil`: as soon as a connection is ready.
    public var startAt: Date?
    /// Why the schedule's rate was not the user's own (Apple's hosts' cap), said in the summary.
    public var rateNote: String?
    /// `--abort-on`: conditions that stop the run while it goes (`AbortCondition`).
    public var abort: AbortPolicy?

    public init(schedule: ArrivalSchedule? = nil, duration: Duration? = nil, warmUp: Duration = .zero) {
        self.schedule = schedule
        self.duration = duration
        self.warmUp = warmUp
    }

    /// The arrivals this run sends: its shard of the schedule.
    public var shardSchedule: ArrivalSchedule? { schedule?.sharded(shard) }
}
