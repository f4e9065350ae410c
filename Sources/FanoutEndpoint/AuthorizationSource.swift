/// Where a request's `authorization` comes from, renewed as it ages: APNs' provider tokens
/// (`ProviderTokens`), FCM's OAuth2 access tokens (`FCMBearerTokens`), or one fixed value
/// (`FixedAuthorization`). Each new value has a higher generation, so a connection learns of a
/// renewal by comparing a number and rebuilds its request fields only then.
package protocol AuthorizationSource: AnyObject, Sendable {
    /// The value to send now and its generation; `nil` while there is none valid (then a
    /// connection keeps the value it has).
    func authorization() -> (value: String, generation: Int)?
    /// The endpoint refused generation `generation`'s value (FCM: 401 without an error code):
    /// a source that can renew it does so at once.
    func refused(generation: Int)
    /// The run is over: a source that renews on a timer stops (`FCMBearerTokens.stop`).
    func stop()
    /// Whether a refused value is replaced (`refused` fetches another): then a refusal is
    /// tried again, not the end of the endpoint.
    var renews: Bool { get }
}

extension AuthorizationSource {
    package func stop() {}
}

extension ProviderTokens: AuthorizationSource {
    package var renews: Bool { true }
    package func authorization() -> (value: String, generation: Int)? { current() }
    /// APNs says an old token is old (403 ExpiredProviderToken), and the next `current()` past
    /// the refresh interval signs a new one: nothing to do early.
    package func refused(generation: Int) {}
}

extension FCMBearerTokens: AuthorizationSource {
    package var renews: Bool { true }
    package func authorization() -> (value: String, generation: Int)? { current() }
}

/// One `authorization` value for the whole run (`fanout send --fcm-bearer`: an access token
/// from `gcloud auth print-access-token`, or any bearer for a sink that takes any): never
/// renewed, so a refusal stays a refusal.
package final class FixedAuthorization: AuthorizationSource {
    private let value: String

    package init(_ value: String) { self.value = value }

    package func authorization() -> (value: String, generation: Int)? { (value, 1) }
    package func refused(generation: Int) {}
    package var renews: Bool { false }
}
