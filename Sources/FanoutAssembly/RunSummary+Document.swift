import FanoutClient
import FanoutNotation
import FanoutResults

// MARK: summary.json, from the run's report

extension RunSummary {
    /// `summary.json`.
    public var document: SummaryDocument {
        let snapshot = report.snapshot
        let shard = configuration.shape.model.shard
        // Notifications not sent for want of the other half: tokens read past the schedule's
        // end (or the closed model's duration), and arrivals due after the last token.
        let arrivalsWithoutToken = Int(report.tokensRanOut?.arrivals ?? 0)
        var document = SummaryDocument(
            schemaVersion: Self.schemaVersion,
            configuration: configurationDocument,
            environment: environment,
            started: started,
            endpoint: endpoint,
            connections: connections,
            streamsPerConnection: streamsPerConnection,
            elapsedSeconds: seconds,
            sent: snapshot.sent,
            accepted: snapshot.accepted,
            rejected: snapshot.rejected,
            failed: snapshot.failed,
            skipped: snapshot.skipped,
            requests: snapshot.requests,
            retries: snapshot.retries,
            throughputPerSecond: measured ? throughput : nil,
            latency: measured ? SummaryDocument.Latency(milliseconds: latency(at:)) : nil,
            digest: snapshot.digest.description,
            cancelled: report.cancelled,
            reconciled: reconciliation?.agrees,
            cpu: cpuDocument,
            harness: harness.document,
            start: SummaryDocument.Start(
                scheduled: report.scheduledStart.map(TimeNotation.format),
                firstSend: report.firstSend.map(TimeNotation.format),
                host: environment.hostname
            ),
            shard: shard == .all ? nil : shard.description,
            model: report.schedule == nil ? .closed : .open,
            schedule: scheduleDocument,
            generatorLag: generatorLagDocument,
            warmUpSeconds: report.warmUp.seconds,
            unscheduled: snapshot.unscheduled + arrivalsWithoutToken,
            unscheduledReasons: .init(scheduleOver: snapshot.unscheduled, tokensRanOut: arrivalsWithoutToken),
            valid: valid,
            invalidReasons: invalidReasons,
            intervals: intervalDocuments,
            tokens: report.tokens.map {
                .init(
                    read: Int($0.tokens),
                    lines: Int($0.lines),
                    turnedDown: Int($0.skipped),
                    otherService: $0.otherService > 0 ? Int($0.otherService) : nil
                )
            },
            abandoned: report.abandoned,
            sink: reconciliation.map(Self.sinkDocument),
            unsent: snapshot.unsent > 0 ? snapshot.unsent : nil,
            openModel: openModelDocument,
            delivery: delivery,
            broadcast: broadcast,
            aborted: abortedDocument,
            fineIntervals: .init(
                counts: snapshot.fineCompleted,
                binMilliseconds: Int(FineBins.width / 1_000_000),
                elapsedSeconds: seconds,
                completed: snapshot.intervals.map(\.completed).reduce(0, +)
            ),
            resent: snapshot.resent > 0 ? snapshot.resent : nil
        )
        document.returnWave = returnWave
        document.sample = sample
        document.command = Invocation.command
        return document
    }

    /// The `--abort-on` condition that stopped the run, if one did.
    var abortedDocument: SummaryDocument.Aborted? {
        report.abort.map {
            .init(
                condition: $0.condition,
                windowSeconds: $0.windowSeconds,
                afterSeconds: $0.after.seconds,
                measured: $0.measured,
                unit: $0.unit,
                unanswered: $0.unanswered?.count,
                unansweredAfterSeconds: $0.unanswered?.lookBack
            )
        }
    }

    /// The CPU the sender (and the sink, when it said) spent, in all and per notification.
    var cpuDocument: SummaryDocument.CPU {
        let sent = report.snapshot.sent
        return SummaryDocument.CPU(
            senderSeconds: report.senderCPU.seconds,
            senderPerNotification: Self.microsecondsPerNotification(report.senderCPU, sent: sent),
            sinkSeconds: sinkCPU.map { $0.seconds },
            sinkPerNotification: sinkCPU.flatMap { Self.microsecondsPerNotification($0, sent: sent) }
        )
    }

    /// The open model's schedule; `nil` for the closed model.
    var scheduleDocument: SummaryDocument.Schedule? {
        report.schedule.map { schedule in
            SummaryDocument.Schedule(
                description: schedule.description,
                startRatePerSecond: schedule.startRate,
                stages: schedule.stages.map {
                    .init(durationSeconds: $0.duration.seconds, targetPerSecond: $0.target)
                },
                planned: schedule.total.map { Int($0) },
                capped: configuration.shape.model.rateNote
            )
        }
    }

    /// How late the open model's generator made notifications; `nil` for the closed model.
    var generatorLagDocument: SummaryDocument.GeneratorLag? {
        guard report.schedule != nil else { return nil }
        let lag = report.snapshot.lag
        return SummaryDocument.GeneratorLag(
            p99: lag.totalCount == 0 ? 0 : lag.valueAtPercentile(99).microsecondsInMilliseconds,
            max: lag.totalCount == 0 ? 0 : lag.max.microsecondsInMilliseconds,
            limit: report.maxLag.milliseconds
        )
    }

    /// The run second by second.
    var intervalDocuments: [SummaryDocument.Interval] {
        report.snapshot.intervals.map { interval in
            SummaryDocument.Interval(
                second: interval.second,
                completed: interval.completed,
                latencyCount: Int(interval.latencies.totalCount),
                p50: interval.p50.microsecondsInMilliseconds,
                p90: interval.p90.microsecondsInMilliseconds,
                p99: interval.p99.microsecondsInMilliseconds,
                max: interval.max.microsecondsInMilliseconds,
                maxLag: interval.maxLag.microsecondsInMilliseconds,
                maxLoopLag: interval.maxLoopLag.microsecondsInMilliseconds,
                readDelayP99: interval.readDelayP99.microsecondsInMilliseconds,
                streamWaits: report.schedule == nil ? nil : interval.streamWaits.count,
                rejected: interval.rejected,
                failed: interval.failed,
                connections: interval.connections,
                inFlight: interval.inFlight,
                cpu: interval.cpuNanoseconds.map { Double($0) / 1e6 }
            )
        }
    }

    /// What the sink counted, beside the sender's counts.
    static func sinkDocument(_ reconciliation: Reconciliation) -> SummaryDocument.Sink {
        SummaryDocument.Sink(
            requests: reconciliation.sinkRequests,
            accepted: reconciliation.sinkAccepted,
            rejected: reconciliation.sinkRejected,
            digest: reconciliation.sinkDigest.description,
            differences: reconciliation.differences
        )
    }

    /// The open model's pacing and waits for streams; `nil` for the closed model.
    var openModelDocument: SummaryDocument.OpenModel? {
        guard report.schedule != nil else { return nil }
        let snapshot = report.snapshot
        let waits = snapshot.streamWaits
        let measured = Int(snapshot.latency.totalCount)
        return SummaryDocument.OpenModel(
            coalesce: configuration.shape.coalescing.description,
            largestWindowMs: Double(snapshot.largestPacingWindow) / 1e6,
            streamWaits: .init(
                count: waits.count,
                share: measured > 0 ? min(1, Double(waits.count) / Double(measured)) : 0,
                longestMs: Double(waits.longest) / 1e6,
                fewestStreams: waits.fewestStreams,
                mostStreams: waits.mostStreams
            ),
            scheduleSeconds: scheduleLength?.seconds,
            sendsSeconds: report.sendsEnded?.seconds,
            arrivals: report.schedule?.total.map { Int(min($0, UInt64(Int.max))) },
            arrivalsSent: arrivalsSent
        )
    }

    /// From the schedule's first arrival to its last; `nil` for the closed model or a schedule
    /// without an end.
    var scheduleLength: Duration? {
        guard let schedule = report.schedule, let total = schedule.total, total > 0,
            let last = schedule.offset(of: total - 1)
        else { return nil }
        return .nanoseconds(Int64(min(last, UInt64(Int64.max))))
    }

    /// The schedule's arrivals that went out: all of them, less those after a cut or without a
    /// token; `nil` when the sends did not end (the run was stopped first).
    var arrivalsSent: Int? {
        guard report.sendsEnded != nil, let total = report.schedule?.total else { return nil }
        let left = report.backlogCut?.arrivals ?? report.tokensRanOut?.arrivals ?? 0
        return Int(min(total - min(total, left), UInt64(Int.max)))
    }

    /// What was asked for: the settings that shape a run, to compare like with like.
    var configurationDocument: SummaryDocument.Configuration {
        let headers = configuration.endpoint.headers
        let model = configuration.shape.model
        // An FCM run names its project where an APNs run names its topic, and has no APNs headers.
        let fcm = configuration.endpoint.fcm
        return SummaryDocument.Configuration(
            endpoint: configuredEndpoint ?? endpoint,
            connections: configuration.shape.connections,
            streamsPerConnection: configuration.shape.streamsPerConnection,
            tokens: tokenSource,
            topic: fcm.map { "projects/\($0.project)" } ?? headers.topic,
            pushType: fcm == nil ? headers.pushType.rawValue : "fcm",
            priority: fcm == nil ? headers.priority?.rawValue : nil,
            expiration: fcm == nil ? headers.expiration : nil,
            collapseID: fcm == nil ? headers.collapseID?.text : nil,
            tokenAuth: configuration.endpoint.authorizations != nil,
            streamTimeoutSeconds: configuration.shape.streamTimeout.seconds,
            maxAttempts: configuration.shape.maxAttempts,
            model: model.schedule == nil ? .closed : .open,
            schedule: model.schedule?.description,
            durationSeconds: (model.schedule?.duration ?? model.duration).map(\.seconds),
            warmUpSeconds: model.warmUp.seconds,
            maxLagSeconds: model.maxLag.seconds,
            maxHarnessShare: model.maxHarnessShare,
            scenario: scenario,
            abortOn: model.abort.map { $0.conditions.map(\.description) }
        )
    }
}
