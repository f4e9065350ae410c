// returnbench: the return wave's hand-written pools beside async-http-client, the well-kept
// client issue #63 names, sending the same burst to the same backend on one event loop, so
// scripts/bench/return-client.sh can say whether the hand-written one earns its place:
//
//   returnbench fanout|ahc --url http://127.0.0.1:PORT --path /x -n N -c C [--http 1.1|2]
//       N GETs of PATH at once, at most C connections (HTTP/2: Fanout multiplexes up to 100
//       streams a connection; async-http-client speaks HTTP/2 only over TLS, so 1.1 here).
//       Prints "CLIENT: N answered, F failed in S s: R req/s, U µs CPU a request".
//
// CPU is this process's (getrusage: user + system), so the backend's is not in it; one event
// loop each, so the two are driven alike.
import AsyncHTTPClient
import FanoutDevices
@_spi(Benchmarks) import FanoutReturn
import Foundation
import NIOCore
import NIOPosix

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data(("returnbench: " + message + "\n").utf8))
    exit(64)
}

var arguments = CommandLine.arguments.dropFirst()
guard let client = arguments.popFirst(), ["fanout", "ahc"].contains(client) else {
    fail("usage: returnbench fanout|ahc --url URL --path PATH -n N -c C [--http 1.1|2]")
}
var values: [String: String] = [:]
while let key = arguments.popFirst() {
    guard let value = arguments.popFirst() else { fail("\(key) needs a value") }
    values[key] = value
}
guard let url = values["--url"], let count = Int(values["-n"] ?? ""), let connections = Int(values["-c"] ?? "") else {
    fail("--url, -n and -c are required")
}
let path = values["--path"] ?? "/"
let http = ReturnHTTPVersion(rawValue: values["--http"] ?? "1.1") ?? .http1

func cpuMicroseconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e6
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec)
}

let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
let started = (ContinuousClock.now, cpuMicroseconds())
var answered = 0
var failed = 0
switch client {
case "fanout":
    let target: ReturnURL
    do { target = try ReturnURL(parsing: url) } catch { fail("\(error)") }
    let result = try ReturnClientBench.send(
        count: count,
        path: path,
        to: target,
        pool: connections,
        http: http,
        on: group.next()
    ).wait()
    (answered, failed) = (result.answered, result.failed)
default:
    var configuration = HTTPClient.Configuration()
    configuration.connectionPool = .init(
        idleTimeout: .seconds(60),
        concurrentHTTP1ConnectionsPerHostSoftLimit: connections
    )
    configuration.httpVersion = http == .http2 ? .automatic : .http1Only
    let httpClient = HTTPClient(eventLoopGroupProvider: .shared(group), configuration: configuration)
    let futures = (0..<count).map { _ in httpClient.get(url: url + path) }
    for future in futures {
        if let response = try? future.wait(), response.status.code < 400 { answered += 1 } else { failed += 1 }
    }
    try httpClient.syncShutdown()
}
let seconds = (ContinuousClock.now - started.0) / .seconds(1)
let cpu = (cpuMicroseconds() - started.1) / Double(max(1, count))
print(
    "\(client): \(answered) answered, \(failed) failed in \(String(format: "%.3f", seconds)) s: "
        + "\(Int((Double(answered) / seconds).rounded())) req/s, \(String(format: "%.2f", cpu)) µs CPU a request"
)
try group.syncShutdownGracefully()
