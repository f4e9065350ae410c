import NIOCore

/// A client and a server connection, each with its delegate, joined in memory: what
/// `HTTP2ConnectionHandler` does for one end of a channel, done for both ends with no socket
/// between them. Bytes move a whole turn at a time, each turn one read burst:
///
/// ```
///   client.outbound ──► serverTurn: receive(server) ─► server delegate ─► server.outbound
///   server.outbound ──► clientTurn: receive(client) ─► client delegate ─► client.outbound
/// ```
///
/// Single-threaded, and deterministic when the delegates are: the cost gate's workload runs
/// Fanout's sender and sink through it. Delegates' timers (`nextWakeUp`) are not run: a pair
/// suits work that moves on answers alone (the closed model, a sink answering at once).
public struct HTTP2InMemoryPair<Client: HTTP2ConnectionDelegate, Server: HTTP2ConnectionDelegate>: ~Copyable {
    public private(set) var client: HTTP2Connection
    public private(set) var server: HTTP2Connection
    public private(set) var clientDelegate: Client
    public private(set) var serverDelegate: Server
    /// The "socket": a connection's queued bytes are moved into it, read by the peer, and it is
    /// cleared, keeping its capacity (as NIO lets go of a buffer once written).
    private var wire = ByteBufferAllocator().buffer(capacity: 64 * 1024)
    private var ended = false

    /// Joins the two ends; nothing moves before `run`.
    public init(
        client clientDelegate: Client,
        _ clientConfiguration: HTTP2Connection.Configuration = .init(),
        server serverDelegate: Server,
        _ serverConfiguration: HTTP2Connection.Configuration = .init()
    ) {
        client = HTTP2Connection(role: .client, configuration: clientConfiguration)
        server = HTTP2Connection(role: .server, configuration: serverConfiguration)
        self.clientDelegate = clientDelegate
        self.serverDelegate = serverDelegate
    }

    /// Starts both ends and moves bytes until neither has anything to send or `maxTurns`
    /// round trips have passed; then ends both connections (their delegates' `connectionEnded`).
    /// Returns the round trips made, or `nil` when `maxTurns` ran out with bytes still moving.
    public mutating func run(maxTurns: Int) -> Int? {
        precondition(!ended, "an in-memory pair runs once")
        server.withWriter { serverDelegate.connectionStarted(&$0) }
        client.withWriter { clientDelegate.connectionStarted(&$0) }
        var turns = 0
        var quiet = false
        while turns < maxTurns {
            let moved = serverTurn() + clientTurn()
            if moved == 0 {
                quiet = true
                break
            }
            turns += 1
        }
        ended = true
        serverDelegate.connectionEnded(server, error: server.error)
        clientDelegate.connectionEnded(client, error: client.error)
        return quiet ? turns : nil
    }

    /// The server reads what the client wrote since its last turn; returns the bytes read.
    /// Out of line, as is `clientTurn`: the cost gate reads each end's share as the function's
    /// inclusive cost.
    @inline(never)
    public mutating func serverTurn() -> Int {
        client.moveOutbound(into: &wire)
        return Self.read(&wire, into: &server, &serverDelegate)
    }

    /// The client reads what the server wrote since its last turn; returns the bytes read.
    @inline(never)
    public mutating func clientTurn() -> Int {
        server.moveOutbound(into: &wire)
        return Self.read(&wire, into: &client, &clientDelegate)
    }

    /// One read burst, as `HTTP2ConnectionHandler.channelRead` handles it: the clock set once,
    /// every event to the delegate; `wire` is left empty with its capacity.
    @inline(__always)
    private static func read(
        _ wire: inout ByteBuffer,
        into connection: inout HTTP2Connection,
        _ delegate: inout some HTTP2ConnectionDelegate
    ) -> Int {
        let bytes = wire.readableBytes
        connection.bytesArrived(at: NIODeadline.now().uptimeNanoseconds, beginningBurst: true)
        HTTP2Connection.receive(&connection, from: &wire) { event, writer in
            delegate.handle(event, connection: &writer)
        }
        wire.clear()
        // What it queued goes to the peer at its turn, with no time between: "written" now.
        if connection.outbound.count > 0 { delegate.outboundWritten(at: connection.now) }
        return bytes
    }
}
