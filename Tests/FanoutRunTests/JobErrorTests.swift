import FanoutResults
import FanoutRun
import Testing

/// A job's error is its kind, its place and its problem; the words are made from them in one
/// place, each form as `JobError`'s table draws it.
@Suite struct JobErrorTests {
    @Test(arguments: [
        (
            JobError.cannotRead(.optionValue("--key-file", "k.p8"), "no such file"),
            "cannot read --key-file k.p8: no such file"
        ),
        (JobError.cannotRead(.optionValue("--template", "t.json"), ""), "cannot read --template t.json"),
        (
            JobError.cannotWrite(.file("results/a/plan.json"), "read-only file system"),
            "cannot write results/a/plan.json: read-only file system"
        ),
        (
            JobError(
                .resource,
                at: .address("--serve", host: "::1", port: 80),
                .cannotListen("permission denied (errno 13)")
            ), "--serve [::1]:80: cannot listen there: permission denied (errno 13)"
        ),
        (
            JobError(
                .resource,
                at: .address(nil, host: "127.0.0.1", port: 2197),
                .cannotListen("address already in use (errno 98)")
            ), "cannot listen on 127.0.0.1:2197: address already in use (errno 98)"
        ),
        (JobError.holdsNo(.optionValue("--tokens", "t.txt"), "device token"), "--tokens t.txt holds no device token"),
        (JobError.option(.option("--fleet"), "apns is given twice in 'x'"), "--fleet: apns is given twice in 'x'"),
        (JobError.option(.command, "--fcm-bearer needs --project"), "--fcm-bearer needs --project"),
        (
            JobError(.input, at: .option("--channel-ids"), .located("ids.txt:3: not a channel id")),
            "--channel-ids ids.txt:3: not a channel id"
        ),
        (
            JobError(
                .input,
                at: .optionValue("--cost", "runs/a"),
                .invalidRun([.noAnswers, .noRequests], consequence: "its CPU stands for nothing")
            ),
            "--cost runs/a is an invalid run (no answers: the server answered no notification, so no rate or latency was measured; no request arrived: the sink measured nothing): its CPU stands for nothing"
        ),
    ])
    func theWordsAreMadeFromThePlaceAndTheProblem(error: JobError, words: String) {
        #expect(error.description == words)
    }

    /// The convenience forms carry the kind their problem implies.
    @Test func eachFormCarriesItsKind() {
        #expect(JobError.cannotRead(.file("a"), "x").kind == .input)
        #expect(JobError.holdsNo(.file("a"), "x").kind == .input)
        #expect(JobError.cannotWrite(.file("a"), "x").kind == .output)
        #expect(JobError.read("--tokens", TokenishError()).problem == .located("t.txt:1: bad"))
    }

    struct TokenishError: Error, CustomStringConvertible {
        var description: String { "t.txt:1: bad" }
    }
}
