// swift-tools-version: 6.1
import PackageDescription

/// The modules another project can depend on: each a library product of its own name.
let libraries = [
    "FanoutNotation", "FanoutFiles", "FanoutMachine", "FanoutRandom", "FanoutAPNs", "FanoutFCM", "FanoutPush",
    "FanoutPayload",
    "FanoutTokens",
    "FanoutHPACK", "FanoutListening", "FanoutHTTP2", "FanoutMeasure", "FanoutScenarioTerms", "FanoutWire",
    "FanoutInstrument",
    "FanoutDevices", "FanoutReturn", "FanoutChannels", "FanoutSink", "FanoutFCMAuth", "FanoutFCMSink", "FanoutEndpoint",
    "FanoutClient",
    "FanoutProbe",
    "FanoutResults",
    "FanoutReport", "FanoutAssembly",
]

/// One of swift-nio's products a target imports, by its module's name: `nio("NIOCore", "NIOPosix")`.
func nio(_ modules: String...) -> [Target.Dependency] {
    modules.map { .product(name: $0, package: "swift-nio") }
}

// The other packages' products more than one target imports.
let crypto = Target.Dependency.product(name: "Crypto", package: "swift-crypto")
let atomics = Target.Dependency.product(name: "Atomics", package: "swift-atomics")
let nioSSL = Target.Dependency.product(name: "NIOSSL", package: "swift-nio-ssl")
let histogram = Target.Dependency.product(name: "Histogram", package: "hdrhistogram-swift")
let argumentParser = Target.Dependency.product(name: "ArgumentParser", package: "swift-argument-parser")
let serviceLifecycle = Target.Dependency.product(name: "ServiceLifecycle", package: "swift-service-lifecycle")

/// What both ends of the wire, the sink and the load engine, are built on.
let wireEnd: [Target.Dependency] =
    [
        "FanoutNotation", "FanoutFiles", "FanoutRandom", "FanoutHPACK", "FanoutAPNs", "FanoutPayload",
        "FanoutTokens",
        "FanoutListening",
        "FanoutHTTP2", "FanoutMeasure", nioSSL, atomics, crypto, histogram,
    ] + nio("NIOCore", "NIOPosix")

// Fanout: fans one APNs notification out to millions of device tokens over HTTP/2 and
// measures it truthfully. One module per concern; see README.md for the architecture.
let package = Package(
    name: "fanout",
    platforms: [.macOS(.v14)],
    products: [.executable(name: "fanout", targets: ["fanout"])] + libraries.map { .library(name: $0, targets: [$0]) },
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
        // YAML: `fanout cluster render`'s Kubernetes manifests.
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        // A test peer only: Fanout's HTTP/2 is checked against it in process.
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
    ],
    targets: [
        // How values are written and read as text: durations, rates, bandwidths, shares, times,
        // decimals, bytes, grouped counts, an option's range.
        .target(name: "FanoutNotation"),
        // The files people write and the program appends to: `NAME = VALUE` settings files, text
        // lines, a file's use recorded (its hash), problems named with their path.
        .target(
            name: "FanoutFiles",
            dependencies: ["FanoutNotation", crypto] + nio("NIOConcurrencyHelpers")
        ),
        // This machine's limits (open files, memory, cores) and what they allow an option.
        .target(name: "FanoutMachine", dependencies: ["FanoutNotation"]),
        // The seeded generator behind everything a run draws reproducibly.
        .target(name: "FanoutRandom"),
        // APNs' wire vocabulary, shared by the sender and the sink: request path and header
        // names, push types, reasons and error bodies, device token formats, channel ids, the digest.
        .target(
            name: "FanoutAPNs",
            dependencies: ["FanoutNotation", "CFanoutSIMD"] + nio("NIOCore")
        ),
        // FCM HTTP v1's vocabulary, shared by the FCM sink and sender to come: error codes and
        // the google.rpc statuses they travel with, the error bodies the SDKs classify, what a
        // sender reads of an answer, a send's body checked as FCM checks it (docs/fcm.md).
        .target(name: "FanoutFCM", dependencies: nio("NIOCore")),
        // What a sender counts a refusal by, in either service's words: APNs' reasons and FCM's
        // error codes as one typed vocabulary with a stable index.
        .target(name: "FanoutPush", dependencies: ["FanoutAPNs", "FanoutFCM"]),
        // FCM's OAuth2 for the sender and the mock alike: the service account (its file, its RSA
        // key) and the RS256 assertion of the jwt-bearer grant (docs/fcm.md, "OAuth2").
        .target(
            name: "FanoutFCMAuth",
            dependencies: [crypto, .product(name: "_CryptoExtras", package: "swift-crypto")]
        ),
        // A mock FCM HTTP v1 (docs/fcm.md): the send method with FCM's checks and errors, the
        // OAuth2 token endpoint with the service account it writes out, the project's quota;
        // HTTP/2 and HTTP/1.1 on one port, cleartext or TLS.
        .target(
            name: "FanoutFCMSink",
            dependencies: [
                "FanoutAPNs", "FanoutFCM", "FanoutFCMAuth", "FanoutHTTP2", "FanoutListening", "FanoutWire",
                "FanoutInstrument", "FanoutPush", "FanoutRandom", "FanoutMeasure", "FanoutScenarioTerms",
                "FanoutDevices", "FanoutNotation", crypto,
                .product(name: "_CryptoExtras", package: "swift-crypto"), atomics, nioSSL,
            ] + nio("NIOCore", "NIOPosix", "NIOHTTP1", "NIOTLS", "NIOConcurrencyHelpers")
        ),
        // The byte loops of the hot path in C: two scans in SSE2 (hex digits; JSON text that
        // needs no escaping), the sink's JSON check, the notification digest's pair hash.
        .target(name: "CFanoutSIMD"),
        // Notification templates compiled to bytes; the per-device encoder.
        .target(
            name: "FanoutPayload",
            dependencies: ["FanoutNotation", "FanoutAPNs", "CFanoutSIMD"] + nio("NIOCore")
        ),
        // Token sets read, generated and split as streams, handed over in batches.
        .target(
            name: "FanoutTokens",
            dependencies: ["FanoutNotation", "FanoutFiles", "FanoutAPNs", "CFanoutSIMD", atomics]
                + nio("NIOConcurrencyHelpers")
        ),
        // HPACK (RFC 7541) on bytes in place: the encoder, the decoder, Huffman coding, tables.
        .target(name: "FanoutHPACK"),
        // What every listener of Fanout's does when accepting fails (out of descriptors): it
        // pauses, doubling, instead of spinning. The HTTP/2 ports and the text endpoints alike.
        // And what a job watching either sink for its ends reads and waits on (`SinkActivity`).
        .target(
            name: "FanoutListening",
            dependencies: ["FanoutNotation", atomics] + nio("NIOCore", "NIOConcurrencyHelpers")
        ),
        // HTTP/2 for the hot path, shared by the sender and the sink: frames, the connection
        // state machine, and NIO channels over TCP (prior knowledge) or TLS (ALPN h2).
        .target(
            name: "FanoutHTTP2",
            dependencies: ["FanoutHPACK", "FanoutListening", nioSSL] + nio("NIOCore", "NIOPosix", "NIOTLS")
        ),
        // What every figure is made of, for the sender and the sink alike: microsecond
        // histograms and their percentiles, packed seconds, lateness tallies, thread CPU clocks,
        // event-loop lag probes, and the metrics endpoint (swift-prometheus over a small
        // HTTP/1.1 text server).
        .target(
            name: "FanoutMeasure",
            dependencies: ["FanoutListening", histogram, .product(name: "Prometheus", package: "swift-prometheus")]
                + nio("NIOCore", "NIOPosix", "NIOHTTP1", "NIOConcurrencyHelpers")
        ),
        // The terms a sink's scenario is written in, shared by the mock and what stands behind
        // it: spreads (`LatencyDistribution`, drawn through `SinkRandom`), rates, token sets, and
        // their notation and error.
        .target(
            name: "FanoutScenarioTerms",
            dependencies: ["FanoutNotation", "FanoutFiles", "FanoutRandom", "FanoutTokens"]
        ),
        // A network path of a given round trip and bandwidth in front of a server's connections
        // (`SinkWire`, put in place by `WireHandler`): both sinks, APNs' and FCM's, take one.
        .target(
            name: "FanoutWire",
            dependencies: ["FanoutNotation", "FanoutScenarioTerms", atomics] + nio("NIOCore")
        ),
        // The sink as the provider's instrument: the conformance card (its rules' counts and
        // examples, the broadcast rules' memory), arrivals since the start mark, expected tokens.
        .target(
            name: "FanoutInstrument",
            dependencies: [
                "FanoutNotation", "FanoutAPNs", "FanoutFCM", "FanoutPush", "FanoutMeasure", "FanoutScenarioTerms",
                atomics,
                histogram,
            ] + nio("NIOConcurrencyHelpers")
        ),
        // The device fleet behind a push service: store-and-forward as a state machine, devices
        // drawn from their tokens, delivery histories and times, what the fleet finds of the provider.
        .target(
            name: "FanoutDevices",
            dependencies: [
                "FanoutNotation", "FanoutRandom", "FanoutAPNs", "FanoutFCM", "FanoutPush", "FanoutMeasure",
                "FanoutScenarioTerms", "FanoutInstrument", atomics, histogram,
            ] + nio("NIOConcurrencyHelpers")
        ),
        // The return wave (issue #63): the fleet's opens, actions and media downloads sent to the
        // provider's backend at their due times over HTTP/1.1 keep-alive (TLS too), measured
        // each second: offered and answered rates, latencies, errors, the knee.
        .target(
            name: "FanoutReturn",
            dependencies: [
                "FanoutNotation", "FanoutDevices", "FanoutMeasure", "FanoutResults", "FanoutHTTP2", nioSSL, histogram,
                atomics,
            ]
                + nio("NIOCore", "NIOPosix", "NIOHTTP1")
        ),
        // Broadcast channels: the store of channels and subscribers, what each broadcast
        // reached, stored updates and their fates, delivery times worked out from distributions.
        .target(
            name: "FanoutChannels",
            dependencies: ["FanoutNotation", "FanoutAPNs", "FanoutScenarioTerms", "FanoutDevices"]
                + nio("NIOConcurrencyHelpers", "NIOCore")
        ),
        // The mock APNs: validation, token auth, APNs' stream limits, statistics; the fleet,
        // the channels and the instrument stand behind it.
        .target(
            name: "FanoutSink",
            dependencies: wireEnd + [
                "FanoutMachine", "FanoutScenarioTerms", "FanoutWire", "FanoutInstrument", "FanoutDevices",
                "FanoutChannels", "FanoutPush",
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ]
        ),
        // The way to an APNs endpoint that the load engine and the probe share: where requests go
        // and what they carry besides a token and a body (host, transport, headers, provider
        // tokens), connecting, each request's header fields, what kept an endpoint away; and an
        // FCM sender's OAuth2 access tokens, fetched from the token endpoint and kept fresh.
        .target(
            name: "FanoutEndpoint",
            dependencies: [
                "FanoutAPNs", "FanoutPush", "FanoutFCMAuth", "FanoutHPACK", "FanoutHTTP2", nioSSL, crypto,
            ] + nio("NIOCore", "NIOPosix", "NIOHTTP1", "NIOConcurrencyHelpers")
        ),
        // The load engine: a pool of HTTP/2 connections sending a token set's notifications,
        // surviving faults, giving every token one final outcome.
        .target(
            name: "FanoutClient",
            dependencies: wireEnd + ["FanoutEndpoint", "FanoutFCM", "FanoutPush"]
        ),
        // `fanout probe`: one connection measured as a state machine (SETTINGS, PING round trips,
        // requests one at a time and in parallel, the flow window), beside the engine, not in it.
        .target(
            name: "FanoutProbe",
            dependencies: ["FanoutAPNs", "FanoutPayload", "FanoutHTTP2", "FanoutEndpoint"] + nio("NIOCore")
        ),
        // The documents a run leaves, and nothing of the engine: summary.json (with the sink's
        // provider section), probe.json, search.json, plan.json, the repeat manifest, the
        // interval log (latency.hlog), their schema versions and reading. It imports neither NIO nor FanoutClient, so a tool that
        // reads results links neither.
        .target(
            name: "FanoutResults",
            dependencies: ["FanoutNotation", "FanoutFiles", "FanoutAPNs", "FanoutPush", "FanoutMeasure", histogram]
        ),
        // What is made of the documents, and of nothing else: Rendering (report.html,
        // summary.md, CI formats, the progress line, the live page, the search's and
        // comparisons' pages, a run folder's files), Judging (gate, thresholds, run records,
        // compare, A/B pairs), Merging (`fanout merge`: every field's rule) and Planning (the
        // rate search, the capacity plan). It cannot import the engine: FanoutAssembly turns
        // the engine's outcomes into documents.
        .target(
            name: "FanoutReport",
            dependencies: [
                "FanoutResults",
                "FanoutNotation", "FanoutFiles",
                "FanoutRandom",
                "FanoutAPNs", "FanoutPush",
                "FanoutTokens",
                "FanoutMeasure",
                histogram,
            ]
        ),
        // A run's documents assembled from the engine's and the sink's outcomes, the one
        // reporting module that imports the engine: the run summary (summary.json, the printed
        // summary, the run folder), the sink's folder summary, the harness account, the
        // sender and sink reconciliation, the engine's invalid reasons, probe records, the
        // interval log of a run's seconds and the live page's document.
        .target(
            name: "FanoutAssembly",
            dependencies: [
                "FanoutClient",
                "FanoutProbe",
                "FanoutReport",
                "FanoutResults",
                "FanoutNotation", "FanoutFiles",
                "FanoutAPNs", "FanoutPush",
                "FanoutHTTP2",
                "FanoutTokens",
                "FanoutMeasure",
                histogram,
            ]
        ),
        // The jobs the commands call: the main job (the sink embedded in the process, a
        // synthetic token set fanned out to it, the reconciliation), the send job, the sink as a
        // ServiceLifecycle service, and the one way a run is finished (folder, summary, status).
        .target(
            name: "FanoutRun",
            dependencies: [
                "FanoutRandom",
                "FanoutNotation", "FanoutFiles", "FanoutMachine",
                serviceLifecycle,
                "FanoutAPNs", "FanoutFCM", "FanoutPush",
                "FanoutPayload",
                "FanoutTokens",
                "FanoutHTTP2", "FanoutListening",
                "FanoutMeasure",
                "FanoutScenarioTerms", "FanoutWire",
                "FanoutInstrument",
                "FanoutDevices", "FanoutReturn",
                "FanoutChannels",
                "FanoutSink",
                "FanoutFCMAuth",
                "FanoutFCMSink",
                "FanoutClient",
                "FanoutEndpoint",
                "FanoutProbe",
                "FanoutReport",
                "FanoutAssembly",
                "FanoutResults",
                crypto,
                histogram,
                .product(name: "Yams", package: "Yams"),
            ] + nio("NIOConcurrencyHelpers", "NIOCore", "NIOPosix")
        ),
        // The command line: options in, library calls out; no logic of its own.
        .executableTarget(
            name: "fanout",
            dependencies: [
                "FanoutNotation", "FanoutFiles", "FanoutMachine",
                "FanoutAPNs", "FanoutPush",
                "FanoutPayload",
                "FanoutTokens",
                "FanoutHTTP2",
                "FanoutMeasure", "FanoutWire",
                "FanoutScenarioTerms",
                "FanoutDevices", "FanoutReturn",
                "FanoutChannels",
                "FanoutFCMSink",
                "FanoutSink",
                "FanoutClient",
                "FanoutEndpoint",
                "FanoutReport",
                "FanoutAssembly",
                "FanoutResults",
                "FanoutRun",
                argumentParser,
                .product(name: "Logging", package: "swift-log"),
                serviceLifecycle,
            ] + nio("NIOConcurrencyHelpers", "NIOCore", "NIOPosix"),
            linkerSettings: [.linkedLibrary("jemalloc", .when(platforms: [.linux], traits: ["Jemalloc"]))]
        ),
        // The cost gate's workload as a program, for scripts/cost.sh (callgrind).
        .executableTarget(
            name: "fanout-cost",
            dependencies: ["FanoutTokens", "FanoutRun", argumentParser]
        ),
        // Helpers the test targets share: peer processes with bounded waits, free ports, Python peers.
        .target(
            name: "FanoutTestSupport",
            dependencies: nio("NIOCore", "NIOPosix", "NIOHTTP1", "NIOConcurrencyHelpers"),
            path: "Tests/FanoutTestSupport"
        ),
        .testTarget(name: "FanoutNotationTests", dependencies: ["FanoutNotation"]),
        .testTarget(name: "FanoutFilesTests", dependencies: ["FanoutFiles"]),
        .testTarget(name: "FanoutMachineTests", dependencies: ["FanoutNotation", "FanoutMachine"]),
        .testTarget(
            name: "FanoutAPNsTests",
            dependencies: ["FanoutAPNs", "FanoutRandom"] + nio("NIOCore")
        ),
        .testTarget(
            name: "FanoutReturnTests",
            dependencies: [
                "FanoutReturn", "FanoutDevices", "FanoutResults", "FanoutScenarioTerms", "FanoutTestSupport",
            ]
                + nio("NIOCore", "NIOPosix", "NIOHTTP1", "NIOConcurrencyHelpers")
        ),
        .testTarget(name: "FanoutPushTests", dependencies: ["FanoutPush", "FanoutAPNs", "FanoutFCM"]),
        .testTarget(
            name: "FanoutFCMTests",
            dependencies: ["FanoutFCM", "FanoutTestSupport"] + nio("NIOCore"),
            exclude: ["Peers"]
        ),
        .testTarget(
            name: "FanoutFCMAuthTests",
            dependencies: ["FanoutFCMAuth", "FanoutTestSupport"],
            exclude: ["Peers"]
        ),
        .testTarget(
            name: "FanoutFCMSinkTests",
            dependencies: [
                "FanoutFCMSink", "FanoutFCMAuth", "FanoutFCM", "FanoutSink", "FanoutEndpoint", "FanoutTestSupport",
                "FanoutInstrument", "FanoutPush", "FanoutScenarioTerms", "FanoutAPNs", "FanoutDevices",
                "FanoutListening",
                crypto,
                .product(name: "_CryptoExtras", package: "swift-crypto"), nioSSL,
            ] + nio("NIOCore", "NIOPosix"),
            exclude: ["Peers"]
        ),
        .testTarget(
            name: "FanoutHPACKTests",
            dependencies: ["FanoutRandom", "FanoutHPACK", "FanoutTestSupport"] + nio("NIOCore"),
            exclude: ["Peers"]
        ),
        .testTarget(
            name: "FanoutListeningTests",
            dependencies: ["FanoutListening"] + nio("NIOCore", "NIOConcurrencyHelpers", "NIOEmbedded", "NIOPosix")
        ),
        .testTarget(
            name: "FanoutHTTP2Tests",
            dependencies: [
                "FanoutHPACK",
                "FanoutRandom",
                "FanoutHTTP2",
                "FanoutTestSupport",
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
            ] + nio("NIOCore", "NIOConcurrencyHelpers", "NIOPosix", "NIOEmbedded"),
            exclude: ["Peers"]
        ),
        .testTarget(
            name: "FanoutMeasureTests",
            dependencies: [
                "FanoutMeasure",
                "FanoutTestSupport",
                "FanoutRandom",
                histogram,
            ] + nio("NIOCore", "NIOConcurrencyHelpers", "NIOPosix")
        ),
        .testTarget(
            name: "FanoutTokensTests",
            dependencies: ["FanoutTokens", "FanoutAPNs", "FanoutPayload", "FanoutRandom", "FanoutTestSupport"]
        ),
        .testTarget(
            name: "FanoutWireTests",
            dependencies: ["FanoutWire", "FanoutScenarioTerms"] + nio("NIOCore", "NIOEmbedded")
        ),
        .testTarget(
            name: "FanoutScenarioTermsTests",
            dependencies: ["FanoutScenarioTerms", "FanoutRandom"]
        ),
        .testTarget(
            name: "FanoutInstrumentTests",
            dependencies: ["FanoutInstrument", "FanoutAPNs", "FanoutFCM", "FanoutPush", "FanoutScenarioTerms"]
        ),
        .testTarget(
            name: "FanoutDevicesTests",
            dependencies: [
                "FanoutDevices", "FanoutInstrument", "FanoutScenarioTerms", "FanoutRandom", "FanoutAPNs", "FanoutPush",
            ]
        ),
        .testTarget(
            name: "FanoutChannelsTests",
            dependencies: ["FanoutChannels", "FanoutDevices", "FanoutScenarioTerms", "FanoutAPNs"]
        ),
        .testTarget(
            name: "FanoutSinkTests",
            dependencies: [
                "FanoutHPACK", "FanoutPayload", "FanoutPush", "FanoutMeasure",
                "FanoutRandom",
                "FanoutScenarioTerms",
                "FanoutInstrument",
                "FanoutDevices",
                "FanoutChannels",
                "FanoutSink",
                "FanoutHTTP2",
                "FanoutListening",
                "FanoutAPNs",
                "FanoutTestSupport",
                crypto,
            ] + nio("NIOCore", "NIOConcurrencyHelpers", "NIOEmbedded", "NIOPosix"),
            exclude: ["Peers"]
        ),
        .testTarget(
            name: "FanoutClientTests",
            dependencies: [
                "FanoutHPACK", "FanoutMeasure", "FanoutPush",
                "FanoutNotation",
                "FanoutRandom",
                "FanoutClient",
                "FanoutReport",
                "FanoutAssembly",
                "FanoutResults",
                "FanoutSink",
                "FanoutTokens",
                "FanoutPayload",
                "FanoutHTTP2",
                "FanoutAPNs",
                "FanoutEndpoint",
                "FanoutTestSupport",
                crypto,
                histogram,
            ] + nio("NIOCore", "NIOConcurrencyHelpers", "NIOPosix", "NIOEmbedded")
        ),
        .testTarget(
            name: "FanoutEndpointTests",
            dependencies: ["FanoutEndpoint", "FanoutAPNs", "FanoutHPACK", "FanoutHTTP2", "FanoutRandom"]
                + nio("NIOCore", "NIOPosix")
        ),
        .testTarget(
            name: "FanoutProbeTests",
            dependencies: ["FanoutProbe"]
        ),
        .testTarget(
            name: "FanoutAssemblyTests",
            dependencies: [
                "FanoutAssembly", "FanoutPush",
                "FanoutProbe",
                "FanoutClient",
                "FanoutReport",
                "FanoutResults",
                "FanoutHTTP2",
                "FanoutAPNs",
                "FanoutMeasure",
                "FanoutTestSupport",
                histogram,
            ]
        ),
        .testTarget(
            name: "FanoutReportTests",
            dependencies: [
                "FanoutPush",
                "FanoutMeasure", "FanoutTokens",
                "FanoutReport",
                "FanoutAssembly",
                "FanoutResults", "FanoutFiles",
                "FanoutNotation",
                "FanoutHTTP2",
                "FanoutRun",
                "FanoutClient",
                "FanoutSink",
                "FanoutAPNs",
                "FanoutPayload",
                "FanoutEndpoint",
                "FanoutTestSupport",
                histogram,
            ],
            exclude: ["Peers", "Golden"]
        ),
        // The jobs' own logic, without running the executable.
        .testTarget(
            name: "FanoutRunTests",
            dependencies: [
                "FanoutWire", "FanoutInstrument",
                "FanoutResults", "FanoutSink",
                "FanoutRun", "FanoutScenarioTerms",
                "FanoutReport",
                "FanoutChannels",
                "FanoutClient",
                "FanoutMeasure",
                "FanoutAPNs",
                "FanoutNotation",
                "FanoutTestSupport",
                "FanoutEndpoint", "FanoutFCMAuth", "FanoutFCMSink", "FanoutPush", "FanoutTokens", nioSSL,
                .product(name: "Yams", package: "Yams"),
            ] + nio("NIOConcurrencyHelpers", "NIOCore", "NIOPosix")
        ),
        // Runs the built `fanout` executable as a user would.
        .testTarget(
            name: "FanoutCommandTests",
            dependencies: [
                "FanoutAPNs", "FanoutPush", "FanoutAssembly", "FanoutClient", "FanoutResults", "FanoutSink",
                "FanoutTokens",
                "FanoutFCMSink",
                "fanout",
                "fanout-cost",
                "FanoutRun",
                "FanoutScenarioTerms",
                "FanoutDevices",
                "FanoutReport",
                "FanoutMeasure",
                "FanoutNotation", "FanoutFiles",
                "FanoutEndpoint",
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
                .product(name: "PropertyBased", package: "swift-property-based"),
            ] + nio("NIOCore"),
            exclude: ["Golden"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
