/// The lines of `text` that begin with `key`, a line's fixed leading word or label (`error: `,
/// `latency: `): for a test that finds a line by its key and then compares the whole line, not a
/// fragment of its wording.
public func lines(of text: some StringProtocol, keyed key: String) -> [String] {
    var found: [String] = []
    // Any line end: "\r\n" (curl's headers, a terminal's lines) is one Character, not "\n".
    for line in String(text).split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
    where line.hasPrefix(key) {
        found.append(String(line))
    }
    return found
}

/// The first line of `text` that begins with `key` (`lines(of:keyed:)`); `nil` when none does.
public func line(of text: some StringProtocol, keyed key: String) -> String? {
    lines(of: text, keyed: key).first
}

/// The first `error: ` line of `text` (a command's standard error): the one form every
/// subcommand's errors take.
public func errorLine(of text: some StringProtocol) -> String? {
    line(of: text, keyed: "error: ")
}

/// The part of `line` between `head` and `tail`, when `line` is exactly `head`, something, then
/// `tail`; `nil` otherwise. For a whole line whose middle varies (a number, an OS's wording),
/// which the test then checks on its own: with it, `line == head + middle + tail` holds.
public func middle(of line: some StringProtocol, between head: String, and tail: String) -> String? {
    let line = String(line)
    guard line.count >= head.count + tail.count, line.hasPrefix(head), line.hasSuffix(tail) else { return nil }
    return String(line.dropFirst(head.count).dropLast(tail.count))
}
