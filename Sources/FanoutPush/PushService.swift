/// The push services Fanout sends through and mocks: Apple's APNs and Google's FCM HTTP v1.
public enum PushService: String, Sendable, Hashable, CaseIterable, Codable {
    case apns, fcm

    /// `APNs`, `FCM`: as lines name it.
    public var name: String { self == .apns ? "APNs" : "FCM" }
}
