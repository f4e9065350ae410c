import FanoutRandom
import FanoutScenarioTerms

/// One device's behaviour, drawn from its token's hash and the fleet's seed: the same token
/// and seed give the same device on every connection, every loop and every run, so a fleet of
/// 50 million devices costs no memory until one of them has something stored.
struct DeviceProfile: Equatable {
    enum Reach: Equatable {
        case online
        /// Back this many nanoseconds after the fan-out's first request (`nil`: not within the run).
        case offline(returnsAfter: UInt64?)
        /// Takes stored priority-5 notifications at `phase + k · interval` after the fan-out's start.
        case lowPower(phase: UInt64)
    }

    enum App: Equatable {
        case enabled
        case disabled
        case uninstalled
    }

    var reach: Reach
    var app: App

    /// The profile of the device whose `TokenList.hash` is `token`.
    init(token: UInt64, settings: DeviceFleetSettings) {
        // Each draw mixes in a constant of its own: the scenario's error mix draws from
        // `mix(token ^ seed)` alone, and a device's state must not follow its errors.
        let reachDraw = Self.unit(SeededRandom.mix(token ^ settings.seed ^ 0x5851_F42D_4C95_7F2D))
        let appDraw = Self.unit(SeededRandom.mix(token ^ settings.seed ^ 0x9E37_79B9_7F4A_7C15))
        if reachDraw < settings.offline {
            var returnsAfter: UInt64?
            if let spread = settings.returnAfter {
                var random = SinkRandom(seed: SeededRandom.mix(token ^ settings.seed ^ 0xC2B2_AE3D_27D4_EB4F))
                returnsAfter = spread.sample(&random)
            }
            reach = .offline(returnsAfter: returnsAfter)
        } else if reachDraw < settings.offline + settings.lowPower {
            let interval = max(1, settings.burstInterval.wholeNanoseconds)
            reach = .lowPower(phase: SeededRandom.mix(token ^ settings.seed ^ 0x1656_67B1_9E37_79F9) % interval)
        } else {
            reach = .online
        }
        if appDraw < settings.disabled {
            app = .disabled
        } else if appDraw < settings.disabled + settings.uninstalled {
            app = .uninstalled
        } else {
            app = .enabled
        }
    }

    init(reach: Reach, app: App) {
        self.reach = reach
        self.app = app
    }

    private static func unit(_ bits: UInt64) -> Double { Double(bits >> 11) * 0x1p-53 }
}
