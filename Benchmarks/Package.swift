// swift-tools-version: 6.1
import PackageDescription

import struct Foundation.URL

// A path dependency's identity is its folder's name, which is whatever a clone was called.
let fanout = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .lastPathComponent.lowercased()

/// One benchmark target, `Benchmarks/NAME`, run by package-benchmark's plugin: Fanout's `fanout`
/// modules it measures, swift-nio's `nio` modules it drives them with, and `peers` it measures
/// them beside.
func benchmark(
    _ name: String,
    fanout modules: [String],
    nio: [String] = [],
    peers: [Target.Dependency] = []
) -> Target {
    .executableTarget(
        name: name,
        dependencies: [.product(name: "Benchmark", package: "benchmark")]
            + modules.map { .product(name: $0, package: fanout) }
            + nio.map { .product(name: $0, package: "swift-nio") } + peers,
        path: "Benchmarks/" + name,
        plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
    )
}

// Fanout's benchmarks: a package of their own so that the benchmark dependency never enters the
// product's build. Each target measures one area side by side with its peer.
let package = Package(
    name: "FanoutBenchmarks",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(path: "../"),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        // The peer in HPACKBenchmarks only; the product does not depend on it.
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        // The peer in ReturnBench only (the well-kept client issue #63 names); the product does
        // not depend on it.
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
    ],
    targets: [
        benchmark("PayloadBenchmarks", fanout: ["FanoutPayload"], nio: ["NIOCore"]),
        benchmark("TokenBenchmarks", fanout: ["FanoutTokens"]),
        benchmark("FCMBenchmarks", fanout: ["FanoutFCM", "FanoutFCMSink", "FanoutHTTP2"], nio: ["NIOCore"]),
        benchmark(
            "HPACKBenchmarks",
            fanout: ["FanoutHPACK"],
            nio: ["NIOCore"],
            peers: [.product(name: "NIOHPACK", package: "swift-nio-http2")]
        ),
        benchmark("HTTP2Benchmarks", fanout: ["FanoutHPACK", "FanoutHTTP2"], nio: ["NIOCore"]),
        // The HTTP/2 server and client as programs, for scripts/bench/http2.sh.
        .executableTarget(
            name: "h2bench",
            dependencies: [
                .product(name: "FanoutHTTP2", package: fanout),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Tools/H2Bench"
        ),
        // The return wave's pools beside async-http-client, for scripts/bench/return-client.sh.
        .executableTarget(
            name: "returnbench",
            dependencies: [
                .product(name: "FanoutReturn", package: fanout),
                .product(name: "FanoutDevices", package: fanout),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Tools/ReturnBench"
        ),
    ],
    swiftLanguageModes: [.v6]
)
