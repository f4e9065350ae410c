// swift-tools-version: 6.1
import PackageDescription

import struct Foundation.URL

// A path dependency's identity is its folder's name, which is whatever a clone was called.
let fanout = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .lastPathComponent.lowercased()

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
    ],
    targets: [
        .executableTarget(
            name: "PayloadBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "FanoutPayload", package: fanout),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Benchmarks/PayloadBenchmarks",
            plugins: [
                .plugin(name: "BenchmarkPlugin", package: "benchmark")
            ]
        ),
        .executableTarget(
            name: "TokenBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "FanoutTokens", package: fanout),
            ],
            path: "Benchmarks/TokenBenchmarks",
            plugins: [
                .plugin(name: "BenchmarkPlugin", package: "benchmark")
            ]
        ),
        .executableTarget(
            name: "HPACKBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "FanoutHPACK", package: fanout),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
            ],
            path: "Benchmarks/HPACKBenchmarks",
            plugins: [
                .plugin(name: "BenchmarkPlugin", package: "benchmark")
            ]
        ),
        .executableTarget(
            name: "HTTP2Benchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "FanoutHPACK", package: fanout),
                .product(name: "FanoutHTTP2", package: fanout),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Benchmarks/HTTP2Benchmarks",
            plugins: [
                .plugin(name: "BenchmarkPlugin", package: "benchmark")
            ]
        ),
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
    ],
    swiftLanguageModes: [.v6]
)
