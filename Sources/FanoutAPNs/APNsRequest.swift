/// An APNs request's path and header names (docs/apns.md, "Request"), spelled once for the
/// sender that writes them and the sink that reads them.
///
/// ```
///   :method              POST
///   :path                /3/device/<device token, hex>
///   authorization        bearer <provider token>            token auth only
///   apns-topic           <bundle id>[.voip|.complication|…]
///   apns-push-type       alert | background | voip | …
///   apns-priority        10 | 5 | 1                         optional
///   apns-expiration      <UNIX seconds>                     optional
///   apns-collapse-id     <at most 64 bytes>                 optional
///   apns-id              <UUID, 8-4-4-4-12>                 optional; APNs makes one if absent
/// ```
///
/// The names are `StaticString`s read through `@inlinable` accessors: no global to initialise
/// on the hot path, and their bytes can be compared in place.
public enum APNsRequest {
    /// `:path` is this prefix followed by the device token in hex.
    @inlinable public static var devicePathPrefix: StaticString { "/3/device/" }
    /// A broadcast's path before its bundle id (docs/apns.md, "Broadcast channels").
    @inlinable public static var broadcastPathPrefix: StaticString { "/4/broadcasts/apps/" }

    /// The header names APNs reads.
    public enum Header {
        @inlinable public static var authorization: StaticString { "authorization" }
        @inlinable public static var topic: StaticString { "apns-topic" }
        @inlinable public static var pushType: StaticString { "apns-push-type" }
        @inlinable public static var priority: StaticString { "apns-priority" }
        @inlinable public static var expiration: StaticString { "apns-expiration" }
        @inlinable public static var collapseID: StaticString { "apns-collapse-id" }
        @inlinable public static var apnsID: StaticString { "apns-id" }
        /// A broadcast's channel (docs/apns.md, "Broadcast channels").
        @inlinable public static var channelID: StaticString { "apns-channel-id" }
        /// A broadcast's or channel request's id, which APNs echoes.
        @inlinable public static var requestID: StaticString { "apns-request-id" }
    }

    /// The MAX_CONCURRENT_STREAMS APNs advertises once a connection has been accepted (1 before
    /// the first request with token auth; 500 and 1500 have also been seen: docs/apns.md,
    /// "Connection"): the sink's default, and the sender's default cap per connection.
    public static let concurrentStreams = 1000
}
