import FanoutRun
import FanoutTestSupport
import FanoutTokens
import Foundation
import Testing

/// The cost gate's workload (`fanout-cost`, `CostWorkload`): it must do the whole fan-out —
/// every token read, sent, accepted by the sink with the same digest, and its latency recorded —
/// or fail, because a workload that quietly did less would make a cheaper build look cheaper.
@Suite struct CostWorkloadTests {
    let folder: String = {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("fanout-cost-\(UUID().uuidString)")
            .path
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }()

    @Test(arguments: [1, 7, 100, 1000])
    func everyTokenIsSentAcceptedAndRecorded(streams: Int) throws {
        var workload = CostWorkload(tokens: .generated(TokenGenerator(count: 2500, seed: 9)), count: 2500)
        workload.streams = streams
        let result = try workload.run()
        #expect(result.tokens == 2500)
        #expect(result.sent == 2500)
        #expect(result.accepted == 2500)
        #expect(result.sinkRequests == 2500)
        #expect(result.sinkAccepted == 2500)
        #expect(result.digestsAgree == true)
        #expect(result.latencies == 2500)
        // One round trip answers up to `streams` requests; the handshake and GOAWAY add a few.
        #expect(result.roundTrips >= 2500 / streams)
        #expect(result.roundTrips <= 2500 / streams + 8)
    }

    /// The FCM workload (`scripts/cost.sh --fcm`): every token sent as an FCM send, delivered by
    /// the FCM sink and recorded; the FCM sink keeps no digest.
    @Test(arguments: [1, 100]) func fcmSendsAreSentDeliveredAndRecorded(streams: Int) throws {
        var workload = CostWorkload(tokens: .generated(TokenGenerator(count: 2000, seed: 9)), count: 2000)
        workload.streams = streams
        workload.fcm = true
        let result = try workload.run()
        #expect(result.tokens == 2000 && result.sent == 2000 && result.accepted == 2000)
        #expect(result.sinkRequests == 2000 && result.sinkAccepted == 2000)
        #expect(result.digestsAgree == nil)
        #expect(result.latencies == 2000)
    }

    @Test func theSameWorkTwiceGivesTheSameCounts() throws {
        // 5,000 generated tokens of 85 bytes: as many batches as the workload can have, nearly.
        let workload = CostWorkload(tokens: .generated(TokenGenerator(count: 5000, length: 85)), count: 5000)
        #expect(try workload.run() == workload.run())
    }

    @Test func aCountTheFileDoesNotHoldIsRefused() throws {
        let workload = CostWorkload(tokens: .generated(TokenGenerator(count: 1000)), count: 1200)
        let error = #expect(throws: JobError.self) { try workload.run() }
        #expect(error?.kind == .input && error?.place == .file("<generated>"))
        #expect(error?.description == "<generated>: it holds 1000 tokens, not the 1200 the cost workload was given")
    }

    @Test func theProgramFansAFileOutAndSaysWhatItDid() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let tokens = "\(folder)/tokens.txt"
        #expect(try CommandRunner.run(["tokens", "generate", "--count", "3000", "--output", tokens]).status == 0)
        let result = try CommandRunner.run([tokens, "3000", "--streams", "50"], program: "fanout-cost")
        #expect(result.status == 0)
        #expect(
            result.standardOutput
                == "tokens 3000 sent 3000 accepted 3000 sink 3000/3000 digests agree latencies 3000 round-trips 63\n"
        )

        let short = try CommandRunner.run([tokens, "3001"], program: "fanout-cost")
        #expect(short.status == 1)
        #expect(
            line(of: short.standardError, keyed: "Error: ")
                == "Error: \(tokens): it holds 3000 tokens, not the 3001 the cost workload was given",
            "\(short.standardError)"
        )
        let bad = try CommandRunner.run([tokens, "0"], program: "fanout-cost")
        #expect(bad.status == 64)
        #expect(
            line(of: bad.standardError, keyed: "Error: ") == "Error: COUNT is at least 1, not 0",
            "\(bad.standardError)"
        )
        let missing = try CommandRunner.run(["\(folder)/none.txt", "10"], program: "fanout-cost")
        #expect(missing.status == 1)
        #expect(
            line(of: missing.standardError, keyed: "Error: ")
                == "Error: \(folder)/none.txt: cannot open: No such file or directory",
            "\(missing.standardError)"
        )
    }

    /// scripts/cost.sh --tokens counts the mallocs of generated tokens (`fanout run`'s set) too.
    @Test func theProgramFansGeneratedTokensOutOrSaysWhichSetItWants() throws {
        let generated = try CommandRunner.run(["--generated", "3000", "--streams", "50"], program: "fanout-cost")
        #expect(generated.status == 0)
        #expect(
            generated.standardOutput
                == "tokens 3000 sent 3000 accepted 3000 sink 3000/3000 digests agree latencies 3000 round-trips 63\n"
        )
        for arguments in [[], ["tokens.txt"], ["tokens.txt", "10", "--generated", "10"]] {
            let wrong = try CommandRunner.run(arguments, program: "fanout-cost")
            #expect(wrong.status == 64)
            #expect(
                line(of: wrong.standardError, keyed: "Error: ")
                    == "Error: give a token file and its COUNT, or --generated COUNT",
                "\(arguments): \(wrong.standardError)"
            )
        }
    }
}
