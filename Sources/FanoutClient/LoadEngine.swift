import Atomics
import Dispatch
import FanoutAPNs
import FanoutHTTP2
import FanoutMeasure
import FanoutNotation
import FanoutTokens
import Histogram
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

import struct Foundation.Date

/// Fans a token set out over a pool of HTTP/2 connections as fast as they go (the closed
/// model: each connection keeps its streams full), until every token has a final outcome.
///
/// Connections are slots of a `ConnectionPool`, spread over the group's event loops: one that
/// ends while work remains is replaced (within 50 ms after progress, after a growing backoff
/// after failures), and a slot gives up after 8 attempts in a row without progress. When every
/// slot has given up, what is left fails with `connectionLost`.
///
/// Until a connection is answered the endpoint is not known to work: a failure retrying cannot
/// heal (a name not resolved, a certificate not trusted, not HTTP/2, credentials refused on
/// every connection) ends the run at once, and refused or timed-out connects are tried again
/// until `APNsEndpoint.connectTimeout`; then what is left fails with that cause
/// (`Report.unreachable`).
public final class LoadEngine: Sendable {
    public let configuration: LoadConfiguration
    public let statistics = LoadStatistics()
    private let stream: TokenStream
    private let group: any EventLoopGroup
    /// What the engine's callers and its driver share: cancelled, stopped, the channels, the
    /// connections' reports.
    private let control: RunControl
    private var feed: NotificationFeed { control.feed }

    /// The event loops a job gives the engine when not told otherwise: one sender loop already
    /// outruns h2load on h2c (docs/performance.md); TLS and wide fan-outs want more.
    public static let defaultEventLoops = 1

    public init(configuration: LoadConfiguration, tokens: TokenStream, group: any EventLoopGroup) {
        self.configuration = configuration
        stream = tokens
        self.group = group
        control = RunControl(feed: NotificationFeed(tokens))
    }

    /// How long an interrupted run waits for what is in flight to be answered before it closes
    /// its connections: within a second of the signal the run has ended.
    public static var interruptionGrace: Duration { RunControl.interruptionGrace }

    /// Stops the run: connections close, and what is not finished fails as cancelled.
    public func cancel() {
        control.cancel()
    }

    /// Stops the run because of `signal`: no new notification is sent, what is in flight has
    /// `interruptionGrace` to be answered, then `cancel()` closes the connections. Tokens read
    /// ahead and never sent are counted apart (`LoadSnapshot.unsent`), neither sent nor failed.
    /// Only the first call counts.
    public func interrupt(by signal: StopSignal) {
        control.stop(.signal(signal))
    }

    /// Runs to the end (or the deadline, or `cancel()`), blocking the calling thread, which must
    /// not be one of the group's event loops. `progress` is called on that thread about once a
    /// second.
    public func run(progress: ((RunProgress) -> Void)? = nil) -> Report {
        let model = configuration.shape.model
        let start = RunStart(startAt: model.startAt)
        let cpuAtStart = ThreadCPUClock.perLoop(of: group)
        let tickets = model.shardSchedule.map {
            ArrivalTickets(
                schedule: $0,
                slots: configuration.shape.connections,
                start: start.wait > 0 ? start.uptime : 0,
                backlogLimit: model.maxBacklog
            )
        }
        let recording = Recording(
            group: group,
            statistics: statistics,
            start: start.uptime,
            warmUp: model.warmUp,
            tickets: tickets
        )
        let driver = RunDriver(
            configuration: configuration,
            statistics: statistics,
            control: control,
            start: start,
            tickets: tickets,
            recording: recording,
            progress: progress
        )
        driver.drive()
        let gaveUp = driver.gaveUp.map {
            GiveUp(endpoint: "\(configuration.endpoint.host):\(configuration.endpoint.port)", why: $0)
        }
        // An interrupted run does not wait on a reader blocked in a pipe's read: it ends
        // within a second, without the reader's counts if need be.
        let readerWait: Duration = feed.isInterrupted ? .milliseconds(200) : .seconds(10)
        // The reader is waited for once: a stopped run waits before it settles what the feed
        // still holds, and then only looks (a reader past its wait would double it).
        let settles = isCancelled || driver.scheduleEnded
        if settles {
            stream.cancel()
            _ = stream.waitForSummary(timeout: readerWait)
            statistics.add(settleUnfinished(gaveUp: gaveUp))
        }
        recording.finish()
        let stop = control.stop
        var interruption: Report.Interruption? = nil
        var abort: Abort? = nil
        if let stop {
            switch stop.cause {
            case .signal(let signal):
                interruption = .init(signal: signal, after: max(.zero, start.elapsed(at: stop.at)))
            case .abort(let reason): abort = reason
            }
        }
        let end = NIODeadline.now().uptimeNanoseconds
        let cpuAtEnd = ThreadCPUClock.perLoop(of: group)
        var loopDelays = recording.collector.loopDelays
        for index in loopDelays.indices where index < cpuAtEnd.count && index < cpuAtStart.count {
            loopDelays[index].cpuNanoseconds = cpuAtEnd[index] &- cpuAtStart[index]
        }
        return Report(
            snapshot: statistics.snapshot,
            elapsed: max(.zero, start.elapsed(at: end)),
            tokens: settles ? stream.summary : stream.waitForSummary(timeout: readerWait),
            cancelled: isCancelled || stop != nil,
            gaveUp: gaveUp,
            started: start.date,
            scheduledStart: model.startAt,
            firstSend: statistics.firstSendClock.uptime.map(start.date(ofUptime:)),
            schedule: model.shardSchedule,
            warmUp: model.warmUp,
            warmUpStart: recording.collector.warmUpStart.map { max(.zero, start.elapsed(at: $0)) } ?? .zero,
            maxLag: model.maxLag,
            tokensRanOut: stop == nil && !isCancelled ? tickets?.ranOut : nil,
            backlogCut: tickets?.backlogCut,
            sendsEnded: tickets?.sendsEnded.map { .nanoseconds(Int64(min($0, UInt64(Int64.max)))) },
            senderCPU: .nanoseconds(Int64(cpuAtEnd.reduce(0, +) &- cpuAtStart.reduce(0, +))),
            loopDelays: loopDelays,
            interruption: interruption,
            abort: abort,
            lostWrites: configuration.goneTokens?.failure.map {
                [Report.LostWrite(option: "--gone-tokens", failure: "\($0)")]
            }
                ?? []
        )
    }

    /// What the feed still holds when the run stops: each notification's final count. Read
    /// ahead and never sent by an interrupted run: unsent; sent, or the run stopped: failed
    /// (cancelled, or as the endpoint that could not be reached failed); else unscheduled (the
    /// schedule ended before it).
    private func settleUnfinished(gaveUp: GiveUp?) -> LoadCounts {
        var counts = LoadCounts()
        let lost = gaveUp?.unreachable.map { FailureCause($0.cause) } ?? .connectionLost
        for notification in feed.drain() {
            if notification.firstSentAt == 0 && feed.isInterrupted {
                counts.unsent += 1
            } else if isCancelled || notification.firstSentAt != 0 {
                counts.fail(gaveUp == nil ? .cancelled : lost)
            } else {
                counts.unscheduled += 1
            }
            notification.finish()
        }
        return counts
    }

    private var isCancelled: Bool { control.isCancelled }
}
