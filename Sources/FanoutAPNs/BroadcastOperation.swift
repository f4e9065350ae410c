/// What a request on one of APNs's broadcast paths asks (docs/apns.md, "Broadcast channels"):
/// the sink's route names it (`BroadcastRoute`), the provider card's broadcast rules judge it
/// (`BroadcastFindings`).
///
/// ```
///   POST   /1/apps/<bundle-id>/channels        create
///   GET    /1/apps/<bundle-id>/channels        read
///   DELETE /1/apps/<bundle-id>/channels        delete
///   GET    /1/apps/<bundle-id>/all-channels    list
///   POST   /4/broadcasts/apps/<bundle-id>      broadcast
/// ```
package enum BroadcastOperation: Equatable, Sendable { case create, read, delete, list, broadcast }
