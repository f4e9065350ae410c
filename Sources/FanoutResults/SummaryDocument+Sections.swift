import FanoutFiles
import FanoutMeasure
import FanoutNotation
import FanoutPush
import Foundation

// summary.json's sections on how the run went: its configuration, start, schedule, the
// generator's lag and the open model's pacing.
extension SummaryDocument {
    /// How the open model's arrivals went out: the pacing window asked for (`--coalesce`) and the
    /// largest one used, and the notifications that fell due while every stream their
    /// connection could open was busy (`StreamWaits`): part of their latency is that wait.
    public struct OpenModel: Codable, Sendable, Equatable {
        public var coalesce: String
        public var largestWindowMs: Double
        public var streamWaits: StreamWaits
        /// The schedule's length (its first arrival to its last, seconds) and how long its
        /// arrivals took to go out (to the last one's send, or the cut): the two differ when
        /// the offered rate was above what was carried. `nil` in folders written before they
        /// were kept, and `sendsSeconds` for a run stopped before its last arrival.
        public var scheduleSeconds: Double?
        public var sendsSeconds: Double?
        /// The schedule's arrivals (this run's share) and those sent by then.
        public var arrivals: Int?
        public var arrivalsSent: Int?

        public struct StreamWaits: Codable, Sendable, Equatable {
            /// Outside the warm-up.
            public var count: Int
            /// Of the notifications sent outside the warm-up.
            public var share: Double
            public var longestMs: Double
            /// The fewest streams busy while one waited: the tightest limit met (0: none).
            public var fewestStreams: Int
            /// The most streams busy while one waited: a connection's full allowance (`nil` in
            /// folders written before it was kept).
            public var mostStreams: Int?

            /// Which limit the waits met: APNs's one stream before a connection's first answer, the
            /// server's own once connections had it, or both.
            public enum LimitMet: Sendable, Hashable {
                case firstAnswer
                case serverLimit(Int)
                case serverLimitAfterFirstAnswer(Int)
            }

            /// `nil` when no wait met a stream limit (none waited, or only for writability).
            public var limitMet: LimitMet? {
                let most = max(fewestStreams, mostStreams ?? fewestStreams)
                switch (fewestStreams, most) {
                case (0, _): return nil
                case (_, 1): return .firstAnswer
                case (1, _): return .serverLimitAfterFirstAnswer(most)
                default: return .serverLimit(most)
                }
            }

            public init(count: Int, share: Double, longestMs: Double, fewestStreams: Int, mostStreams: Int? = nil) {
                self.count = count
                self.share = share
                self.longestMs = longestMs
                self.fewestStreams = fewestStreams
                self.mostStreams = mostStreams
            }

            enum CodingKeys: String, CodingKey {
                case count, share
                case longestMs = "longest_ms"
                case fewestStreams = "fewest_streams"
                case mostStreams = "most_streams"
            }
        }

        public init(
            coalesce: String,
            largestWindowMs: Double,
            streamWaits: StreamWaits,
            scheduleSeconds: Double? = nil,
            sendsSeconds: Double? = nil,
            arrivals: Int? = nil,
            arrivalsSent: Int? = nil
        ) {
            self.coalesce = coalesce
            self.largestWindowMs = largestWindowMs
            self.streamWaits = streamWaits
            self.scheduleSeconds = scheduleSeconds
            self.sendsSeconds = sendsSeconds
            self.arrivals = arrivals
            self.arrivalsSent = arrivalsSent
        }

        enum CodingKeys: String, CodingKey {
            case coalesce
            case largestWindowMs = "largest_window_ms"
            case streamWaits = "stream_waits"
            case scheduleSeconds = "schedule_seconds"
            case sendsSeconds = "sends_seconds"
            case arrivals
            case arrivalsSent = "arrivals_sent"
        }

        /// Sends that ended more than this share of the schedule's length late (and 100 ms)
        /// did not keep the offered rate.
        static let keptShare = 0.05

        /// "the sends took 2.24 s for a 1.00 s schedule: 446,212/s of the 1,000,000/s offered
        /// went out, and the rest of the time the notifications queued for streams (in their
        /// latency)"; `nil` when they kept up, or the figures are not there.
        public var keptUpLine: String? {
            guard let schedule = scheduleSeconds, let sends = sendsSeconds, let arrivals, let sent = arrivalsSent,
                arrivals > 1, schedule > 0, sends > 0,
                sends > schedule * (1 + Self.keptShare) + 0.1
            else { return nil }
            let offered = Double(arrivals - 1) / schedule
            let carried = Double(max(0, sent - 1)) / sends
            return
                "the sends took \(String(format: "%.2f", sends)) s for a \(String(format: "%.2f", schedule)) s schedule: "
                + "\(Int(carried.rounded()).grouped)/s of the \(Int(offered.rounded()).grouped)/s offered went out; "
                + "the notifications queued for streams meanwhile, and their latency counts it"
        }

        /// "1,600 notifications (1.6%) waited up to 80.0 ms for a stream (1 stream a connection:
        /// APNs allows one until a connection's first request is accepted)"; `nil` when none did.
        public var streamWaitLine: String? {
            guard streamWaits.count > 0 else { return nil }
            let ramp = "APNs allows one until a connection's first request is accepted"
            let limit =
                switch streamWaits.limitMet {
                case nil: ""
                case .firstAnswer: " (1 stream a connection: \(ramp))"
                case .serverLimitAfterFirstAnswer(let most):
                    " (all \(most) streams a connection busy, the server's limit; 1 before the first answer: \(ramp))"
                case .serverLimit(let most): " (all \(most) streams a connection busy, the server's limit)"
                }
            return
                "\(streamWaits.count.grouped) notifications (\(String(format: "%.1f", streamWaits.share * 100))%) waited up to "
                + "\(String(format: "%.1f", streamWaits.longestMs)) ms for a stream\(limit): part of their latency"
        }
    }
    /// What was asked for: the settings that shape a run, to compare like with like.
    public struct Configuration: Codable, Sendable, Equatable {
        public var endpoint: String
        public var connections: Int
        public var streamsPerConnection: Int
        /// Where the tokens came from, e.g. `generated: 1000000, seed 1, shard 1/2`.
        public var tokens: String
        public var topic: String
        public var pushType: String
        @Nullable public var priority: Int?
        @Nullable public var expiration: Int?
        @Nullable public var collapseID: String?
        public var tokenAuth: Bool
        public var streamTimeoutSeconds: Double
        public var maxAttempts: Int
        public var model: LoadModel
        @Nullable public var schedule: String?
        @Nullable public var durationSeconds: Double?
        public var warmUpSeconds: Double
        public var maxLagSeconds: Double
        /// Schema 5.
        public var maxHarnessShare: Double?
        /// The scenario file that applied (`fanout run --sink-scenario`, `send --scenario`,
        /// `sink --scenario`): its path and SHA-256; `null` for none (schema 7).
        @Nullable public var scenario: FileUse? = nil
        /// `--abort-on`'s conditions as written (an added, optional field): absent without them
        /// and in older folders. The run's verdict is theirs (`aborted`, or every one held).
        public var abortOn: [String]? = nil

        enum CodingKeys: String, CodingKey {
            case endpoint, connections
            case streamsPerConnection = "streams_per_connection"
            case tokens, topic
            case pushType = "push_type"
            case priority, expiration
            case collapseID = "collapse_id"
            case tokenAuth = "token_auth"
            case streamTimeoutSeconds = "stream_timeout_seconds"
            case maxAttempts = "max_attempts"
            case model, schedule
            case durationSeconds = "duration_seconds"
            case warmUpSeconds = "warm_up_seconds"
            case maxLagSeconds = "max_lag_seconds"
            case maxHarnessShare = "max_harness_share"
            case scenario
            case abortOn = "abort_on"
        }

        /// Each setting by its key, as text (`nil` for none), in key order: what report.html
        /// tabulates and what `fanout merge` compares shard by shard.
        public var rows: [(key: String, value: String?)] {
            func text<T>(_ value: T?) -> String? { value.map { "\($0)" } }
            let rows: [(CodingKeys, String?)] = [
                (.collapseID, text(collapseID)), (.connections, text(connections)),
                (.durationSeconds, text(durationSeconds)), (.endpoint, endpoint), (.expiration, text(expiration)),
                (.maxAttempts, text(maxAttempts)), (.maxHarnessShare, text(maxHarnessShare)),
                (.maxLagSeconds, text(maxLagSeconds)), (.model, model.rawValue), (.priority, text(priority)),
                (.pushType, pushType), (.schedule, text(schedule)), (.streamTimeoutSeconds, text(streamTimeoutSeconds)),
                (.streamsPerConnection, text(streamsPerConnection)), (.tokenAuth, text(tokenAuth)), (.tokens, tokens),
                (.topic, topic), (.warmUpSeconds, text(warmUpSeconds)), (.scenario, scenario?.description),
                (.abortOn, abortOn?.joined(separator: "; ")),
            ]
            return rows.filter {
                ($0.0 != .maxHarnessShare || maxHarnessShare != nil) && ($0.0 != .abortOn || abortOn != nil)
            }
            .map { ($0.0.rawValue, $0.1) }
        }
        public init(
            endpoint: String,
            connections: Int,
            streamsPerConnection: Int,
            tokens: String,
            topic: String,
            pushType: String,
            priority: Int? = nil,
            expiration: Int? = nil,
            collapseID: String? = nil,
            tokenAuth: Bool,
            streamTimeoutSeconds: Double,
            maxAttempts: Int,
            model: LoadModel,
            schedule: String? = nil,
            durationSeconds: Double? = nil,
            warmUpSeconds: Double,
            maxLagSeconds: Double,
            maxHarnessShare: Double? = nil,
            scenario: FileUse? = nil,
            abortOn: [String]? = nil
        ) {
            self.endpoint = endpoint
            self.connections = connections
            self.streamsPerConnection = streamsPerConnection
            self.tokens = tokens
            self.topic = topic
            self.pushType = pushType
            self.priority = priority
            self.expiration = expiration
            self.collapseID = collapseID
            self.tokenAuth = tokenAuth
            self.streamTimeoutSeconds = streamTimeoutSeconds
            self.maxAttempts = maxAttempts
            self.model = model
            self.schedule = schedule
            self.durationSeconds = durationSeconds
            self.warmUpSeconds = warmUpSeconds
            self.maxLagSeconds = maxLagSeconds
            self.maxHarnessShare = maxHarnessShare
            self.scenario = scenario
            self.abortOn = abortOn
        }
    }
    /// When sending began, RFC 3339 to the millisecond, and where.
    public struct Start: Codable, Sendable, Equatable {
        /// `--start-at`'s time.
        @Nullable public var scheduled: String?
        /// The first request's; `null` when none went out.
        @Nullable public var firstSend: String?
        public var host: String

        enum CodingKeys: String, CodingKey {
            case scheduled
            case firstSend = "first_send"
            case host
        }
        public init(
            scheduled: String? = nil,
            firstSend: String? = nil,
            host: String
        ) {
            self.scheduled = scheduled
            self.firstSend = firstSend
            self.host = host
        }
    }
    public struct Schedule: Codable, Sendable, Equatable {
        public struct Stage: Codable, Sendable, Equatable {
            public var durationSeconds: Double
            public var targetPerSecond: Double

            enum CodingKeys: String, CodingKey {
                case durationSeconds = "duration_seconds"
                case targetPerSecond = "target_per_second"
            }
            public init(
                durationSeconds: Double,
                targetPerSecond: Double
            ) {
                self.durationSeconds = durationSeconds
                self.targetPerSecond = targetPerSecond
            }
        }

        public var description: String
        public var startRatePerSecond: Double
        public var stages: [Stage]
        /// Arrivals the schedule plans; `null` for an endless one.
        @Nullable public var planned: Int?
        /// Why the rate was not the user's own (Apple's hosts' cap); absent when it was.
        public var capped: String? = nil

        enum CodingKeys: String, CodingKey {
            case description
            case startRatePerSecond = "start_rate_per_second"
            case stages, planned, capped
        }
        public init(
            description: String,
            startRatePerSecond: Double,
            stages: [Stage],
            planned: Int? = nil,
            capped: String? = nil
        ) {
            self.description = description
            self.startRatePerSecond = startRatePerSecond
            self.stages = stages
            self.planned = planned
            self.capped = capped
        }
    }
    /// The open model's generator lag, milliseconds: p99, the largest, and the limit.
    public struct GeneratorLag: Codable, Sendable, Equatable {
        public var p99: Double
        public var max: Double
        public var limit: Double
        public init(
            p99: Double,
            max: Double,
            limit: Double
        ) {
            self.p99 = p99
            self.max = max
            self.limit = limit
        }
    }
    public struct UnscheduledReasons: Codable, Sendable, Equatable {
        /// Tokens read past the schedule's end (or the closed model's duration).
        public var scheduleOver: Int
        /// The open model's arrivals due after the last token.
        public var tokensRanOut: Int

        public init(scheduleOver: Int, tokensRanOut: Int) {
            self.scheduleOver = scheduleOver
            self.tokensRanOut = tokensRanOut
        }

        enum CodingKeys: String, CodingKey {
            case scheduleOver = "schedule_over"
            case tokensRanOut = "tokens_ran_out"
        }
    }
}

extension SummaryDocument {
    /// `"aborted"`: the `--abort-on` condition that stopped the run.
    ///
    /// ```
    /// "aborted": {"condition": "p99 > 200ms", "window_seconds": 10, "after_seconds": 13,
    ///             "measured": 1000.001, "unit": "ms"}
    /// ```
    ///
    /// A merge keeps the shard that aborted first, named by `shard` (its `--shard`, or its folder).
    public struct Aborted: Codable, Sendable, Equatable {
        /// As written: `p99 > 200ms`, `window(5s).p99 > 1s`, `errors > 1%`.
        public var condition: String
        public var windowSeconds: Int
        /// From the run's start to the second it was judged.
        public var afterSeconds: Double
        /// The window's figure, in `unit` (`%` for a share).
        public var measured: Double
        public var unit: String
        /// A latency's lower bound: how many were still unanswered `unansweredAfterSeconds`
        /// after they were sent, counted just over the limit.
        public var unanswered: Int?
        public var unansweredAfterSeconds: Int?
        public var shard: String?

        public init(
            condition: String,
            windowSeconds: Int,
            afterSeconds: Double,
            measured: Double,
            unit: String,
            unanswered: Int? = nil,
            unansweredAfterSeconds: Int? = nil,
            shard: String? = nil
        ) {
            self.condition = condition
            self.windowSeconds = windowSeconds
            self.afterSeconds = afterSeconds
            self.measured = measured
            self.unit = unit
            self.unanswered = unanswered
            self.unansweredAfterSeconds = unansweredAfterSeconds
            self.shard = shard
        }

        enum CodingKeys: String, CodingKey {
            case condition
            case windowSeconds = "window_seconds"
            case afterSeconds = "after_seconds"
            case measured, unit, unanswered
            case unansweredAfterSeconds = "unanswered_after_seconds"
            case shard
        }

        /// `aborted after 13.0 s: p99 > 200ms over the last 10 s (measured 1000.001 ms)`, with
        /// the shard first in a merge.
        public var line: String {
            let value = measured == measured.rounded() ? String(Int(measured)) : String(format: "%.3f", measured)
            let figure = unit.isEmpty ? value : unit == "%" || unit == "/s" ? value + unit : "\(value) \(unit)"
            let bound = unanswered.map { count in
                ", at least: \(count.grouped) notifications unanswered \(unansweredAfterSeconds ?? 0) s after they were sent"
            }
            return (shard.map { "shard \($0) " } ?? "")
                + "aborted after \(String(format: "%.1f", afterSeconds)) s: \(condition) over the last "
                + "\(windowSeconds) s (measured \(figure)\(bound ?? ""))"
        }
    }
}

extension SummaryDocument {
    /// The push service the run sent to: FCM's runs say `push_type` "fcm".
    public var service: PushService { configuration.pushType == "fcm" ? .fcm : .apns }
}
