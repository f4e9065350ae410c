// swift-tools-version: 6.1
import PackageDescription

// Fanout: fans one APNs notification out to millions of device tokens over HTTP/2 and
// measures it truthfully. One module per concern; see README.md for the architecture.
let package = Package(
    name: "fanout",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "fanout", targets: ["fanout"]),
        .library(name: "FanoutSettings", targets: ["FanoutSettings"]),
        .library(name: "FanoutRandom", targets: ["FanoutRandom"]),
        .library(name: "FanoutAPNs", targets: ["FanoutAPNs"]),
        .library(name: "FanoutPayload", targets: ["FanoutPayload"]),
        .library(name: "FanoutTokens", targets: ["FanoutTokens"]),
        .library(name: "FanoutHPACK", targets: ["FanoutHPACK"]),
        .library(name: "FanoutHTTP2", targets: ["FanoutHTTP2"]),
        .library(name: "FanoutMeasure", targets: ["FanoutMeasure"]),
        .library(name: "FanoutSink", targets: ["FanoutSink"]),
        .library(name: "FanoutClient", targets: ["FanoutClient"]),
        .library(name: "FanoutResults", targets: ["FanoutResults"]),
        .library(name: "FanoutReport", targets: ["FanoutReport"]),
    ],
    // The `fanout` executable allocates through jemalloc on Linux (libjemalloc-dev): measured
    // against glibc's malloc by scripts/bench/allocator.sh. `--disable-default-traits` builds
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
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        // A test peer only: Fanout's HTTP/2 is checked against it in process.
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
    ],
    targets: [
        // What people write and read as text: `NAME = VALUE` settings files, durations, bytes
        // named in errors, files appended line by line.
        .target(
            name: "FanoutSettings",
            dependencies: [
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // The seeded generator behind everything a run draws reproducibly.
        .target(name: "FanoutRandom"),
        // APNs' wire vocabulary, shared by the sender and the sink: request path and header
        // names, push types, reasons and error bodies, device token formats, the digest.
        .target(
            name: "FanoutAPNs",
            dependencies: ["FanoutSettings", .product(name: "NIOCore", package: "swift-nio")]
        ),
        // Two byte scans in SSE2 (hex digits; JSON text that needs no escaping).
        .target(name: "CFanoutSIMD"),
        // Notification templates compiled to bytes; the per-device encoder.
        .target(
            name: "FanoutPayload",
            dependencies: [
                "FanoutSettings",
                "FanoutAPNs",
                "CFanoutSIMD",
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        // Token sets read, generated and split as streams, handed over in batches.
        .target(
            name: "FanoutTokens",
            dependencies: [
                "FanoutSettings",
                "FanoutAPNs",
                "CFanoutSIMD",
                .product(name: "Atomics", package: "swift-atomics"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        // HPACK (RFC 7541) on bytes in place: the encoder, the decoder, Huffman coding, tables.
        .target(name: "FanoutHPACK"),
        // HTTP/2 for the hot path, shared by the sender and the sink: frames, the connection
        // state machine, and NIO channels over TCP (prior knowledge) or TLS (ALPN h2).
        .target(
            name: "FanoutHTTP2",
            dependencies: [
                "FanoutHPACK",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        // What every figure is made of, for the sender and the sink alike: microsecond
        // histograms and their percentiles, packed seconds, lateness tallies, thread CPU clocks,
        // event-loop lag probes, and the metrics endpoint (swift-prometheus over a small
        // HTTP/1.1 text server).
        .target(
            name: "FanoutMeasure",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),
        // The mock APNs: validation, token auth, APNs' stream limits, statistics.
        .target(
            name: "FanoutSink",
            dependencies: [
                "FanoutSettings",
                "FanoutRandom",
                "FanoutHPACK",
                "FanoutAPNs",
                "FanoutPayload",
                "FanoutHTTP2",
                "FanoutMeasure",
                "FanoutTokens",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Atomics", package: "swift-atomics"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ]
        ),
        // The load engine: a pool of HTTP/2 connections sending a token set's notifications,
        // surviving faults, giving every token one final outcome.
        .target(
            name: "FanoutClient",
            dependencies: [
                "FanoutSettings",
                "FanoutRandom",
                "FanoutHPACK",
                "FanoutAPNs",
                "FanoutPayload",
                "FanoutTokens",
                "FanoutHTTP2",
                "FanoutMeasure",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Atomics", package: "swift-atomics"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ]
        ),
        // The documents a run leaves, and nothing of the engine: summary.json (with the sink's
        // provider section), probe.json, search.json, plan.json, the repeat manifest, their
        // schema versions and reading. It imports neither NIO nor FanoutClient, so a tool that
        // reads results links neither.
        .target(
            name: "FanoutResults",
            dependencies: [
                "FanoutSettings",
                "FanoutAPNs",
                "FanoutMeasure",
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ]
        ),
        // Results, from making them to judging them, a folder a room: Assembly (the engine's and
        // the sink's outcomes into documents: run and sink summaries, the harness account,
        // interval logs, probe records), Rendering (report.html, summary.md, CI formats, the
        // progress line, the search's and comparisons' pages), Judging (gate, thresholds, run
        // records, compare, A/B pairs), Merging (`fanout merge`: every field's rule) and
        // Planning (the rate search, the capacity plan).
        .target(
            name: "FanoutReport",
            dependencies: [
                "FanoutResults",
                "FanoutSettings",
                "FanoutRandom",
                "FanoutAPNs",
                "FanoutClient",
                "FanoutTokens",
                "FanoutMeasure",
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ]
        ),
        // The jobs the commands call: the main job (the sink embedded in the process, a
        // synthetic token set fanned out to it, the reconciliation), the send job, the sink as a
        // ServiceLifecycle service, and the one way a run is finished (folder, summary, status).
        .target(
            name: "FanoutRun",
            dependencies: [
                "FanoutSettings",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                "FanoutAPNs",
                "FanoutPayload",
                "FanoutTokens",
                "FanoutHTTP2",
                "FanoutMeasure",
                "FanoutSink",
                "FanoutClient",
                "FanoutReport",
                "FanoutResults",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // The command line: options in, library calls out; no logic of its own.
        .executableTarget(
            name: "fanout",
            dependencies: [
                "FanoutSettings",
                "FanoutAPNs",
                "FanoutPayload",
                "FanoutTokens",
                "FanoutHTTP2",
                "FanoutSink",
                "FanoutClient",
                "FanoutReport",
                "FanoutResults",
                "FanoutRun",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            linkerSettings: [.linkedLibrary("jemalloc", .when(platforms: [.linux], traits: ["Jemalloc"]))]
        ),
        // The cost gate's workload as a program, for scripts/cost.sh (callgrind).
        .executableTarget(
            name: "fanout-cost",
            dependencies: [
                "FanoutTokens",
                "FanoutRun",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Helpers the test targets share: peer processes with bounded waits, free ports, Python peers.
        .target(name: "FanoutTestSupport", path: "Tests/FanoutTestSupport"),
        .testTarget(name: "FanoutSettingsTests", dependencies: ["FanoutSettings"]),
        .testTarget(
            name: "FanoutAPNsTests",
            dependencies: ["FanoutAPNs", "FanoutRandom", .product(name: "NIOCore", package: "swift-nio")]
        ),
        .testTarget(
            name: "FanoutHPACKTests",
            dependencies: [
                "FanoutRandom",
                "FanoutHPACK",
                "FanoutTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            exclude: ["Peers"]
        ),
        .testTarget(
            name: "FanoutHTTP2Tests",
            dependencies: [
                "FanoutRandom",
                "FanoutHTTP2",
                "FanoutTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
            ],
            exclude: ["Peers"]
        ),
        .testTarget(
            name: "FanoutMeasureTests",
            dependencies: [
                "FanoutMeasure",
                "FanoutTestSupport",
                "FanoutRandom",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ]
        ),
        .testTarget(
            name: "FanoutTokensTests",
            dependencies: ["FanoutTokens", "FanoutAPNs", "FanoutPayload", "FanoutRandom", "FanoutTestSupport"]
        ),
        .testTarget(
            name: "FanoutSinkTests",
            dependencies: [
                "FanoutRandom",
                "FanoutSink",
                "FanoutHTTP2",
                "FanoutAPNs",
                "FanoutTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            exclude: ["Peers"]
        ),
        .testTarget(
            name: "FanoutClientTests",
            dependencies: [
                "FanoutRandom",
                "FanoutClient",
                "FanoutReport",
                "FanoutResults",
                "FanoutSink",
                "FanoutTokens",
                "FanoutPayload",
                "FanoutHTTP2",
                "FanoutAPNs",
                "FanoutTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ]
        ),
        .testTarget(
            name: "FanoutReportTests",
            dependencies: [
                "FanoutReport",
                "FanoutResults",
                "FanoutSettings",
                "FanoutHTTP2",
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
        // The jobs' own logic, without running the executable.
        .testTarget(
            name: "FanoutRunTests",
            dependencies: [
                "FanoutRun", "FanoutClient", "FanoutMeasure", "FanoutAPNs", "FanoutSettings", "FanoutTestSupport",
            ]
        ),
        // Runs the built `fanout` executable as a user would.
        .testTarget(
            name: "FanoutCommandTests",
            dependencies: [
                "fanout", "fanout-cost", "FanoutRun", "FanoutReport", "FanoutMeasure", "FanoutSettings",
                "FanoutTestSupport",
            ],
            exclude: ["Peers"]
        ),
        .testTarget(
            name: "FanoutPayloadTests",
            dependencies: [
                "FanoutPayload",
                "FanoutAPNs",
                "FanoutRandom",
                "FanoutTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            exclude: ["Golden"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
