import FanoutNotation
import FanoutTestSupport
import Foundation
import Testing

/// Values that used to crash `fanout` (SIGILL on an overflow, an abort on an allocation of
/// 2^64 bytes, EMFILE in epoll_create, a run that never ended) are usage errors: exit status
/// 64 with the option's range and what bounds it. And what is wrong with a file or a value
/// is said in words a person acts on (issue #48).
@Suite struct OptionRangeCommandTests {
    static let send = [
        "send", "--endpoint", "http://127.0.0.1:1", "--generate", "10", "--template", "fixtures/poll.json",
        "--topic", "com.example.app",
    ]
    static let token = String(repeating: "ab", count: 32)
    static let render = ["payload", "render", "--template", "fixtures/poll.json", "--token", token]
    static let plan = ["plan", "--devices", "1M", "--deadline", "5m", "--rtt", "80ms"]

    @Test(arguments: [
        (render + ["--size-limit", "4294967296"], "--size-limit must be 1…1,048,576 bytes"),
        (send + ["--size-limit", "9223372036854775807"], "--size-limit must be 1…1,048,576 bytes"),
        (send + ["--connections", "9223372036854775807"], "--connections must be 1…"),
        (send + ["--connections", "100000"], "(this machine's open-file limit, "),
        (send + ["--streams", "9223372036854775807"], "--streams must be 1…"),
        (send + ["--threads", "100000"], "--threads must be 1…"),
        (send + ["--attempts", "9223372036854775807"], "--attempts must be 1…1,000; got 9,223,372,036,854,775,807"),
        (["run", "--connections", "100000"], "--connections must be 1…"),
        (["run", "--threads", "100000"], "--threads must be 1…"),
        (["run", "--sink-threads", "100000"], "--sink-threads must be 1…"),
        (["run", "--streams", "9223372036854775807"], "--streams must be 1…"),
        (["run", "--repeat", "9223372036854775807"], "--repeat must be 1…1,000"),
        (
            plan + ["--streams", "9223372036854775807"],
            "--streams must be 1…2,147,483,647 (HTTP/2's stream identifiers"
        ),
        (plan + ["--cores", "9223372036854775807"], "--cores must be 1…65,536"),
        (["sink", "--threads", "100000"], "--threads must be 1…"),
        (["sink", "--max-connections", "100000"], "--max-connections must be 1…"),
        (["run", "--count", "18446744073709551615"], "--count must be 1…1,000,000,000,000,000 (at most 10^15 tokens)"),
        (
            [
                "send", "--endpoint", "http://127.0.0.1:1", "--generate", "18446744073709551615", "--template",
                "fixtures/poll.json", "--topic", "com.example.app",
            ],
            "--generate must be 1…1,000,000,000,000,000"
        ),
        (
            ["tokens", "generate", "--count", "18446744073709551615", "--output", "/tmp/never-written.txt"],
            "--count must be 1…1,000,000,000,000,000"
        ),
        // The count notation reads a whole number exactly: each count's range says the bound.
        (
            ["plan", "--devices", "18446744073709551615", "--deadline", "5m", "--rtt", "80ms"],
            "--devices must be 1…1,000,000,000,000,000"
        ),
        (
            [
                "plan", "--broadcast", "--channels", "2000000000000000", "--subscribers", "1", "--update-every", "10s",
                "--rtt", "80ms",
            ],
            "--channels must be 1…1,000,000,000,000,000"
        ),
        (["sink", "--expect", "18446744073709551615"], "--expect must be 1…1,000,000,000,000,000"),
        (
            render + ["--token", token, "--first-sequence", "18446744073709551615"],
            "--first-sequence must be 0…18,446,744,073,709,551,614 (2 tokens are numbered from it within 64 bits)"
        ),
    ])
    func valuesPastTheirRangeAreUsageErrors(arguments: [String], message: String) throws {
        let result = try CommandRunner.run(arguments, timeout: .seconds(30))
        #expect(result.status == 64, "\(arguments): exit \(result.status): \(result.standardError)")
        #expect(result.standardError.contains(message), "\(arguments): \(result.standardError)")
        #expect(result.standardError.contains("; got "), "\(arguments): \(result.standardError)")
    }

    /// The message says the machine's own limit, the number a person compares with `ulimit -n`.
    @Test func theOpenFileLimitIsTheMachines() throws {
        let result = try CommandRunner.run(Self.send + ["--connections", "100000000"])
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        #expect(result.status == 64)
        // The whole line: the range, this machine's limit, what it allows beside the event loops.
        let said = errorLine(of: result.standardError).flatMap {
            $0.wholeMatch(
                of:
                    #/error: --connections must be 1…([0-9,]+) \(this machine's open-file limit, ([0-9,]+), allows ([0-9,]+) beside ([0-9]+) event loops?\); got 100,000,000\./#
            )
        }
        #expect(said.map { String($0.2) } == Int(limit.rlim_cur).grouped, "\(result.standardError)")
        #expect(said.map { $0.1 == $0.3 && Int($0.4) ?? 0 >= 1 } == true, "\(result.standardError)")
    }

    @Test(arguments: [
        ("/dev/null", "/dev/null: is not a regular file (a character device)"),
        ("/tmp", "/tmp: is a directory"),
        ("/nonexistent/samples.txt", "/nonexistent/samples.txt: no such file"),
    ])
    func latencySampleFilesThatCannotBeReadSayWhy(path: String, message: String) throws {
        let result = try CommandRunner.run(["sink", "--latency", "empirical:\(path)", "--duration", "1s"])
        #expect(result.status == 64, "exit \(result.status): \(result.standardError)")
        // The whole line, the reason in words (not a Foundation error code, not "permission").
        #expect(
            errorLine(of: result.standardError)
                == "error: The value 'empirical:\(path)' is invalid for '--latency <kind:values>': "
                + "cannot read the latency samples \(message)",
            "\(result.standardError)"
        )
    }

    /// A template's integer past 64 bits is refused where it stands, not sent rounded.
    @Test func aTemplatesIntegerPast64BitsIsRefusedWithItsPlace() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("fanout-int-\(UUID().uuidString).json")
        try Data("{\"aps\": {\"alert\": \"x\"},\n \"id\": 12345678901234567891}".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try CommandRunner.run(["payload", "render", "--template", file.path, "--token", Self.token])
        #expect(result.status == 1)
        #expect(result.standardOutput.isEmpty, "\(result.standardOutput)")
        #expect(
            result.standardError.hasPrefix(
                "error: \(file.path):2:8: the integer 12345678901234567891 is outside −2^63…2^63−1"
            ),
            "\(result.standardError)"
        )
    }

    /// Values out of APNs' ranges are refused at render time, naming the field and the token.
    @Test func valuesAPNsRefusesAreRefusedNamingTheFieldAndTheToken() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("fanout-val-\(UUID().uuidString).json")
        try Data(#"{"aps": {"badge": "{{field.1:int}}"}, "score": "{{field.2:number}}"}"#.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try CommandRunner.run([
            "payload", "render", "--template", file.path,
            "--token", Self.token + "\t3\t0.5", "--token", Self.token + "\t-3\t0.5",
            "--token", Self.token + "\t3\t1e999",
        ])
        #expect(result.status == 1)
        #expect(result.standardOutput == #"{"aps":{"badge":3},"score":0.5}"# + "\n")
        #expect(
            result.standardError.contains(
                "error: token 2 (abababababababab…): the value of {{field.1}} is an int outside 0…2^63−1, which APNs' integer keys (aps.badge, the dates) take"
            ),
            "\(result.standardError)"
        )
        #expect(
            result.standardError.contains(
                "error: token 3 (abababababababab…): the value of {{field.2}} is a number outside a 64-bit float's range"
            ),
            "\(result.standardError)"
        )
    }

    /// A field `--field-names` named is refused by its name, the template's words (newcomer
    /// pass 3 read `{{field.1}}` for a template that says `{{field.badge:int}}`).
    @Test func aNamedFieldIsRefusedByItsName() throws {
        let result = try CommandRunner.run([
            "payload", "render", "--template", CommandRunner.repositoryRoot + "/fixtures/poll-personalised.json",
            "--field-names", "badge", "--token", Self.token + "\t-1",
        ])
        #expect(result.status == 1)
        let errors = result.standardError.split(separator: "\n").filter { $0.hasPrefix("error: ") }
        #expect(
            errors == [
                "error: token 1 (abababababababab…): the value of {{field.badge}} (field 1) is an int outside 0…2^63−1, which APNs' integer keys (aps.badge, the dates) take"
            ],
            "\(result.standardError)"
        )
    }
}
