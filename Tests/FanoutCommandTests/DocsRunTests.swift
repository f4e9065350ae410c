import FanoutTestSupport
import Foundation
import Testing

/// Every command block of the README and docs/ runs as the page says: each exits as documented
/// and prints, in kind, the lines the page shows (figures may differ). A block the test does not
/// run says why in its marker (see `DocBlock`); a block without a marker fails.
///
/// `FANOUT_DOCS_REGENERATE=1` (scripts/docs-outputs.sh) instead runs each block at its full
/// size and writes today's lines into the pages, with the date and build under each.
@Suite struct DocsRunTests {
    static let pages: [String] = {
        let docs = (try? FileManager.default.contentsOfDirectory(atPath: CommandRunner.repositoryRoot + "/docs")) ?? []
        return ["README.md"] + docs.filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
    }()

    static func blocks(_ page: String) throws -> [DocBlock] {
        let text = try String(contentsOfFile: CommandRunner.repositoryRoot + "/" + page, encoding: .utf8)
        return DocBlock.blocks(in: text, file: page)
    }

    @Test func everyBlockSaysHowItIsChecked() throws {
        #expect(Self.pages.count > 5)
        for page in Self.pages {
            for block in try Self.blocks(page) {
                #expect(block.kind != nil, "\(block.place): no <!-- docs-test: run|output of …|not run: … --> above it")
                if case .notRun(let reason) = block.kind { #expect(!reason.isEmpty, "\(block.place)") }
            }
        }
    }

    /// Whether a block of `page` that runs sets up with openssl (a key or a certificate for the
    /// sink): those pages are tested apart, skipped without openssl.
    static func setsUpWithOpenSSL(_ page: String) -> Bool {
        let blocks = (try? Self.blocks(page)) ?? []
        return blocks.contains { block in
            (block.setup + block.commands.map(\.text)).contains { line in
                line.components(separatedBy: "|| ").contains { $0.hasPrefix("openssl ") }
            }
        }
    }

    /// Whether a block of `page` that runs starts nginx (docs/return-wave.md's stand-in backend).
    static func startsNginx(_ page: String) -> Bool {
        let blocks = (try? Self.blocks(page)) ?? []
        return blocks.contains { block in
            (block.setup + block.commands.map(\.text)).contains { $0.hasPrefix("nginx ") }
        }
    }

    @Test(.requires(.namespaces), arguments: pages.filter { !setsUpWithOpenSSL($0) && !startsNginx($0) })
    func commandsRunAsDocumented(page: String) throws {
        try Self.runCommands(of: page)
    }

    @Test(.requires(.openssl), .requires(.namespaces), arguments: pages.filter(setsUpWithOpenSSL))
    func commandsSetUpWithOpenSSLRunAsDocumented(page: String) throws {
        try Self.runCommands(of: page)
    }

    @Test(
        .requires(.nginx),
        .requires(.namespaces),
        arguments: pages.filter { startsNginx($0) && !setsUpWithOpenSSL($0) }
    )
    func commandsWithABackendRunAsDocumented(page: String) throws {
        try Self.runCommands(of: page)
    }

    static func runCommands(of page: String) throws {
        let regenerate = ProcessInfo.processInfo.environment["FANOUT_DOCS_REGENERATE"] == "1"
        var lines = try String(contentsOfFile: CommandRunner.repositoryRoot + "/" + page, encoding: .utf8)
            .components(separatedBy: "\n")
        // From the last block up, so a rewritten block leaves the earlier ones' lines in place.
        for block in try Self.blocks(page).reversed() {
            guard block.kind == .run || { if case .outputOf = block.kind { true } else { false } }() else { continue }
            if regenerate, !block.commands.contains(where: { !$0.expected.isEmpty }) { continue }
            let run = try DocRun(block, full: regenerate, timeout: .seconds(regenerate ? 900 : 120))
            if regenerate {
                Self.rewrite(block, with: run, in: &lines)
            } else {
                for failure in run.failures { Issue.record(Comment(rawValue: failure)) }
            }
        }
        if regenerate {
            try lines.joined(separator: "\n").write(
                toFile: CommandRunner.repositoryRoot + "/" + page,
                atomically: true,
                encoding: .utf8
            )
        }
    }

    /// The block's shown outputs replaced by today's (elisions kept where the lines still match
    /// in kind), and a line under it saying when and with which build.
    static func rewrite(_ block: DocBlock, with run: DocRun, in lines: inout [String]) {
        let outcomes = Array(run.outcomes.suffix(block.commands.count))
        guard block.commands.contains(where: { !$0.expected.isEmpty }), outcomes.count == block.commands.count else {
            return
        }
        let today = { (index: Int) in
            let shown =
                block.showsStandardError
                ? DocRun.lines(outcomes[index].errors) : outcomes[index].output
            return InKind.match(expected: block.commands[index].expected, actual: shown, loose: block.loose)
                ?? shown.filter { !$0.isEmpty }
        }
        var body: [String] = []
        if case .outputOf = block.kind {
            body = today(0)
        } else {
            // Command lines stay as written; each command's shown lines become today's.
            var command = -1
            var continued = false
            var written = false
            for line in lines[block.body] {
                if line.hasPrefix("$ ") || continued {
                    if line.hasPrefix("$ ") { command += 1 }
                    continued = line.hasSuffix("\\")
                    written = false
                    body.append(line)
                } else if !written, command >= 0 {
                    body.append(contentsOf: today(command))
                    written = true
                }
            }
        }
        let after = block.body.upperBound + 1
        let build = ProcessInfo.processInfo.environment["FANOUT_DOCS_BUILD"] ?? "?"
        let stamp = "Measured \(Self.today) with \(build) on this \(Self.cores)-core machine."
        if after + 1 < lines.count, lines[after].isEmpty, lines[after + 1].hasPrefix("Measured ") {
            lines[after + 1] = stamp
        } else {
            lines.insert(contentsOf: ["", stamp], at: after)
        }
        lines.replaceSubrange(block.body, with: body)
    }

    static let today: String = {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate]
        return formatter.string(from: Date())
    }()

    static let cores = ProcessInfo.processInfo.activeProcessorCount
}
