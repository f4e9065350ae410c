// swift-tools-version: 6.1
import PackageDescription

// Fanout: fans one APNs notification out to millions of device tokens over HTTP/2 and
// measures it truthfully. One module per concern; see README.md for the architecture.
let package = Package(
    name: "fanout",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "fanout", targets: ["fanout"]),
        .library(name: "FanoutAPNs", targets: ["FanoutAPNs"]),
        .library(name: "FanoutPayload", targets: ["FanoutPayload"]),
        .library(name: "FanoutTokens", targets: ["FanoutTokens"]),
        .library(name: "FanoutHTTP2", targets: ["FanoutHTTP2"]),
        .library(name: "FanoutSink", targets: ["FanoutSink"]),
        .library(name: "FanoutClient", targets: ["FanoutClient"]),
        .library(name: "FanoutReport", targets: ["FanoutReport"]),
    ],
    // The `fanout` executable allocates through jemalloc on Linux (libjemalloc-dev): measured
    // against glibc's malloc by scripts/bench-allocator.sh. `--disable-default-traits` builds
    // it with glibc's.
    traits: [
        .trait(name: "Jemalloc", description: "Link the fanout executable with jemalloc on Linux."),
        .default(enabledTraits: ["Jemalloc"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-atomics.git", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift.git", from: "0.2.0"),
        // A test peer only: Fanout's HTTP/2 is checked against it in process.
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
    ],
    targets: [
        // APNs protocol vocabulary shared by the sender and the sink.
        .target(name: "FanoutAPNs"),
        // Two byte scans in SSE2 (hex digits; JSON text that needs no escaping).
        .target(name: "CFanoutSIMD"),
        // Notification templates compiled to bytes; the per-device encoder.
        .target(
            name: "FanoutPayload",
            dependencies: [
                "FanoutAPNs",
                "CFanoutSIMD",
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            // The encoder writes through NIO's ByteBuffer, whose storage pointer is a class
            // property: with checked exclusivity every notification paid a runtime access check
            // (~100 of ~940 instructions, measured with callgrind). No code here relies on the
            // check; nothing on the hot path mutates shared class state.
            swiftSettings: [.unsafeFlags(["-enforce-exclusivity=unchecked"])]
        ),
        // Token sets read, generated and split as streams, handed over in batches.
        .target(
            name: "FanoutTokens",
            dependencies: [
                "FanoutAPNs",
                "CFanoutSIMD",
                .product(name: "Atomics", package: "swift-atomics"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        // HTTP/2 for the hot path, shared by the sender and the sink: HPACK, frames, the
        // connection state machine, and NIO channels over TCP (prior knowledge) or TLS (ALPN h2).
        .target(
            name: "FanoutHTTP2",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            // As for FanoutPayload: every ByteBuffer write paid a runtime exclusivity check on
            // NIO's storage (swift_beginAccess: ~11% of the server's profile under h2load).
            // Nothing here relies on the check; connections are confined to one event loop.
            swiftSettings: [.unsafeFlags(["-enforce-exclusivity=unchecked"])]
        ),
        // The mock APNs: validation, token auth, APNs' stream limits, statistics.
        .target(
            name: "FanoutSink",
            dependencies: [
                "FanoutAPNs",
                "FanoutPayload",
                "FanoutHTTP2",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Atomics", package: "swift-atomics"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            // As for FanoutHTTP2: header lists and responses go through ByteBuffer.
            swiftSettings: [.unsafeFlags(["-enforce-exclusivity=unchecked"])]
        ),
        // The load engine: a pool of HTTP/2 connections sending a token set's notifications,
        // surviving faults, giving every token one final outcome.
        .target(
            name: "FanoutClient",
            dependencies: [
                "FanoutAPNs",
                "FanoutPayload",
                "FanoutTokens",
                "FanoutHTTP2",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Atomics", package: "swift-atomics"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ],
            // As for FanoutHTTP2: requests are written through ByteBuffer.
            swiftSettings: [.unsafeFlags(["-enforce-exclusivity=unchecked"])]
        ),
        // What a run leaves: summary.json, the latency distribution (.hgrm), reconciliation.
        .target(
            name: "FanoutReport",
            dependencies: [
                "FanoutAPNs",
                "FanoutClient",
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ]
        ),
        // The main job: the sink embedded in the process, a synthetic token set fanned out to
        // it, and the reconciliation of what each side counted.
        .target(
            name: "FanoutRun",
            dependencies: [
                "FanoutAPNs",
                "FanoutPayload",
                "FanoutTokens",
                "FanoutHTTP2",
                "FanoutSink",
                "FanoutClient",
                "FanoutReport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // The command line: options in, library calls out; no logic of its own.
        .executableTarget(
            name: "fanout",
            dependencies: [
                "FanoutAPNs",
                "FanoutPayload",
                "FanoutTokens",
                "FanoutHTTP2",
                "FanoutSink",
                "FanoutClient",
                "FanoutReport",
                "FanoutRun",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            linkerSettings: [.linkedLibrary("jemalloc", .when(platforms: [.linux], traits: ["Jemalloc"]))]
        ),
        // Helpers the test targets share: a seeded generator, peer processes with bounded waits.
        .target(name: "FanoutTestSupport", path: "Tests/FanoutTestSupport"),
        .testTarget(name: "FanoutAPNsTests", dependencies: ["FanoutAPNs"]),
        .testTarget(
            name: "FanoutHTTP2Tests",
            dependencies: [
                "FanoutHTTP2",
                "FanoutTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
            ],
            exclude: ["Peers"]
        ),
        .testTarget(
            name: "FanoutTokensTests",
            dependencies: ["FanoutTokens", "FanoutAPNs", "FanoutPayload", "FanoutTestSupport"]
        ),
        .testTarget(
            name: "FanoutSinkTests",
            dependencies: [
                "FanoutSink",
                "FanoutHTTP2",
                "FanoutAPNs",
                "FanoutTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            exclude: ["Peers"]
        ),
        .testTarget(
            name: "FanoutClientTests",
            dependencies: [
                "FanoutClient",
                "FanoutReport",
                "FanoutSink",
                "FanoutTokens",
                "FanoutPayload",
                "FanoutHTTP2",
                "FanoutAPNs",
                "FanoutTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ]
        ),
        // Runs the built `fanout` executable as a user would.
        .testTarget(
            name: "FanoutReportTests",
            dependencies: [
                "FanoutReport",
                "FanoutRun",
                "FanoutClient",
                "FanoutSink",
                "FanoutAPNs",
                "FanoutPayload",
                "FanoutTestSupport",
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ],
            exclude: ["Peers", "Golden"]
        ),
        .testTarget(
            name: "FanoutCommandTests",
            dependencies: ["fanout", "FanoutRun", "FanoutTestSupport"],
            exclude: ["Peers"]
        ),
        .testTarget(
            name: "FanoutPayloadTests",
            dependencies: [
                "FanoutPayload",
                "FanoutAPNs",
                "FanoutTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            exclude: ["Golden"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
