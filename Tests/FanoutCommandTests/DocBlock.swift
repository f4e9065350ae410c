import Foundation

/// One fenced block of a Markdown page and the `<!-- docs-test … -->` marker above it, which says
/// how the docs test treats it:
///
///     <!-- docs-test: run                      the block's commands run; `$ ` lines are commands,
///     small: --count 200000 => --count 2000     the lines under them what they print, in kind
///     replace: | kubectl apply -f - => > m.yaml   what needs a cluster or Apple, stood in for
///     setup: fanout sink --listen 127.0.0.1:0 &
///     skip: fanout probe — it needs Apple's sandbox and a key
///     exit: fanout gate results/a => 0 1        the statuses it may end with
///     loose: verified — why                     a shown line that varies with machine and build
///     shows: standard error                     the shown output is the command's standard error
///     concurrent: fanout send --shard 1/2    a command the page runs with `&` that is no server
///     background: fanout sink --listen       a server the page runs in the foreground (stopped
///                                              with ^C's SIGINT before the next command)
///     ready: nginx => 127.0.0.1:8080           a server that prints no `listening on` line: the
///                                              test waits until that address takes a connection
///     # a comment: why a rule is there
///     -->
///     <!-- docs-test: output of fanout run --count 20000 -->   the block is what that prints
///     <!-- docs-test: not run: a diagram -->                   the block is not a command
///
/// `small:` makes a run small enough for the test (a regeneration of the sample outputs drops
/// it); `replace:` always applies, and stands in only for what needs Apple, a cluster or your
/// own provider. A block runs in a network namespace of its own (`DocRun`), so the ports it
/// names are its own: no rule rewrites them. A command
/// ending in `&` runs in the background; if it prints `listening on HOST:PORT` the test waits
/// for that line (a bounded poll) and `$PORT` is that port from then on. Every background
/// process is stopped when the block ends. Commands exit 0 unless an `exit:` rule says otherwise.
struct DocBlock {
    enum Kind: Equatable {
        case run
        case outputOf(String)
        case notRun(reason: String)
    }

    struct Rule {
        var from: String
        var to: String
        var small: Bool
    }

    /// A command and what the page shows it printing (empty: the page shows nothing).
    struct Command {
        var text: String
        var expected: [String]
        /// The statuses the page allows (one, or several where it says the outcome depends).
        var expectedStatus: Set<Int32>
    }

    var file: String
    /// The block's opening fence, 1-based.
    var line: Int
    /// The line range of the block's body in the file, 0-based, end exclusive.
    var body: Range<Int>
    var kind: Kind?
    var rules: [Rule] = []
    var setup: [String] = []
    var skips: [(prefix: String, reason: String)] = []
    var exits: [(prefix: String, statuses: Set<Int32>)] = []
    /// Shown lines (by a text they contain) that vary with the machine and build: any line
    /// matches them; a regeneration writes today's.
    var loose: [String] = []
    /// The shown output is what the command writes to standard error.
    var showsStandardError = false
    /// Commands (by prefix) the page runs in the foreground, a server, that the test runs in
    /// the background until the block ends.
    var backgrounds: [String] = []
    /// Commands (by prefix) the page starts with `&` that are not servers (a shard's send on
    /// "another machine"): they run alongside what follows, and the test waits for no
    /// "listening on" line; the page's own `wait` ends them.
    var concurrent: [String] = []
    /// Servers (by prefix) that say nothing when they listen, and the address each listens on.
    var ready: [(prefix: String, host: String, port: Int)] = []
    var commands: [Command] = []

    var place: String { "\(file):\(line)" }

    /// Every fenced block of `text`, with its marker read.
    static func blocks(in text: String, file: String) -> [DocBlock] {
        let lines = text.components(separatedBy: "\n")
        var blocks: [DocBlock] = []
        var index = 0
        while index < lines.count {
            guard lines[index].hasPrefix("```") else {
                index += 1
                continue
            }
            let open = index
            let language = lines[open].dropFirst(3).trimmingCharacters(in: .whitespaces)
            var close = open + 1
            while close < lines.count, !lines[close].hasPrefix("```") { close += 1 }
            var block = DocBlock(file: file, line: open + 1, body: (open + 1)..<close)
            block.readMarker(lines[..<open])
            block.readCommands(Array(lines[(open + 1)..<min(close, lines.count)]), language: language)
            blocks.append(block)
            index = close + 1
        }
        return blocks
    }

    /// The `<!-- docs-test … -->` comment ending on the last non-blank line before the fence.
    private mutating func readMarker(_ before: ArraySlice<String>) {
        var end = before.endIndex - 1
        while end >= before.startIndex, before[end].trimmingCharacters(in: .whitespaces).isEmpty { end -= 1 }
        guard end >= before.startIndex, before[end].hasSuffix("-->") else { return }
        var start = end
        while start > before.startIndex, !before[start].hasPrefix("<!--") { start -= 1 }
        guard before[start].hasPrefix("<!-- docs-test:") else { return }
        var marker = before[start...end].joined(separator: "\n")
        marker.removeFirst("<!-- docs-test:".count)
        marker.removeLast("-->".count)
        var markerLines = marker.components(separatedBy: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        let head = markerLines.removeFirst()
        if head == "run" {
            kind = .run
        } else if head.hasPrefix("output of ") {
            kind = .outputOf(String(head.dropFirst("output of ".count)))
        } else if head.hasPrefix("not run: ") {
            kind = .notRun(reason: String(head.dropFirst("not run: ".count)))
        }
        for line in markerLines where !line.isEmpty && !line.hasPrefix("#") {
            let (name, value) = Self.split(line, at: ":")
            switch name {
            case "small", "replace":
                let (from, to) = Self.split(value, at: "=>")
                rules.append(Rule(from: from, to: to, small: name == "small"))
            case "setup": setup.append(value)
            case "background": backgrounds.append(value)
            case "concurrent": concurrent.append(value)
            case "ready":
                let (prefix, address) = Self.split(value, at: "=>")
                let (host, port) = Self.split(address, at: ":")
                guard let port = Int(port) else {
                    kind = nil
                    continue
                }
                ready.append((prefix, host, port))
            case "skip":
                let (prefix, reason) = Self.split(value, at: "—")
                skips.append((prefix, reason))
            case "exit":
                let (prefix, statuses) = Self.split(value, at: "=>")
                exits.append((prefix, Set(statuses.split(separator: " ").map { Int32($0) ?? -1 })))
            case "loose": loose.append(Self.split(value, at: "—").0)
            case "shows": showsStandardError = value == "standard error"
            default: kind = nil  // an unknown rule: the block counts as unmarked
            }
        }
    }

    private static func split(_ text: String, at separator: String) -> (String, String) {
        guard let range = text.range(of: separator) else { return (text, "") }
        return (
            text[..<range.lowerBound].trimmingCharacters(in: .whitespaces),
            text[range.upperBound...].trimmingCharacters(in: .whitespaces)
        )
    }

    /// Commands of a `sh` block (continuations joined, comments dropped), or of a block whose
    /// lines start with `$ ` (the lines under each: what it prints), or the marker's command.
    private mutating func readCommands(_ body: [String], language: String) {
        switch kind {
        case .outputOf(let command):
            commands = [Command(text: command, expected: body, expectedStatus: [0])]
        case .run:
            let prompted = body.first?.hasPrefix("$ ") ?? false
            var pending = ""
            for line in body {
                if prompted, !line.hasPrefix("$ "), pending.isEmpty, !commands.isEmpty {
                    commands[commands.count - 1].expected.append(line)
                    continue
                }
                var text = prompted && line.hasPrefix("$ ") ? String(line.dropFirst(2)) : line
                text = Self.withoutComment(text)
                if !pending.isEmpty { text = String(text.drop { $0 == " " }) }
                if text.hasSuffix("\\") {
                    pending += text.dropLast().replacing(/\s+$/, with: "") + " "
                    continue
                }
                let command = (pending + text).trimmingCharacters(in: .whitespaces)
                pending = ""
                if !command.isEmpty { commands.append(Command(text: command, expected: [], expectedStatus: [0])) }
            }
        case .notRun, nil:
            break
        }
        for index in commands.indices {
            if let exit = exits.first(where: { commands[index].text.hasPrefix($0.prefix) }) {
                commands[index].expectedStatus = exit.statuses
            }
        }
    }

    /// A line without its shell comment: `#` at the start or after two spaces.
    static func withoutComment(_ line: String) -> String {
        if line.trimmingCharacters(in: .whitespaces).hasPrefix("#") { return "" }
        guard let range = line.range(of: #"\s{2,}#.*$"#, options: .regularExpression) else {
            return line.replacingOccurrences(of: #"\s+$"#, with: "", options: .regularExpression)
        }
        return String(line[..<range.lowerBound])
    }

    /// `command` with the marker's substitutions (without the `small:` ones when `full`).
    func substituted(_ command: String, full: Bool = false) -> String {
        rules.reduce(command) { text, rule in
            full && rule.small ? text : text.replacingOccurrences(of: rule.from, with: rule.to)
        }
    }

    func inBackground(_ command: String) -> Bool {
        command.hasSuffix("&") || backgrounds.contains { command.hasPrefix($0) }
    }

    /// The address a server that prints no `listening on` line listens on, if the marker names it.
    func readyAddress(_ command: String) -> (host: String, port: Int)? {
        ready.first { command.hasPrefix($0.prefix) }.map { ($0.host, $0.port) }
    }

    func runsAlongside(_ command: String) -> Bool {
        command.hasSuffix("&") && concurrent.contains { command.hasPrefix($0) }
    }

    func skipReason(_ command: String) -> String? {
        skips.first { command.hasPrefix($0.prefix) }?.reason
    }
}

/// Whether what a command printed is, in kind, what a page shows: line by line, with every
/// number standing for any number, runs of spaces for any run, `…` alone on a line for any lines
/// and `…` within a line for any text, and a trailing `  # comment` of the page's ignored.
enum InKind {
    /// The printed lines matched to the page's, or nil when they do not match.
    static func match(expected: [String], actual: [String], loose: [String] = []) -> [String]? {
        let patterns = expected.map { line in
            loose.contains { !$0.isEmpty && line.contains($0) }
                ? .line(try! Regex(".*"), { line, _ in line }) : pattern(line)
        }
        let lines = actual.filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
        return align(patterns[...], lines[...])
    }

    /// What the page shows, with today's lines in place of each matched one (elisions kept).
    private static func align(_ patterns: ArraySlice<Pattern>, _ lines: ArraySlice<String>) -> [String]? {
        guard let first = patterns.first else { return lines.isEmpty ? [] : nil }
        switch first {
        case .blank:
            return align(patterns.dropFirst(), lines)
        case .anyLines(let text):
            for skip in 0...lines.count {
                if let rest = align(patterns.dropFirst(), lines.dropFirst(skip)) { return [text] + rest }
            }
            return nil
        case .line(let regex, let shown):
            guard let line = lines.first, let found = try? regex.wholeMatch(in: line) else { return nil }
            guard let rest = align(patterns.dropFirst(), lines.dropFirst()) else { return nil }
            return [shown(line, found)] + rest
        }
    }

    enum Pattern {
        case blank
        case anyLines(String)
        case line(Regex<AnyRegexOutput>, (String, Regex<AnyRegexOutput>.Match) -> String)
    }

    static func pattern(_ expected: String) -> Pattern {
        let text = DocBlock.withoutComment(expected).trimmingCharacters(in: .whitespaces)
        if text.isEmpty { return .blank }
        if text == "…" { return .anyLines(expected) }
        // Each literal stretch between `…`s is a group, so a regenerated line keeps the elisions.
        let stretches = text.components(separatedBy: "…")
        let source = stretches.map { "(" + kind(of: $0) + ")" }.joined(separator: ".*?")
        let regex = try! Regex("\\s*" + source + "\\s*")
        return .line(regex) { line, match in
            guard stretches.count > 1 else { return line }
            return (1...stretches.count).map { group in
                match[group].substring.map(String.init) ?? ""
            }.joined(separator: "…")
        }
    }

    /// A regular expression for a literal stretch in which numbers and spacing may differ.
    private static func kind(of literal: String) -> String {
        let number = #"[-+−]?\d[\d,]*(?:\.\d+)?"#
        var source = ""
        var rest = Substring(literal)
        while !rest.isEmpty {
            if let found = rest.prefixMatch(of: /(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{8,}\b/) {
                source += "[0-9a-f]+"
                rest = rest[found.range.upperBound...]
            } else if let found = rest.prefixMatch(of: try! Regex(number)) {
                source += number
                rest = rest[found.range.upperBound...]
            } else if let space = rest.prefixMatch(of: /\s+/) {
                source += #"\s+"#
                rest = rest[space.range.upperBound...]
            } else {
                source += NSRegularExpression.escapedPattern(for: String(rest.first!))
                rest = rest.dropFirst()
            }
        }
        return source
    }
}
