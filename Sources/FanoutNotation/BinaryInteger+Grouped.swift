extension BinaryInteger {
    /// The number as every line a person reads writes a count: digits in groups of three with
    /// commas (`240,000`), whatever the locale.
    public var grouped: String {
        let digits = String(self.magnitude)
        var text = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { text.append(",") }
            text.append(digit)
        }
        return self < 0 ? "-" + text : text
    }
}
