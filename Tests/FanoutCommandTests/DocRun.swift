import FanoutTestSupport
import Foundation

/// Runs a `DocBlock`'s commands in a fresh folder (with the repository's `fixtures/`) through
/// bash, `fanout` being the built executable, and says how each did against the page.
struct DocRun {
    struct Outcome {
        var command: String
        var status: Int32
        var output: [String]
        var errors: String
        var skipped: String?
    }

    /// What failed, one sentence each (empty: the block is as documented), and every outcome.
    var failures: [String] = []
    var outcomes: [Outcome] = []

    /// What a command printed, a line each: CRLF ends a line as LF does (HTTP's header lines, as
    /// `curl -D -` prints them; Swift reads "\r\n" as one character, which "\n" does not split).
    static func lines(_ text: String) -> [String] {
        text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).map(String.init)
    }

    /// `full` drops the `small:` substitutions (the sample outputs' regeneration).
    init(_ block: DocBlock, full: Bool = false, timeout: Duration = .seconds(120)) throws {
        let folder = NSTemporaryDirectory() + "fanout-docs-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder + "/.docs", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createSymbolicLink(
            atPath: folder + "/fixtures",
            withDestinationPath: CommandRunner.repositoryRoot + "/fixtures"
        )
        let commands =
            block.setup.map { DocBlock.Command(text: $0, expected: [], expectedStatus: [0]) } + block.commands
        var script = """
            set -u -m
            fanout() { timeout --foreground -k 5 \(Int(timeout.components.seconds)) "$FANOUT" "$@"; }
            # Every job still running gets SIGTERM, 5 s, then SIGKILL: a peer that ignores the first
            # (a blocked mask it inherited) never holds the page, nor the test, open.
            stop() {
              local running; running=$(jobs -p)
              for job in $running; do kill -TERM -- -$job 2>/dev/null; done
              for _ in $(seq 50); do [ -z "$(jobs -pr)" ] && break; sleep 0.1; done
              for job in $running; do kill -KILL -- -$job 2>/dev/null; done
              wait
            }
            trap stop EXIT
            trap 'exit 143' TERM INT
            PORT=none

            """
        var texts: [String] = []
        for (index, command) in commands.enumerated() {
            let text = block.substituted(command.text, full: full)
            texts.append(text)
            if block.skipReason(command.text) != nil { continue }
            let files = ".docs/out.\(index) 2> .docs/err.\(index)"
            // A server the page runs in the foreground is stopped as a person stops it, with
            // ^C, before the next command: the page's next server may take its port.
            script += """
                if [ -n "${SERVING:-}" ]; then kill -INT -- -$SERVING 2>/dev/null; wait $SERVING 2>/dev/null; SERVING=; fi

                """
            if block.runsAlongside(command.text) {
                // Not a server: it runs beside the next commands, the page waits for it, and it
                // writes its own status when it ends (none: it never did).
                script += "{ \(text.dropLast()); echo $? > .docs/status.\(index); } > \(files) &\n"
            } else if block.inBackground(command.text), let (host, port) = block.readyAddress(command.text) {
                // A server that says nothing when it listens: the address is asked (bash's
                // /dev/tcp), as a person would wait for it.
                script += """
                    \(text.hasSuffix("&") ? String(text.dropLast()) : text) > \(files) &
                    for _ in $(seq 300); do
                      (exec 3<>/dev/tcp/\(host)/\(port)) 2>/dev/null && break; kill -0 $! 2>/dev/null || break; sleep 0.1
                    done
                    if (exec 3<>/dev/tcp/\(host)/\(port)) 2>/dev/null; then
                      echo 0 > .docs/status.\(index)
                    else
                      echo 'did not listen on \(host):\(port) within 30 s' >> .docs/err.\(index)
                      echo 1 > .docs/status.\(index)
                    fi

                    """
            } else if block.inBackground(command.text) {
                let foreground = text.hasSuffix("&") ? String(text.dropLast()) : text
                script += """
                    \(foreground) > \(files) &
                    \(text.hasSuffix("&") ? "" : "SERVING=$!")
                    for _ in $(seq 300); do
                      grep -q '^listening on' .docs/out.\(index) && break; kill -0 $! 2>/dev/null || break; sleep 0.1
                    done
                    if grep -q '^listening on' .docs/out.\(index); then
                      PORT=$(sed -n 's/^listening on .*:\\([0-9][0-9]*\\)$/\\1/p' .docs/out.\(index) | head -n 1)
                      echo 0 > .docs/status.\(index)
                    else
                      echo 'did not print "listening on HOST:PORT" within 30 s' >> .docs/err.\(index)
                      echo 1 > .docs/status.\(index)
                    fi

                    """
            } else {
                script += "{ \(text)\n} > \(files)\necho $? > .docs/status.\(index)\n"
            }
        }
        try script.write(toFile: folder + "/.docs/script.sh", atomically: true, encoding: .utf8)
        // In a network namespace of its own (`unshare -rn`, loopback up): the page's ports are
        // its alone, so a block runs with the ports it names — 2197, 8443 — as a person pastes
        // it, however many other tests listen at once.
        let shell = try PeerProcess(
            "unshare",
            [
                "-rn", "bash", "-c",
                "PATH=$PATH:/usr/sbin:/sbin ip link set lo up && exec env FANOUT='\(CommandRunner.executable.path)' PEERS='\(CommandRunner.repositoryRoot)/Tests/FanoutCommandTests/Peers' bash .docs/script.sh",
            ],
            directory: folder
        )
        let ended = try shell.wait(timeout: timeout)
        if ended.status != 0, !ended.errors.isEmpty { failures.append("\(block.place): bash: \(ended.errors)") }

        for (index, command) in commands.enumerated() {
            if let reason = block.skipReason(command.text) {
                outcomes.append(Outcome(command: texts[index], status: 0, output: [], errors: "", skipped: reason))
                continue
            }
            let read = { (name: String) in
                (try? String(contentsOfFile: folder + "/.docs/\(name).\(index)", encoding: .utf8)) ?? ""
            }
            let status = Int32(read("status").trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
            let output = Self.lines(read("out"))
            let errors = read("err")
            outcomes.append(Outcome(command: texts[index], status: status, output: output, errors: errors))
            if !command.expectedStatus.contains(status) {
                let said = command.expectedStatus.sorted().map(String.init).joined(separator: " or ")
                failures.append(
                    "\(block.place): `\(texts[index])` exited \(status), the page says \(said): "
                        + errors.suffix(600) + output.suffix(12).joined(separator: "\n")
                )
            } else if !command.expected.isEmpty {
                let shown = block.showsStandardError ? Self.lines(errors) : output
                if InKind.match(expected: command.expected, actual: shown, loose: block.loose) == nil {
                    failures.append(
                        "\(block.place): `\(texts[index])` printed, unlike the page:\n"
                            + shown.joined(separator: "\n") + "\nthe page shows:\n"
                            + command.expected.joined(separator: "\n")
                    )
                }
            }
        }
    }
}
