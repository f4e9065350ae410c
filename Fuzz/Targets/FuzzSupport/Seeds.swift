#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// libFuzzer's entry for a program with its own `main` (compiler-rt's FuzzerInterface.h):
/// runs the fuzzer with the command line's options, calling `test` for each input.
@_silgen_name("LLVMFuzzerRunDriver")
private func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ test: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

/// A fuzz target's `main`: writes its seed corpus where scripts/fuzz.sh asks
/// (`FANOUT_FUZZ_SEEDS`, a folder), then hands the command line to libFuzzer.
///
/// Seeds come from the library's own encoders and the tests' inputs, so they start the fuzzer
/// on inputs that reach deep states (a whole request, a signed token) rather than at byte zero.
/// (The driver is called from Swift's own `main` rather than exporting `LLVMFuzzerTestOneInput`
/// to libFuzzer's: SwiftPM renames an executable's `main`, which `-parse-as-library` removes.)
public func runFuzzer(
    seeds: @autoclosure () -> [[UInt8]],
    _ test: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> Never {
    if let folder = getenv("FANOUT_FUZZ_SEEDS").map({ String(cString: $0) }), !folder.isEmpty {
        for (number, seed) in seeds().enumerated() {
            let path = "\(folder)/seed-\(number)"
            guard let file = fopen(path, "wb") else { fatalError("cannot write the seed \(path)") }
            _ = seed.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
            fclose(file)
        }
    }
    var argc = CommandLine.argc
    var argv = CommandLine.unsafeArgv
    exit(LLVMFuzzerRunDriver(&argc, &argv, test))
}

/// Seeds from text.
public func textSeeds(_ texts: [String]) -> [[UInt8]] {
    texts.map { Array($0.utf8) }
}

/// Reads a fuzz input front to back: a byte that picks an option, then the rest.
public struct FuzzInput {
    public var bytes: UnsafeRawBufferPointer

    public init(_ start: UnsafePointer<UInt8>?, _ count: Int) {
        bytes = UnsafeRawBufferPointer(start: count == 0 ? nil : start, count: count)
    }

    /// The next byte, or 0 when none is left.
    public mutating func byte() -> UInt8 {
        guard let first = bytes.first else { return 0 }
        bytes = UnsafeRawBufferPointer(rebasing: bytes.dropFirst())
        return first
    }

    /// Up to `count` bytes.
    public mutating func take(_ count: Int) -> UnsafeRawBufferPointer {
        let taken = UnsafeRawBufferPointer(rebasing: bytes.prefix(count))
        bytes = UnsafeRawBufferPointer(rebasing: bytes.dropFirst(taken.count))
        return taken
    }

    public var isEmpty: Bool { bytes.isEmpty }

    /// The whole input as text.
    public var text: String { String(decoding: bytes, as: UTF8.self) }
}
