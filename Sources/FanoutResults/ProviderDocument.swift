import FanoutAPNs
import FanoutMeasure
import FanoutNotation
import FanoutPush
import Foundation

extension SummaryDocument {
    /// What a sink measured of the provider under test (`kind` "sink", schema 6): the fan-out
    /// from the start mark, each connection's use of its streams, the conformance card, and
    /// what the provider would carry at a planned round trip. Times are seconds unless a key
    /// ends in `_ms`; "since the mark" is since `start.at`.
    public struct Provider: Codable, Sendable, Equatable {
        public var start: Start
        /// How the run ended: `expect`, `expect-tokens`, `duration`, `idle-exit`, `no-request` or
        /// `signal`.
        public var endedBy: String
        public var expected: Expected
        public var delivery: Delivery
        /// Requests received and notifications accepted, second by second since the mark.
        public var perSecond: [Second]
        public var streams: Streams
        public var connections: [Connection]
        /// Connections closed past the first `connections` kept (only counted).
        public var connectionsNotListed: Int

        /// Answers written that the provider never showed it read, on connections that broke
        /// (the listed ones'): accepted by the sink, maybe never seen by the provider.
        public var maybeUnread: Int { connections.compactMap(\.maybeUnread).reduce(0, +) }
        public var card: Card
        public var capacity: Capacity
        /// The sink's own delays beside the provider's figures, so that a provider's figure is
        /// never the sink's: its lateness, what its scenario held answers for, its loops' lag.
        public var sinkOwn: SinkOwnDelays.Figures
        @Nullable public var trigger: Trigger?

        enum CodingKeys: String, CodingKey {
            case start
            case endedBy = "ended_by"
            case expected, delivery
            case perSecond = "per_second"
            case streams, connections
            case connectionsNotListed = "connections_not_listed"
            case card, capacity
            case sinkOwn = "sink_own"
            case trigger
        }

        public struct Start: Codable, Sendable, Equatable {
            /// `first-request` or `trigger`.
            public var mark: String
            /// RFC 3339 to the millisecond; `null` when nothing arrived.
            @Nullable public var at: String?
            /// Seconds since 1970 (for `fanout merge` to line several sinks up).
            @Nullable public var epochSeconds: Double?

            public init(mark: String, at: String?, epochSeconds: Double?) {
                self.mark = mark
                self.at = at
                self.epochSeconds = epochSeconds
            }

            enum CodingKeys: String, CodingKey {
                case mark, at
                case epochSeconds = "epoch_seconds"
            }
        }

        public struct Expected: Codable, Sendable, Equatable {
            /// `--expect N`.
            @Nullable public var notifications: Int?
            /// `--expect-tokens`: the set's size and how many of it were accepted.
            @Nullable public var tokens: Int?
            @Nullable public var tokensSeen: Int?
            /// Whether what was expected arrived (`true` with nothing expected).
            public var reached: Bool

            public init(notifications: Int?, tokens: Int?, tokensSeen: Int?, reached: Bool) {
                self.notifications = notifications
                self.tokens = tokens
                self.tokensSeen = tokensSeen
                self.reached = reached
            }

            enum CodingKeys: String, CodingKey {
                case notifications, tokens
                case tokensSeen = "tokens_seen"
                case reached
            }
        }

        /// Accepted notifications' arrival since the mark, ms: to the first, percentiles, and to
        /// the last — the fan-out time (exact; the percentiles to three digits).
        public struct Delivery: Codable, Sendable, Equatable {
            public var count: Int
            public var firstMs: Double
            public var p50Ms: Double
            public var p90Ms: Double
            public var p99Ms: Double
            public var lastMs: Double
            public var fanoutSeconds: Double
            /// Accepted per second over the fan-out time.
            public var acceptedPerSecond: Double

            enum CodingKeys: String, CodingKey {
                case count
                case firstMs = "first_ms"
                case p50Ms = "p50_ms"
                case p90Ms = "p90_ms"
                case p99Ms = "p99_ms"
                case lastMs = "last_ms"
                case fanoutSeconds = "fanout_seconds"
                case acceptedPerSecond = "accepted_per_second"
            }
            public init(
                count: Int,
                firstMs: Double,
                p50Ms: Double,
                p90Ms: Double,
                p99Ms: Double,
                lastMs: Double,
                fanoutSeconds: Double,
                acceptedPerSecond: Double
            ) {
                self.count = count
                self.firstMs = firstMs
                self.p50Ms = p50Ms
                self.p90Ms = p90Ms
                self.p99Ms = p99Ms
                self.lastMs = lastMs
                self.fanoutSeconds = fanoutSeconds
                self.acceptedPerSecond = acceptedPerSecond
            }
        }

        public struct Second: Codable, Sendable, Equatable {
            public var second: Int
            public var received: Int
            public var accepted: Int
            public init(
                second: Int,
                received: Int,
                accepted: Int
            ) {
                self.second = second
                self.received = received
                self.accepted = accepted
            }
        }

        public struct Streams: Codable, Sendable, Equatable {
            /// MAX_CONCURRENT_STREAMS the sink announced after a first accepted request, and before.
            public var limit: Int
            public var initial: Int
            /// The most open at once on one connection.
            public var peak: Int
            /// Over the connections that carried requests: their time-weighted means' mean
            /// (each over its own busy time, so never above its peak).
            public var meanPerConnection: Double
            /// Streams in flight over all connections, time-weighted over the span the
            /// connections were busy (the first request to the last answer of any): the sum of
            /// their stream-seconds over that span, so never above the sum of their peaks.
            public var meanInFlight: Double
            /// `12 of 1000`: the mean a connection used of the limit.
            public var text: String

            enum CodingKeys: String, CodingKey {
                case limit, initial, peak
                case meanPerConnection = "mean_per_connection"
                case meanInFlight = "mean_in_flight"
                case text
            }

            /// From the connections' own figures. The busy span is theirs (`busyFromSeconds` to
            /// its end); a folder written before connections kept it spans `fanoutSeconds`.
            /// The fan-out ends at the last arrival, but held answers keep streams in flight
            /// after it: dividing their stream-seconds by it once gave a fleet mean of 93.1
            /// over one connection whose peak was 21.
            public init(limit: Int, initial: Int, connections: [Connection], fanoutSeconds: Double) {
                let busy = connections.filter { $0.requests > 0 && $0.busySeconds > 0 }
                let area = busy.map { $0.meanStreams * $0.busySeconds }.reduce(0, +)
                var span = fanoutSeconds
                if !busy.isEmpty, busy.allSatisfy({ $0.busyFromSeconds != nil }) {
                    let first = busy.map { $0.busyFromSeconds! }.min()!
                    let last = busy.map { $0.busyFromSeconds! + $0.busySeconds }.max()!
                    span = last - first
                }
                self.limit = limit
                self.initial = initial
                peak = connections.map(\.peakStreams).max() ?? 0
                meanPerConnection = busy.isEmpty ? 0 : busy.map(\.meanStreams).reduce(0, +) / Double(busy.count)
                meanInFlight = span > 0 ? area / span : 0
                text = String(format: "%.1f of %d", meanPerConnection, limit)
            }
        }

        public struct Connection: Codable, Sendable, Equatable {
            public var id: Int
            public var peer: String
            /// Since the mark (negative: before it).
            public var openedSeconds: Double
            @Nullable public var closedSeconds: Double?
            /// `provider`, `sink`, or `null` while open at the end.
            @Nullable public var closedBy: String?
            public var requests: Int
            public var accepted: Int
            /// Its share of every request.
            public var share: Double
            public var peakStreams: Int
            public var meanStreams: Double
            public var busySeconds: Double
            public var refusedStreams: Int
            /// When its first request arrived, since the mark; `null` before it was kept.
            @Nullable public var busyFromSeconds: Double?
            /// Answers the sink wrote that the provider never showed it read (no acknowledgement
            /// of the PING behind them) before the connection broke; `null` before it was kept.
            @Nullable public var maybeUnread: Int?

            public init(
                id: Int,
                peer: String,
                openedSeconds: Double,
                closedSeconds: Double?,
                closedBy: String?,
                requests: Int,
                accepted: Int,
                share: Double,
                peakStreams: Int,
                meanStreams: Double,
                busySeconds: Double,
                refusedStreams: Int,
                busyFromSeconds: Double? = nil,
                maybeUnread: Int? = nil
            ) {
                self.id = id
                self.peer = peer
                self.openedSeconds = openedSeconds
                self.closedSeconds = closedSeconds
                self.closedBy = closedBy
                self.requests = requests
                self.accepted = accepted
                self.share = share
                self.peakStreams = peakStreams
                self.meanStreams = meanStreams
                self.busySeconds = busySeconds
                self.refusedStreams = refusedStreams
                self.busyFromSeconds = busyFromSeconds
                self.maybeUnread = maybeUnread
            }

            enum CodingKeys: String, CodingKey {
                case id, peer
                case openedSeconds = "opened_seconds"
                case closedSeconds = "closed_seconds"
                case closedBy = "closed_by"
                case requests, accepted, share
                case peakStreams = "peak_streams"
                case meanStreams = "mean_streams"
                case busySeconds = "busy_seconds"
                case refusedStreams = "refused_streams"
                case busyFromSeconds = "busy_from_seconds"
                case maybeUnread = "answered_maybe_unread"
            }
        }

        public struct Card: Codable, Sendable, Equatable {
            public var passed: Bool
            public var violations: Int
            public var checks: [Check]
            /// Permanent rejections the card's fixed memory could not hold: retries of those
            /// tokens were not checked.
            public var forgotten: Int

            public struct Check: Codable, Sendable, Equatable {
                public var rule: ProviderRule
                public var title: String
                public var count: Int
                public var passed: Bool
                public var examples: [Example]

                /// `service`: whose sink checked it (its words for the rows both services check).
                public init(rule: ProviderRule, service: PushService, count: Int, examples: [Example]) {
                    self.rule = rule
                    title = rule.title(for: service)
                    self.count = count
                    passed = count == 0
                    self.examples = examples
                }
            }

            public struct Example: Codable, Sendable, Equatable {
                /// Empty on a connection's rule and on the device fleet's (which names the
                /// notification by `apnsID`).
                public var token: String
                /// 0 on the device fleet's.
                public var connection: Int
                /// Since the mark.
                public var atSeconds: Double
                public var detail: String
                /// The apns-id the sink answered, on the device fleet's examples only (absent
                /// on the others).
                public var apnsID: String?

                public init(token: String, connection: Int, atSeconds: Double, detail: String, apnsID: String? = nil) {
                    self.token = token
                    self.connection = connection
                    self.atSeconds = atSeconds
                    self.detail = detail
                    self.apnsID = apnsID
                }

                enum CodingKeys: String, CodingKey {
                    case token, connection
                    case atSeconds = "at_seconds"
                    case detail
                    case apnsID = "apns_id"
                }
            }

            public init(checks: [Check], forgotten: Int) {
                self.checks = checks
                self.forgotten = forgotten
                violations = checks.map(\.count).reduce(0, +)
                passed = violations == 0
            }

            /// The count of `rule`, 0 when the card lacks it.
            public func count(_ rule: ProviderRule) -> Int { checks.first { $0.rule == rule }?.count ?? 0 }
        }

        /// Little's law on each connection: it carried `requests ÷ busy` a second with `mean`
        /// streams in flight, each held `mean ÷ rate` (the sink's hold and its own time). At a
        /// round trip R with the streams it showed (its peak, within the limit) it carries at
        /// most `peak ÷ R`, and no more than it did here: `min(rate, peak ÷ R)`.
        public struct Capacity: Codable, Sendable, Equatable {
            public var rttMs: Double
            public var connections: Int
            public var perConnection: Double
            public var total: Double
            /// Seconds each stream was held here (the mean of the connections' `mean ÷ rate`).
            public var heldMs: Double
            public var text: String

            enum CodingKeys: String, CodingKey {
                case rttMs = "rtt_ms"
                case connections
                case perConnection = "per_connection_per_second"
                case total = "total_per_second"
                case heldMs = "held_ms"
                case text
            }

            public init(rttMs: Double, connections: [Connection]) {
                self.rttMs = rttMs
                let busy = connections.filter { $0.busySeconds > 0 && $0.requests > 0 }
                self.connections = busy.count
                var total = 0.0
                var held = 0.0
                // Connections whose figure is the rate they were sent, not their streams' bound.
                var asSent = 0
                for connection in busy {
                    let rate = Double(connection.requests) / connection.busySeconds
                    let bound = Double(connection.peakStreams) / (rttMs / 1000)
                    total += min(rate, bound)
                    // Paced: under its streams' bound with its streams mostly free. One that kept
                    // its streams full (947 of a peak of 1000) was held by them, not by its pace.
                    if rate <= bound, connection.meanStreams < 0.9 * Double(connection.peakStreams) { asSent += 1 }
                    held += rate > 0 ? connection.meanStreams / rate : 0
                }
                self.total = total
                perConnection = busy.isEmpty ? 0 : total / Double(busy.count)
                heldMs = busy.isEmpty ? 0 : held / Double(busy.count) * 1000
                text =
                    "at \(millisecondsWithUnit(rttMs)) this provider carries about \(Int(perConnection.rounded()).grouped)/s a connection, \(Int(total.rounded()).grouped)/s in all, with its \(busy.count) connection\(busy.count == 1 ? "" : "s") (here each stream was held \(millisecondsWithUnit(heldMs)))"
                // A provider paced below its streams' bound shows its pace, not its ceiling
                // (newcomer pass 3 read a paced send's 19,848/s as what it could carry).
                if !busy.isEmpty, asSent == busy.count {
                    text += "; what it was sent, not a ceiling: its streams would have carried more"
                }
                // Held much shorter than the round trip, a provider never needed the streams it
                // would keep in flight at that round trip: its peak says too little.
                if heldMs < rttMs / 10 {
                    text +=
                        "; a lower bound: held this briefly the provider needed few streams, so its peak says little of what it keeps in flight at \(millisecondsWithUnit(rttMs)) — give the sink --latency near that round trip"
                }
            }
        }

        public struct Trigger: Codable, Sendable, Equatable {
            public var command: String
            /// Its exit status; `null` if it was still running when the sink stopped (then stopped).
            @Nullable public var exitStatus: Int?
            /// The file in the folder holding its standard output and error.
            public var output: String

            public init(command: String, exitStatus: Int?, output: String) {
                self.command = command
                self.exitStatus = exitStatus
                self.output = output
            }

            enum CodingKeys: String, CodingKey {
                case command
                case exitStatus = "exit_status"
                case output
            }
        }
        public init(
            start: Start,
            endedBy: String,
            expected: Expected,
            delivery: Delivery,
            perSecond: [Second],
            streams: Streams,
            connections: [Connection],
            connectionsNotListed: Int,
            card: Card,
            capacity: Capacity,
            sinkOwn: SinkOwnDelays.Figures,
            trigger: Trigger? = nil
        ) {
            self.start = start
            self.endedBy = endedBy
            self.expected = expected
            self.delivery = delivery
            self.perSecond = perSecond
            self.streams = streams
            self.connections = connections
            self.connectionsNotListed = connectionsNotListed
            self.card = card
            self.capacity = capacity
            self.sinkOwn = sinkOwn
            self.trigger = trigger
        }
    }
}
