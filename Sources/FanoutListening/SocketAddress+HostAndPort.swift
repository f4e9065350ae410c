import NIOCore

extension SocketAddress {
    /// `host:port`, with an IPv6 host in brackets (`[::1]:2197`): how the sinks and the text
    /// endpoints name where they listen and who connected.
    package var hostAndPort: String {
        let host = ipAddress ?? "?"
        let port = port.map(String.init) ?? "?"
        return host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}
