import FanoutMeasure

/// `search.json`: what `fanout search` asked, each step, and the answer.
public struct SearchDocument: Codable, Sendable, Equatable {
    public var version: Int
    /// `--target`, and the objectives every step must hold, as written.
    public var target: String
    public var objectives: [String]
    public var from: Double
    public var to: Double
    public var precision: Double
    public var maxSteps: Int
    public var stepDurationSeconds: Double
    public var warmUpSeconds: Double
    public var steps: [Step]
    /// `null` while the search runs, or when it was stopped.
    @Nullable public var answer: Answer?
    public var answerText: String
    /// The signal that stopped the search (`SIGINT`, `SIGTERM`, `SIGHUP`); absent when none did
    /// (an added, optional field).
    public var stoppedBy: String? = nil

    enum CodingKeys: String, CodingKey {
        case version, target, objectives
        case from = "from_per_second"
        case to = "to_per_second"
        case precision
        case maxSteps = "max_steps"
        case stepDurationSeconds = "step_duration_seconds"
        case warmUpSeconds = "warm_up_seconds"
        case steps, answer
        case answerText = "answer_text"
        case stoppedBy = "stopped_by"
    }

    public struct Step: Codable, Sendable, Equatable {
        public var step: Int
        public var offered: Double
        /// `RateSearch.Purpose`'s raw value.
        public var purpose: String
        public var folder: String
        public var achieved: Double
        public var p50: Double
        public var p99: Double
        public var errorShare: Double
        /// `RateSearch.Outcome`'s raw value.
        public var outcome: String
        public var reasons: [String]

        enum CodingKeys: String, CodingKey {
            case step
            case offered = "offered_per_second"
            case purpose, folder
            case achieved = "achieved_per_second"
            case p50 = "p50_ms"
            case p99 = "p99_ms"
            case errorShare = "error_share"
            case outcome, reasons
        }
        public init(
            step: Int,
            offered: Double,
            purpose: String,
            folder: String,
            achieved: Double,
            p50: Double,
            p99: Double,
            errorShare: Double,
            outcome: String,
            reasons: [String]
        ) {
            self.step = step
            self.offered = offered
            self.purpose = purpose
            self.folder = folder
            self.achieved = achieved
            self.p50 = p50
            self.p99 = p99
            self.errorShare = errorShare
            self.outcome = outcome
            self.reasons = reasons
        }
    }

    /// `RateSearch.Answer`: its kind, the rate found (`null` when none passed), and the rates
    /// that bound it from above (`null` where the kind has none).
    public struct Answer: Codable, Sendable, Equatable {
        /// `found`, `at-least`, `generator-limit`, `no-rate` or `steps-exhausted`.
        public var kind: String
        @Nullable public var rate: Double?
        @Nullable public var failed: Double?
        @Nullable public var generatorLimit: Double?

        enum CodingKeys: String, CodingKey {
            case kind
            case rate = "rate_per_second"
            case failed = "failed_per_second"
            case generatorLimit = "generator_limit_per_second"
        }

        public init(kind: String, rate: Double? = nil, failed: Double? = nil, generatorLimit: Double? = nil) {
            self.kind = kind
            self.rate = rate
            self.failed = failed
            self.generatorLimit = generatorLimit
        }
    }
    public init(
        version: Int,
        target: String,
        objectives: [String],
        from: Double,
        to: Double,
        precision: Double,
        maxSteps: Int,
        stepDurationSeconds: Double,
        warmUpSeconds: Double,
        steps: [Step],
        answer: Answer? = nil,
        answerText: String,
        stoppedBy: String? = nil
    ) {
        self.version = version
        self.target = target
        self.objectives = objectives
        self.from = from
        self.to = to
        self.precision = precision
        self.maxSteps = maxSteps
        self.stepDurationSeconds = stepDurationSeconds
        self.warmUpSeconds = warmUpSeconds
        self.steps = steps
        self.answer = answer
        self.answerText = answerText
        self.stoppedBy = stoppedBy
    }
}
