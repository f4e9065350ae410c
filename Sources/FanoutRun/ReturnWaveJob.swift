import Dispatch
import FanoutDevices
import FanoutMeasure
import FanoutNotation
import FanoutResults
import FanoutReturn
import NIOPosix
import NIOSSL
import ServiceLifecycle

/// The return wave beside a job's sink (`fanout run`, `fanout sink`): started when the sink's
/// devices engage, and at the job's end waited for — until its last event is due and answered,
/// or a stop signal — then read.
enum ReturnWaveJob {
    /// Whether the wave `engagement` and `settings` describe could start (`ReturnWave.check`),
    /// before the job listens.
    static func check(_ engagement: EngagementSettings, _ settings: ReturnWaveSettings) throws(JobError) {
        do {
            try ReturnWave.check(engagement, settings)
        } catch {
            throw .option(.command, error.description)
        }
    }

    /// A started wave for `fleets` (a sink's; a campaign's two), when their devices engage
    /// (`nil` otherwise), shown at `metrics`' endpoint (`/metrics`) when there is one.
    static func start(
        _ fleets: [DeviceFleetShards],
        _ settings: ReturnWaveSettings,
        metrics: MetricsAdditions? = nil,
        reporter: any JobReporter
    ) throws(JobError) -> ReturnWave? {
        guard let first = fleets.first, first.settings.engagement.isEnabled else { return nil }
        let wave: ReturnWave
        do {
            wave = try ReturnWave(fleets: fleets, settings: settings) { reporter.report(.sink(.serving($0))) }
        } catch let error as ReturnSettingsError {
            throw .option(.command, error.description)
        } catch {
            throw .input(.optionValue("--return-ca", settings.trustedCertificatesFile ?? ""), "\(error)")
        }
        wave.start()
        if let metrics {
            let exposition = ReturnWaveMetrics(wave)
            metrics.add { exposition.exposition() }
        }
        return wave
    }

    /// Waits for what is still due (said once, with when the last event is), at most
    /// `settings.waitLimit`, then stops the wave and reads its figures: what was not due by
    /// then is counted not sent.
    static func finish(
        _ wave: ReturnWave,
        _ settings: ReturnWaveSettings,
        reporter: any JobReporter
    ) throws(JobError) -> ReturnWaveSummary {
        do {
            let (events, requests) = try wave.outstanding()
            if events + requests > 0 {
                let remaining = min(wave.remaining, settings.waitLimit ?? wave.remaining)
                reporter.report(
                    .sink(
                        .serving(
                            "waiting for the return wave: \(events) events and \(requests) requests outstanding, at most \(Int(remaining.seconds.rounded(.up))) s more (a stop signal ends it)"
                        )
                    )
                )
                _ = try wave.settle(within: remaining)
            }
            return try wave.finish()
        } catch {
            throw .resource(.part("the return wave's event loop"), "\(error)")
        }
    }

    /// A sink's wave at its job's end (`fanout sink`, either service), when it has one: the sink
    /// takes no more sends (`drain`) while the wave is waited for (`finish`); the wave is
    /// stopped if that fails.
    static func finish(
        _ wave: ReturnWave?,
        _ settings: ReturnWaveSettings,
        stoppedBySignal: Bool,
        reporter: any JobReporter,
        draining drain: @escaping @Sendable () -> Void
    ) async throws -> ReturnWaveSummary? {
        guard let wave else { return nil }
        try await NIOThreadPool.singleton.runIfActive { drain() }
        do {
            return try await finish(wave, settings, stoppedBySignal: stoppedBySignal, reporter: reporter)
        } catch {
            wave.stop()
            throw error
        }
    }

    /// A sink's wave at its job's end (`fanout sink`, either service): after a stop signal its
    /// figures at once, else `finish` — what is due sent and answered — with a stop signal
    /// ending the wait.
    static func finish(
        _ wave: ReturnWave,
        _ settings: ReturnWaveSettings,
        stoppedBySignal: Bool,
        reporter: any JobReporter
    ) async throws -> ReturnWaveSummary {
        guard !stoppedBySignal else {
            return try await NIOThreadPool.singleton.runIfActive { try wave.finish() }
        }
        return try await withThrowingTaskGroup(of: ReturnWaveSummary?.self) { group in
            group.addTask {
                try? await gracefulShutdown()
                wave.interrupt()
                return nil
            }
            group.addTask {
                try await NIOThreadPool.singleton.runIfActive { try finish(wave, settings, reporter: reporter) }
            }
            while let result = try await group.next() {
                if let result {
                    group.cancelAll()
                    return result
                }
            }
            throw JobError.resource(.part("the return wave"), "it ended without its figures")
        }
    }
}

/// A campaign's other half, as the wave of the half that sends it sees it (`run --fleet`: the
/// APNs half's run sends the FCM half's devices' events too): its fleet, and when its sends
/// have ended, so that the wave is finished only after both halves' deliveries.
struct WaveCompanion: Sendable {
    let fleet: DeviceFleetShards
    let sendsEnded = SendsEnded()
}

/// A half's sends ended (`ended()`, once, on any outcome); `wait()` returns from then on.
final class SendsEnded: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)

    func ended() { semaphore.signal() }

    /// Bounded by the other half's run, which its own timeouts and a stop signal bound (and
    /// `ended()` is called however it ends).
    func wait() {
        semaphore.wait()
        semaphore.signal()
    }
}
