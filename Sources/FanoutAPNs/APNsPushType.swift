/// The value of the `apns-push-type` request header.
///
/// Each type fixes the suffix APNs expects on `apns-topic` and the payload size limit.
public enum APNsPushType: String, CaseIterable, Sendable, Hashable {
    case alert
    case background
    case location
    case voip
    case complication
    case fileprovider
    case mdm
    case liveactivity
    case pushtotalk
    case widgets
    case controls

    /// What APNs expects after the bundle identifier in `apns-topic` for this push type.
    ///
    /// Alert and background pushes use the bare bundle identifier; `mdm` topics are the MDM
    /// certificate's own topic, so no suffix applies. A `StaticString`: the sink reads it for
    /// every request, and a `String` costs a reference count up and down each time.
    public var topicSuffix: StaticString {
        switch self {
        case .alert, .background, .mdm: ""
        case .voip: ".voip"
        case .complication: ".complication"
        case .fileprovider: ".pushkit.fileprovider"
        case .liveactivity: ".push-type.liveactivity"
        case .location: ".location-query"
        case .pushtotalk: ".voip-ptt"
        case .widgets: ".push-type.widgets"
        case .controls: ".push-type.controls"
        }
    }

    /// The largest payload APNs accepts for this push type, in bytes; larger ones get 413.
    public var payloadSizeLimit: Int {
        self == .voip ? APNsPayloadLimit.voip : APNsPayloadLimit.standard
    }
}

/// APNs' payload size limits, in bytes.
public enum APNsPayloadLimit {
    /// The limit for every push type but VoIP.
    public static let standard = 4096
    /// The limit for VoIP pushes.
    public static let voip = 5120
}
