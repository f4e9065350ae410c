import FanoutAPNs
import FanoutPayload
import NIOCore

/// `fanout payload render`'s job: the exact payload bytes (or their sizes) each token would be
/// sent, one line a token, handed to the caller's output; a token that cannot be encoded is
/// told `reporter` with its position.
public struct PayloadRenderJob: Sendable {
    /// The template file and how it is read.
    public var template: String
    public var templateOptions = PayloadTemplate.Options()
    /// Each a token in hex, then optional tab-separated fields, as a line of a token file.
    public var tokens: [String]
    /// The sequence number of the first token (`{{sequence}}`).
    public var firstSequence: UInt64 = 0
    /// Print each payload's size in bytes instead of its bytes.
    public var printsSizes = false
    /// Print payloads over the size limit instead of refusing them.
    public var allowsOversize = false
    /// Where a token that cannot be rendered is told: by default nowhere.
    public var reporter: any JobReporter = SilentReporter()

    public init(template: String, tokens: [String]) {
        self.template = template
        self.tokens = tokens
    }

    /// Renders every token, each line (its payload or size, and a newline) handed to `output`;
    /// returns how many could not be encoded.
    public func run(output: (ByteBuffer) -> Void) throws -> Int {
        let template: PayloadTemplate
        do {
            template = try PayloadTemplate(contentsOf: self.template, options: templateOptions)
        } catch {
            throw JobError.input(.command, "\(error)")
        }
        let encoder = PayloadEncoder(template: template, oversizePolicy: allowsOversize ? .send : .reject)
        var buffer = ByteBufferAllocator().buffer(capacity: template.sizeLimit)
        var failures = 0
        for (position, line) in tokens.enumerated() {
            let columns = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            let hex = columns[0]
            if let problem = DeviceTokenFormat.default.problem(in: hex) {
                reporter.report(.renderFailed(position: position + 1, token: nil, reason: "\(problem)"))
                failures += 1
                continue
            }
            buffer.clear()
            do {
                let count = try encoder.encode(
                    token: hex,
                    sequence: firstSequence + UInt64(position),
                    fields: Array(columns.dropFirst()),
                    into: &buffer
                )
                if printsSizes {
                    buffer.clear()
                    buffer.writeString("\(count)")
                }
                buffer.writeStaticString("\n")
                output(buffer)
            } catch {
                // A field --field-names named is said by its name (it read {{field.1}}).
                let reason = error.description(fieldNames: templateOptions.fieldNames)
                reporter.report(.renderFailed(position: position + 1, token: hex, reason: reason))
                failures += 1
            }
        }
        return failures
    }
}
