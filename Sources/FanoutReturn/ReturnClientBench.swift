import FanoutDevices
import NIOCore
import NIOHTTP1

/// The wave's pools driven flat out, for the benchmark that compares them with
/// async-http-client (Benchmarks/Tools/ReturnBench, scripts/bench/return-client.sh; issue #63:
/// "a hand-written one must earn its place by a benchmark"). Not part of the product's API.
@_spi(Benchmarks)
public enum ReturnClientBench {
    /// Sends `count` GET `path` requests to `url` at once through the wave's pool — HTTP/1.1 or
    /// HTTP/2, at most `pool` connections — on `loop`; the future holds how many were answered
    /// below 400 and how many were not, once all have ended.
    public static func send(
        count: Int,
        path: String,
        to url: ReturnURL,
        pool: Int,
        http: ReturnHTTPVersion,
        on loop: any EventLoop
    ) -> EventLoopFuture<(answered: Int, failed: Int)> {
        loop.flatSubmit {
            let counter = Counter(expected: count, promise: loop.makePromise())
            let timeout = TimeAmount.seconds(30)
            let transport = http.pool(
                loop: loop,
                target: url,
                size: pool,
                streams: ReturnHTTP2Pool.defaultStreams,
                requestTimeout: timeout,
                tls: nil,
                outcomes: counter
            )
            var headers = HTTPHeaders()
            headers.add(name: "host", value: url.host)
            let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: url.pathPrefix + path, headers: headers)
            let due = NIODeadline.now().uptimeNanoseconds
            for _ in 0..<count { transport.send(ReturnRequest(kind: .launch, due: due, head: head, body: nil)) }
            // Closed after the last answer's callback has returned: closing from inside it would
            // reach back into the connection still handing that answer over.
            return counter.promise.futureResult.flatMap { result in
                loop.submit {
                    transport.close()
                    return result
                }
            }
        }
    }

    private final class Counter: ReturnOutcomes {
        let expected: Int
        let promise: EventLoopPromise<(answered: Int, failed: Int)>
        var answered = 0
        var failed = 0

        init(expected: Int, promise: EventLoopPromise<(answered: Int, failed: Int)>) {
            self.expected = expected
            self.promise = promise
            if expected == 0 { promise.succeed((0, 0)) }
        }

        func answered(_ request: ReturnRequest, status: Int, sentAt: UInt64, now: UInt64) {
            if status < 400 { answered += 1 } else { failed += 1 }
            ended()
        }

        func failed(_ request: ReturnRequest, _ failure: ReturnFailure, now: UInt64) {
            failed += 1
            ended()
        }

        func unreachable(_ message: String) {}

        private func ended() {
            if answered + failed == expected { promise.succeed((answered, failed)) }
        }
    }
}
