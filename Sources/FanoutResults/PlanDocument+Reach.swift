import FanoutMeasure

extension PlanDocument {
    /// plan.json's `reach` (with `fanout plan --device-…`; absent otherwise and in older plans):
    /// when the fan-out reaches a share of the devices, not only when APNs has accepted it.
    /// Shares are of all devices (0...1), times seconds from the fan-out's start.
    public struct Reach: Codable, Sendable, Equatable {
        /// The fleet asked about: the share offline, their return spread (`never`), the
        /// notifications' expiration after sending (`null`: none sent, stored for the default).
        public var offline: Double
        public var returnAfter: String
        @Nullable public var expirationSeconds: Double?
        public var defaultExpirySeconds: Double
        /// When APNs has accepted the fan-out (the plan's expected duration), and the share reached then.
        public var acceptedSeconds: Double
        public var atAcceptance: Double
        /// The share reached some time after acceptance.
        public var after: [Later]
        /// When each share of the devices had it (`null`: never).
        public var targets: [Target]
        /// The share reached in the end (the rest lost by design).
        public var finalShare: Double
        /// Devices modelled (Monte Carlo).
        public var samples: Int

        public struct Later: Codable, Sendable, Equatable {
            public var seconds: Double
            public var share: Double

            public init(seconds: Double, share: Double) {
                self.seconds = seconds
                self.share = share
            }
        }

        public struct Target: Codable, Sendable, Equatable {
            public var share: Double
            @Nullable public var seconds: Double?

            public init(share: Double, seconds: Double?) {
                self.share = share
                self.seconds = seconds
            }
        }

        public init(
            offline: Double,
            returnAfter: String,
            expirationSeconds: Double?,
            defaultExpirySeconds: Double,
            acceptedSeconds: Double,
            atAcceptance: Double,
            after: [Later],
            targets: [Target],
            finalShare: Double,
            samples: Int
        ) {
            self.offline = offline
            self.returnAfter = returnAfter
            self.expirationSeconds = expirationSeconds
            self.defaultExpirySeconds = defaultExpirySeconds
            self.acceptedSeconds = acceptedSeconds
            self.atAcceptance = atAcceptance
            self.after = after
            self.targets = targets
            self.finalShare = finalShare
            self.samples = samples
        }

        enum CodingKeys: String, CodingKey {
            case offline
            case returnAfter = "return_after"
            case expirationSeconds = "expiration_seconds"
            case defaultExpirySeconds = "default_expiry_seconds"
            case acceptedSeconds = "accepted_seconds"
            case atAcceptance = "at_acceptance"
            case after, targets
            case finalShare = "final_share"
            case samples
        }
    }
}
