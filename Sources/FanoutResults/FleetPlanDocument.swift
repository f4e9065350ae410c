/// `fleet-plan.json`: a campaign across both push services planned as its halves (`fanout plan
/// --fleet`): each half's plan as plan.json holds one, and the campaign's duration, the
/// slower half's.
///
/// ```
///   {"fleet": {"apns": 0.55, "fcm": 0.45}, "apns": {…plan…}, "fcm": {…plan…},
///    "expected_duration_seconds": 1347.1, "slower_half": "fcm"}
/// ```
public struct FleetPlanDocument: Codable, Sendable, Equatable {
    public var fleet: [String: Double]
    public var apns: PlanDocument
    public var fcm: PlanDocument
    public var expectedDurationSeconds: Double
    /// `apns` or `fcm`: the half that ends last.
    public var slowerHalf: String

    enum CodingKeys: String, CodingKey {
        case fleet, apns, fcm
        case expectedDurationSeconds = "expected_duration_seconds"
        case slowerHalf = "slower_half"
    }

    public init(
        fleet: [String: Double],
        apns: PlanDocument,
        fcm: PlanDocument,
        expectedDurationSeconds: Double,
        slowerHalf: String
    ) {
        self.fleet = fleet
        self.apns = apns
        self.fcm = fcm
        self.expectedDurationSeconds = expectedDurationSeconds
        self.slowerHalf = slowerHalf
    }

    public static let fileName = "fleet-plan.json"
}
