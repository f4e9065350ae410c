// The server-role connection state machine fed arbitrary client bytes.
//
//   input := options(1) chunk(1) bytes*
//
// The connection (configured by `options`, see `Exchange.configuration`) receives the client
// preface and then `bytes`, `chunk` + 1 bytes at a time, answering every request as the sink
// would. It must never trap, must keep to its stream limit, and everything it writes must be
// well-formed frames.
import FanoutHTTP2
import FuzzHTTP2Support
import FuzzSupport
import NIOCore

runFuzzer(seeds: [0, 0x01, 0x44, 0x80].map { options in [options, 255] + Exchange.transcript(options).client }, test)

func test(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    var input = FuzzInput(start, count)
    let configuration = Exchange.configuration(input.byte())
    let chunk = Int(input.byte()) + 1
    var server = HTTP2Connection(role: .server, configuration: configuration)
    var check = OutboundCheck(role: .server)
    Exchange.feed(&server, &input, chunk: chunk, start: http2ConnectionPreface, check: &check) { server in
        precondition(server.openStreams <= Int(configuration.maxConcurrentStreams), "more streams open than allowed")
    }
    return 0
}
