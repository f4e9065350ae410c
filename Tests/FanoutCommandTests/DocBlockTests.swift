import Testing

/// The docs test's own parts: markers read, output compared in kind, and a page whose command
/// no longer runs, or prints something else, failing.
@Suite struct DocBlockTests {
    static let page = """
        Some prose.

        <!-- docs-test: run
        small: --count 1000000 => --count 100
        skip: fanout probe — needs Apple
        exit: fanout gate => 1
        -->
        ```sh
        fanout tokens generate --count 1000000 --output t.txt   # a comment
        fanout probe https://api.push.apple.com \\
            --tokens t.txt
        fanout gate results/x
        ```

        <!-- docs-test: output of fanout tokens count --tokens t.txt -->
        ```
        100 tokens
        ```

        ```
        unmarked
        ```
        """

    @Test func markersAndCommandsAreRead() {
        let blocks = DocBlock.blocks(in: Self.page, file: "page.md")
        #expect(blocks.count == 3)
        #expect(blocks[0].kind == .run && blocks[0].line == 8)
        #expect(
            blocks[0].commands.map(\.text) == [
                "fanout tokens generate --count 1000000 --output t.txt",
                "fanout probe https://api.push.apple.com --tokens t.txt",
                "fanout gate results/x",
            ]
        )
        #expect(blocks[0].commands.map(\.expectedStatus) == [[0], [0], [1]])
        #expect(blocks[0].skipReason(blocks[0].commands[1].text) == "needs Apple")
        #expect(
            blocks[0].substituted(blocks[0].commands[0].text) == "fanout tokens generate --count 100 --output t.txt"
        )
        #expect(
            blocks[0].substituted(blocks[0].commands[0].text, full: true)
                == "fanout tokens generate --count 1000000 --output t.txt"
        )
        #expect(blocks[1].kind == .outputOf("fanout tokens count --tokens t.txt"))
        #expect(blocks[1].commands.first?.expected == ["100 tokens"])
        #expect(blocks[2].kind == nil)
    }

    /// A server that prints no `listening on` line is waited for at the address `ready:` names;
    /// a `ready:` without a port leaves the block unmarked (it fails, rather than racing).
    @Test func readyNamesTheAddressASilentServerListensOn() {
        let page =
            "<!-- docs-test: run\nready: nginx => 127.0.0.1:8080\n-->\n```sh\nnginx -p \"$PWD\" -c f.conf &\nfanout gate x\n```"
        let block = DocBlock.blocks(in: page, file: "p.md")[0]
        #expect(block.kind == .run)
        let address = block.readyAddress("nginx -p \"$PWD\" -c f.conf &")
        #expect(address?.host == "127.0.0.1" && address?.port == 8080)
        #expect(block.readyAddress("fanout gate x") == nil)
        let portless = "<!-- docs-test: run\nready: nginx => somewhere\n-->\n```sh\nnginx &\n```"
        #expect(DocBlock.blocks(in: portless, file: "p.md")[0].kind == nil)
    }

    /// HTTP's header lines end in CRLF (`curl -D -`): a line each, as LF's, to match in kind.
    @Test func aCarriageReturnEndsALine() {
        let printed = DocRun.lines("HTTP/2 201 \r\napns-channel-id: abc==\r\n\r\n")
        #expect(printed == ["HTTP/2 201 ", "apns-channel-id: abc==", "", ""])
        #expect(InKind.match(expected: ["HTTP/2 201", "apns-channel-id: abc=="], actual: printed) != nil)
    }

    @Test func promptedBlocksSplitCommandsFromWhatTheyPrint() {
        let blocks = DocBlock.blocks(
            in: "<!-- docs-test: run -->\n```sh\n$ fanout plan \\\n    --devices 1M\nline one\n…\n$ fanout x\n```",
            file: "p.md"
        )
        #expect(blocks[0].commands.map(\.text) == ["fanout plan --devices 1M", "fanout x"])
        #expect(blocks[0].commands[0].expected == ["line one", "…"])
        #expect(blocks[0].commands[1].expected.isEmpty)
    }

    /// A page's shard on "another machine" runs beside the next command; a server started
    /// with `&` is waited for until it listens, and a foreground server runs in the background.
    @Test func commandsBesideTheNextAreToldFromServers() {
        let block = DocBlock.blocks(
            in: "<!-- docs-test: run\nconcurrent: fanout send\nbackground: fanout sink\n-->\n```sh\n"
                + "fanout send --shard 1/2 --output a &   # machine 1\nfanout send --shard 2/2 --output b\n"
                + "fanout sink --listen 127.0.0.1:2197 &\nfanout sink --listen 127.0.0.1:2198\n```",
            file: "p.md"
        )[0]
        let texts = block.commands.map(\.text)
        #expect(texts.map(block.runsAlongside) == [true, false, false, false], "\(texts)")
        #expect(texts.map(block.inBackground) == [true, false, true, true], "\(texts)")
    }

    @Test func outputMatchesInKind() {
        let shown = [
            "1,000,000 notifications in 5.59 s: 178,866 notifications/s   # a comment",
            "…",
            "digest 22cb9fd399c7d8c4-dc7b648b532baaae",
            "  answer: 20,000/s (confirmed: …)",
        ]
        let today = [
            "20,000 notifications in 0.14 s: 144,046 notifications/s",
            "cpu µs per notification: sender 2.02",
            "harness: …",
            "digest e07bae159237aaa5-95f7bf9de6bceb06",
            "answer: 2,000/s (confirmed: by a repeat, 1,500/s did not)",
        ]
        let aligned = InKind.match(expected: shown, actual: today)
        #expect(aligned == [today[0], "…", today[3], "answer: 2,000/s (confirmed: …)"])
        // A word changed, a line missing, a line more: not the same kind.
        #expect(InKind.match(expected: ["accepted 5 rejected 0"], actual: ["accepted 5 failed 0"]) == nil)
        #expect(InKind.match(expected: ["a 1", "b 2"], actual: ["a 1"]) == nil)
        #expect(InKind.match(expected: ["a 1"], actual: ["a 1", "b 2"]) == nil)
        #expect(InKind.match(expected: ["-1.4%"], actual: ["+12.0%"]) != nil)
    }

    /// What the docs test does with a page whose command was changed to one that does not run,
    /// or whose output no longer is what the page shows.
    @Test func aCommandThatDoesNotRunFailsItsPage() throws {
        let good = DocBlock.blocks(
            in: "<!-- docs-test: run -->\n```sh\n$ fanout tokens count --tokens t.txt\ntokens: 100\n…\n```",
            file: "p.md"
        )[0]
        var withSetup = good
        withSetup.setup = ["fanout tokens generate --count 100 --output t.txt"]
        let run = try DocRun(withSetup)
        #expect(run.failures.isEmpty, "\(run.failures)")

        var misspelt = withSetup
        misspelt.commands[0].text = "fanout tokens count --tokenz t.txt"
        let failed = try DocRun(misspelt)
        #expect(failed.failures.count == 1)
        #expect(
            failed.failures.first
                == "p.md:2: `fanout tokens count --tokenz t.txt` exited 64, the page says 0: error: Give either --tokens FILE or "
                + "--generate N.\nUsage: fanout tokens count (--tokens <file> | --generate <n>) [<options>]\n"
                + "  See 'fanout tokens count --help' for more information.\n",
            "\(failed.failures)"
        )

        var drifted = withSetup
        drifted.commands[0].expected = ["100 tokens, all valid"]
        let drift = try DocRun(drifted)
        #expect(
            drift.failures.first
                == "p.md:2: `fanout tokens count --tokens t.txt` printed, unlike the page:\ntokens: 100\nlines: 100\nskipped: 0\n\n"
                + "the page shows:\n100 tokens, all valid",
            "\(drift.failures)"
        )
    }

    /// A server a block starts is stopped with it, and `$PORT` is the port it printed.
    @Test func aBackgroundSinkGivesItsPortAndIsStopped() throws {
        let block = DocBlock.blocks(
            in: """
                <!-- docs-test: run
                replace: 2197 => $PORT
                -->
                ```sh
                fanout sink --listen 127.0.0.1:0 &
                fanout send --endpoint http://127.0.0.1:2197 --generate 10 --min-measured 10 --template fixtures/poll.json --topic t
                ```
                """,
            file: "p.md"
        )[0]
        let run = try DocRun(block)
        #expect(run.failures.isEmpty, "\(run.failures)")
        #expect(run.outcomes.count == 2)
        #expect(run.outcomes[1].output.contains { $0.hasPrefix("accepted 10") }, "\(run.outcomes[1].output)")
    }
}
