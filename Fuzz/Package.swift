// swift-tools-version: 6.1
import PackageDescription

import struct Foundation.URL

// A path dependency's identity is its folder's name, which is whatever a clone was called.
let fanout = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .lastPathComponent.lowercased()

// Fanout's libFuzzer targets: one executable each, built by scripts/fuzz.sh with
// `-sanitize=fuzzer,address -parse-as-library -enable-testing` (a package of its own, so the
// product's build never sees those flags). Each target's `LLVMFuzzerTestOneInput` feeds bytes
// to one parser or state machine; `LLVMFuzzerInitialize` writes its seed corpus, made by the
// library's own encoders, into `$FANOUT_FUZZ_SEEDS` when that is set.
let package = Package(
    name: "FanoutFuzz",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(path: "../"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
    ],
    targets: [
        .target(name: "FuzzSupport", path: "Targets/FuzzSupport"),
        .target(
            name: "FuzzHTTP2Support",
            dependencies: ["FuzzSupport", fanoutLibrary("FanoutHTTP2"), nio],
            path: "Targets/FuzzHTTP2Support"
        ),
        fuzzTarget("FuzzHPACK", [fanoutLibrary("FanoutHPACK"), nio]),
        fuzzTarget("FuzzFrames", ["FuzzHTTP2Support", fanoutLibrary("FanoutHTTP2"), nio]),
        fuzzTarget("FuzzServer", ["FuzzHTTP2Support", fanoutLibrary("FanoutHTTP2"), nio]),
        fuzzTarget("FuzzClient", ["FuzzHTTP2Support", fanoutLibrary("FanoutHTTP2"), nio]),
        fuzzTarget("FuzzTemplate", [fanoutLibrary("FanoutPayload"), fanoutLibrary("FanoutAPNs"), nio]),
        fuzzTarget("FuzzTokens", [fanoutLibrary("FanoutTokens"), fanoutLibrary("FanoutAPNs")]),
        fuzzTarget("FuzzFCM", [fanoutLibrary("FanoutFCM"), nio]),
        fuzzTarget("FuzzScenario", [fanoutLibrary("FanoutScenarioTerms"), fanoutLibrary("FanoutSink")]),
        fuzzTarget("FuzzThresholds", [fanoutLibrary("FanoutReport")]),
        fuzzTarget("FuzzSettings", [fanoutLibrary("FanoutClient"), fanoutLibrary("FanoutFiles")]),
        fuzzTarget(
            "FuzzOptions",
            [
                fanoutLibrary("FanoutNotation"), fanoutLibrary("FanoutMachine"), fanoutLibrary("FanoutClient"),
                fanoutLibrary("FanoutEndpoint"),
                fanoutLibrary("FanoutReport"),
                fanoutLibrary("FanoutPayload"), nio,
            ]
        ),
        fuzzTarget("FuzzJWT", [fanoutLibrary("FanoutSink"), .product(name: "Crypto", package: "swift-crypto")]),
    ],
    swiftLanguageModes: [.v6]
)

var nio: Target.Dependency { .product(name: "NIOCore", package: "swift-nio") }

func fanoutLibrary(_ name: String) -> Target.Dependency { .product(name: name, package: fanout) }

func fuzzTarget(_ name: String, _ dependencies: [Target.Dependency]) -> Target {
    .executableTarget(name: name, dependencies: ["FuzzSupport"] + dependencies, path: "Targets/\(name)")
}
