import FanoutMachine
import FanoutNotation
import Testing

/// The ranges of the count and size options on made-up machines: each bound where the
/// machine or the protocol puts it, and a value past it refused with the range, its reason and
/// the value.
@Suite struct MachineLimitsTests {
    /// 20,000 open files and 23 GB, like the machine the issue was found on.
    let machine = MachineLimits(openFiles: 20_000, memoryBytes: 23_000_000_000)

    @Test func eventLoopsAreBoundedByTheOpenFilesOrByFanout() throws {
        #expect(machine.eventLoops("--threads").values == 1...MachineLimits.mostEventLoops)
        // 1024 − 64 reserved − 1 for a connection, 3 descriptors a loop.
        let small = MachineLimits(openFiles: 1024, memoryBytes: 1 << 30)
        #expect(small.eventLoops("--threads").values == 1...319)
        #expect(small.eventLoops("--threads", others: 19).values == 1...300)
        let error = #expect(throws: OptionRangeError.self) { try small.eventLoops("--threads").check(100_000) }
        #expect(
            error?.description
                == "--threads must be 1…319 (this machine's open-file limit, 1,024, allows 319); got 100,000"
        )
        #expect(throws: OptionRangeError.self) { try machine.eventLoops("--threads").check(100_000) }
        #expect(throws: OptionRangeError.self) { try machine.eventLoops("--threads").check(0) }
        #expect(try machine.eventLoops("--threads").check(2) == 2)
    }

    @Test func connectionsAreBoundedByTheOpenFilesBesideTheLoops() throws {
        // 20,000 − 64 − 3 × 2 loops.
        #expect(machine.connections("--connections", eventLoops: 2).values == 1...19_930)
        // The embedded sink holds the other end: two descriptors a connection.
        #expect(machine.connections("--connections", filesEach: 2, eventLoops: 2).values == 1...9965)
        let error = #expect(throws: OptionRangeError.self) {
            try machine.connections("--connections", eventLoops: 1).check(100_000)
        }
        #expect(
            error?.description
                == "--connections must be 1…19,933 (this machine's open-file limit, 20,000, allows 19,933 beside 1 event loop); got 100,000"
        )
        #expect(throws: OptionRangeError.self) {
            try machine.connections("--connections", eventLoops: 1).check(Int.max)
        }
    }

    @Test func streamsAreBoundedByHTTP2AndByTheMemoryOfAllConnections() throws {
        // 23 GB ÷ 4 ÷ 256 bytes a stream, over 4 connections.
        let memoryBound = Int(23_000_000_000 / 4 / 256 / 4)
        #expect(machine.streams("--streams", connections: 4).values == 1...memoryBound)
        let error = #expect(throws: OptionRangeError.self) {
            try machine.streams("--streams", connections: 4).check(Int.max)
        }
        #expect(
            error?.description
                == "--streams must be 1…5,615,234 (this machine's memory, 23.0 GB, holds 5,615,234 a connection over 4 connections); got 9,223,372,036,854,775,807"
        )
        let huge = MachineLimits(openFiles: 1 << 20, memoryBytes: .max)
        #expect(huge.streams("--streams", connections: 1).values == 1...Int(Int32.max))
        #expect(throws: OptionRangeError.self) { try huge.streams("--streams", connections: 1).check(1 << 31) }
        #expect(MachineLimits.plannedStreams("--streams").values == 1...2_147_483_647)
    }

    /// A sender's options are checked loops first, then connections beside them, then streams
    /// over the connections: the first out of range is the one named.
    @Test func aSendersOptionsAreCheckedTogether() throws {
        try machine.checkSender(
            eventLoops: ("--threads", 2),
            otherEventLoops: 1,
            connections: ("--connections", 4),
            filesEach: 2,
            streams: ("--streams", 1000)
        )
        for (threads, connections, streams, named) in [
            (100_000, 4, 1000, "--threads"), (1, 100_000, 1000, "--connections"), (1, 4, Int.max, "--streams"),
            (1, Int.max, Int.max, "--connections"), (Int.min, Int.min, Int.min, "--threads"),
        ] {
            let error = #expect(throws: OptionRangeError.self) {
                try machine.checkSender(
                    eventLoops: ("--threads", threads),
                    otherEventLoops: Int.max,
                    connections: ("--connections", connections),
                    streams: ("--streams", streams)
                )
            }
            #expect(error?.range.option == named, "\(threads) \(connections) \(streams): \(String(describing: error))")
        }
    }

    /// Whatever a machine reports, a range is never empty and working it out never traps.
    @Test(arguments: [Int.min, -1, 0, 64, 65, 1024, Int.max])
    func anyMachineGivesRanges(openFiles: Int) {
        for memory: UInt64 in [0, 1, 1 << 30, .max] {
            let limits = MachineLimits(openFiles: openFiles, memoryBytes: memory)
            #expect(limits.eventLoops("--threads", others: Int.max).values.lowerBound == 1)
            #expect(limits.connections("--connections", filesEach: Int.min, eventLoops: Int.max).values.lowerBound == 1)
            #expect(limits.streams("--streams", connections: Int.min).values.lowerBound == 1)
            #expect(limits.streams("--streams", connections: Int.max).values.upperBound <= Int(Int32.max))
        }
    }

    @Test func sizeLimitsStopWhereEveryBufferSizedByThemIsSafe() throws {
        let range = MachineLimits.payloadLimit("--size-limit")
        #expect(range.values == 1...1_048_576)
        let error = #expect(throws: OptionRangeError.self) { try range.check(4_294_967_296) }
        #expect(
            error?.description
                == "--size-limit must be 1…1,048,576 bytes (APNs takes 4,096, 5,120 for VoIP; up to 1 MiB exercises a server's 413); got 4,294,967,296"
        )
        #expect(try range.check(5120) == 5120)
    }

    @Test func thisMachinesLimitsAreRead() {
        let limits = MachineLimits.current()
        #expect(limits.openFiles > 0)
        #expect(limits.memoryBytes > 0)
    }
}
