extension StringProtocol {
    /// The text without leading and trailing spaces, tabs, carriage returns and newlines (no
    /// Foundation: settings are read on paths that avoid it).
    public var trimmingBlanks: Substring {
        var text = Substring(self)
        while let first = text.first, first == " " || first == "\t" || first == "\r" || first == "\n" {
            text.removeFirst()
        }
        while let last = text.last, last == " " || last == "\t" || last == "\r" || last == "\n" { text.removeLast() }
        return text
    }
}
