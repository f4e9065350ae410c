import FanoutEndpoint
import FanoutMeasure
import FanoutTokens
import Histogram

import struct Foundation.Date

extension LoadEngine {
    /// What a run did.
    public struct Report: Sendable {
        public var snapshot: LoadSnapshot
        public var elapsed: Duration
        /// What the token reader saw (tokens read, lines turned down, its error if any).
        public var tokens: TokenStreamSummary?
        /// Whether it was stopped (by `cancel()`, the deadline, `interrupt(by:)` or an abort) before the end.
        public var cancelled: Bool
        /// Why it gave up early, if it did.
        public var gaveUp: GiveUp?
        /// When it started, by the wall clock: `--start-at`'s time when given (seconds and the
        /// schedule count from it), else when the run began.
        public var started: Date
        /// `--start-at`, when given.
        public var scheduledStart: Date? = nil
        /// When the first request went out (`nil`: none did); with `scheduledStart`, how late
        /// this process really began, which `fanout merge` compares across shards.
        public var firstSend: Date? = nil
        /// The open model's schedule, this run's shard of it (`nil`: the closed model).
        public var schedule: ArrivalSchedule?
        public var warmUp: Duration
        /// When the warm-up began, from the run's start: where sending began (the schedule's
        /// start, or the first request), after connecting (`WarmUpOrigin`).
        public var warmUpStart: Duration = .zero
        /// The lag beyond which the run is invalid.
        public var maxLag: Duration
        /// The open model: arrivals the schedule held for which no token was left (the set was
        /// shorter than the schedule), and when the first of them was due (from the start).
        /// They were not sent, so no latency stands for them. `nil`: every arrival had a token.
        public var tokensRanOut: TokensRanOut?
        /// The open model's queue for streams passed `--max-backlog` and the schedule was cut.
        public var backlogCut: BacklogCut? = nil
        /// The open model: from the schedule's start to the claim of its last arrival (or the
        /// one that cut it); against the schedule's length it says whether the sends kept the
        /// offered rate. `nil` for the closed model, or a run that ended before its last arrival.
        public var sendsEnded: Duration? = nil
        /// The CPU time the sender's event-loop threads used over the run (thread clocks).
        public var senderCPU: Duration = .zero
        /// The sender's own delays, loop by loop, with each loop's CPU time.
        public var loopDelays: [LoopDelays] = []

        /// The signal that stopped the run, and how long after its start, if one did.
        public var interruption: Interruption? = nil
        /// The `--abort-on` condition that stopped it, if one did.
        public var abort: Abort? = nil
        /// Files written on the side (`--gone-tokens`) that lost lines.
        public var lostWrites: [LostWrite] = []

        /// A file written on the side that lost lines: the option that named it, and the
        /// path with the system's reason.
        public struct LostWrite: Sendable, Hashable {
            public var option: String
            public var failure: String

            public init(option: String, failure: String) {
                self.option = option
                self.failure = failure
            }
        }

        /// A run stopped by a signal (`LoadEngine.interrupt(by:)`).
        public struct Interruption: Sendable, Hashable {
            public var signal: StopSignal
            /// From the run's start to the signal.
            public var after: Duration
        }

        /// The open model's queue passed `--max-backlog`: the schedule was cut (`backlogCut`).
        public struct BacklogCut: Sendable, Hashable {
            /// From the schedule's start to the cut.
            public var after: Duration
            /// How late the ticket that cut it was claimed (the wait for a stream).
            public var wait: Duration
            /// `--max-backlog`.
            public var limit: Duration
            /// Arrivals left unsent (`nil`: a schedule without an end).
            public var arrivals: UInt64?
            /// The schedule's arrivals in all (this shard's; `nil`: no end).
            public var planned: UInt64?
        }

        /// Arrivals without a token (`tokensRanOut`).
        public struct TokensRanOut: Sendable, Hashable {
            /// Arrivals the schedule held past the last token.
            public var arrivals: UInt64
            /// When the first of them was due, from the start.
            public var at: Duration
            /// The schedule's arrivals in all (this shard's).
            public var planned: UInt64
        }

        /// Why it gave up early, as summary.json says it.
        public var abandoned: String? { gaveUp?.description }
        /// What kept it from ever reaching the endpoint, when that is why it gave up.
        public var unreachable: EndpointFailure? { gaveUp?.unreachable }

        /// The generator's worst lag behind its schedule (the open model).
        public var worstLag: Duration {
            .microseconds(snapshot.lag.totalCount == 0 ? 0 : Int64(snapshot.lag.max))
        }
    }
}
