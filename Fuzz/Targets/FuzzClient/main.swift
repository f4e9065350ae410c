// The client-role connection state machine fed arbitrary server bytes.
//
//   input := options(1) chunk(1) bytes*
//
// A client that has sent three requests (configured by `options`, see
// `Exchange.configuration`) receives `bytes`, `chunk` + 1 bytes at a time, sending one more
// request for each answer, as the load engine would. It must never trap, must open no stream
// beyond its peer's limit, and everything it writes must be well-formed frames.
import FanoutHTTP2
import FuzzHTTP2Support
import FuzzSupport
import NIOCore

runFuzzer(seeds: [0, 0x01, 0x44, 0x80].map { options in [options, 255] + Exchange.transcript(options).server }, test)

func test(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    var input = FuzzInput(start, count)
    let configuration = Exchange.configuration(input.byte())
    let chunk = Int(input.byte()) + 1
    var client = Exchange.client(configuration)
    var check = OutboundCheck(role: .client)
    check.drain(&client)
    // The stream limit is checked where each request opens a stream (`Exchange.converse`):
    // after a chunk, more may be open than a limit the server has since lowered.
    Exchange.feed(&client, &input, chunk: chunk, check: &check) { client in
        precondition(client.openStreams <= client.configuration.maxOutboundStreams, "more streams than configured")
    }
    return 0
}
