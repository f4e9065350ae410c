import FanoutPayload
import NIOCore

/// The repository's root, found from this file's place in it.
let repositoryRoot: String = {
    var path = #filePath
    for _ in 0..<3 { path = String(path[..<path.lastIndex(of: "/")!]) }
    return path
}()

func fixturePath(_ name: String) -> String { "\(repositoryRoot)/fixtures/\(name)" }
func goldenPath(_ name: String) -> String { "\(repositoryRoot)/Tests/FanoutPayloadTests/Golden/\(name)" }

/// A 64-character token for tests.
let sampleToken = "6e0f3a9c1b2d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7"

/// Compiles `json` (text) with `options`.
func template(_ json: String, options: PayloadTemplate.Options = .init()) throws -> PayloadTemplate {
    try PayloadTemplate(json: Array(json.utf8), file: "t.json", options: options)
}

/// Encodes one notification and returns its bytes as text.
func render(
    _ template: PayloadTemplate,
    token: String = sampleToken,
    sequence: UInt64 = 0,
    fields: [String] = [],
    oversize: PayloadEncoder.OversizePolicy = .reject
) throws(PayloadEncodingError) -> String {
    var buffer = ByteBuffer()
    _ = try PayloadEncoder(template: template, oversizePolicy: oversize).encode(
        token: token,
        sequence: sequence,
        fields: fields,
        into: &buffer
    )
    return String(buffer: buffer)
}

/// The error a template load throws, or `nil`.
func loadError(_ json: String, options: PayloadTemplate.Options = .init()) -> PayloadTemplateError? {
    do {
        _ = try PayloadTemplate(json: Array(json.utf8), file: "t.json", options: options)
        return nil
    } catch {
        return error
    }
}

func loadError(bytes: [UInt8]) -> PayloadTemplateError? {
    do {
        _ = try PayloadTemplate(json: bytes, file: "t.json")
        return nil
    } catch {
        return error
    }
}
