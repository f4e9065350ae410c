import FanoutTestSupport
import Foundation
import Testing

/// `fanout payload render`, run as a process: what it prints and how it exits.
@Suite struct PayloadRenderCommandTests {
    let token = String(repeating: "ab", count: 32)

    @Test func printsTheExactBytesOfEachToken() throws {
        let result = try CommandRunner.run([
            "payload", "render", "--template", "fixtures/poll.json", "--token", token, "--token", token,
        ])
        let fixture = try String(contentsOfFile: "\(CommandRunner.repositoryRoot)/fixtures/poll.json", encoding: .utf8)
        #expect(result.status == 0)
        #expect(result.standardOutput == fixture + "\n" + fixture + "\n")
        #expect(result.standardError.isEmpty)
    }

    @Test func fieldsTravelWithTheTokenAndSizesArePrinted() throws {
        let arguments = [
            "payload", "render", "--template", "fixtures/poll-personalised.json", "--field-names", "badge",
        ]
        let rendered = try CommandRunner.run(arguments + ["--token", token + "\t12"])
        #expect(rendered.status == 0)
        #expect(rendered.standardOutput.contains(#""badge":12,"#))
        let document = try JSONValue(Data(rendered.standardOutput.utf8))
        #expect(
            document["category-actions"]?[0]?["value"] == .string("https://example.com/ok?device=\(token)")
                && document["category-actions"]?[1]?["value"] == .string("https://example.com/nok?device=\(token)"),
            "\(rendered.standardOutput)"
        )
        let sized = try CommandRunner.run(arguments + ["--token", token + "\t12", "--token", token + "\t3", "--size"])
        #expect(sized.status == 0)
        let lengths = rendered.standardOutput.utf8.count - 1
        #expect(sized.standardOutput == "\(lengths)\n\(lengths - 1)\n")
    }

    @Test func badTemplateExitsOneWithThePlace() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("fanout-bad-\(UUID().uuidString).json")
        try Data("{\n  \"aps\": {\"badge\": \"x\"}\n}".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try CommandRunner.run(["payload", "render", "--template", file.path, "--token", token])
        #expect(result.status == 1)
        #expect(result.standardOutput.isEmpty)
        #expect(
            result.standardError
                == "error: \(file.path):2:20: aps.badge must be an integer, found a string; to fill it in per device write \"{{field.1:int}}\"\n"
        )
    }

    @Test func badTokensAreReportedAndTheRestStillRendered() throws {
        let result = try CommandRunner.run([
            "payload", "render", "--template", "fixtures/poll-personalised.json", "--field-names", "badge",
            "--token", "xyz", "--token", token + "\tmany", "--token", token + "\t1",
        ])
        #expect(result.status == 1)
        #expect(result.standardOutput.split(separator: "\n").count == 1)
        #expect(
            lines(of: result.standardError, keyed: "error: ")
                == [
                    "error: token 1: character 1 of the device token is 'x', not a hex digit",
                    "error: token 2 (abababababababab…): the value of {{field.badge}} (field 1) is not an int",
                ],
            "\(result.standardError)"
        )
    }

    @Test func templateOverTheLimitIsRefusedAtLoad() throws {
        let result = try CommandRunner.run([
            "payload", "render", "--template", "fixtures/poll.json", "--token", token, "--size-limit", "200",
        ])
        #expect(result.status == 1)
        #expect(
            result.standardError.hasSuffix(
                "fixtures/poll.json:1:1: the template is 280 bytes before any placeholder is filled in, over the 200-byte limit for alert pushes\n"
            )
        )
    }

    @Test func oversizeNotificationIsRefusedUnlessAllowed() throws {
        let arguments = [
            "payload", "render", "--template", "fixtures/poll-personalised.json", "--field-names", "badge",
            "--token", token + "\t1", "--size-limit", "300",
        ]
        let refused = try CommandRunner.run(arguments)
        #expect(refused.status == 1)
        #expect(refused.standardOutput.isEmpty)
        #expect(
            errorLine(of: refused.standardError)
                == "error: token 1 (abababababababab…): the payload is 424 bytes, over the 300-byte limit",
            "\(refused.standardError)"
        )
        let allowed = try CommandRunner.run(arguments + ["--allow-oversize", "--size"])
        #expect(allowed.status == 0)
        #expect(allowed.standardOutput == "424\n")
    }

    @Test func usageErrorsExitSixtyFour() throws {
        let noToken = try CommandRunner.run(["payload", "render", "--template", "fixtures/poll.json"])
        #expect(noToken.status == 64)
        #expect(
            errorLine(of: noToken.standardError) == "error: Give at least one --token to render the template for.",
            "\(noToken.standardError)"
        )
        let badType = try CommandRunner.run([
            "payload", "render", "--template", "fixtures/poll.json", "--token", token, "--push-type", "fax",
        ])
        #expect(badType.status == 64)
    }
}
