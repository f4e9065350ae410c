/// How Fanout reads a number everywhere it takes one written (options, scenario files,
/// thresholds): decimal digits, a point and an exponent, as people write them.
///
/// ```
///   [+|-] digits [. digits] [e|E [+|-] digits]      5   0.05   .5   2.   1e6   1.5E-3
///   refused: 0x10  0x1p1  inf  nan  1_000  " 5"  .  e5  +  1e  ""
/// ```
///
/// Swift's `Double(String)` also reads hexadecimal (`0x10` is 16, `0x1p1` is 2), `inf` and
/// `nan`: `--rate 0x10` ran at 16 a second and `--duration 0x1p1s` for 2 s (issue 61, review).
/// A sign is read; whether a negative number is allowed is the caller's range to say.
public enum DecimalNotation {
    /// The number `text` writes, or `nil` when it is not written so. (A trailing point,
    /// `5.`, is allowed: `Double` reads it as 5, and so would anyone.)
    public static func parse(_ text: some StringProtocol) -> Double? {
        guard isDecimal(text.utf8) else { return nil }
        return Double(String(text))
    }

    /// The number `text` writes with its whole part perhaps grouped in thousands by `,` or `_`
    /// (`100,000`, `1_000_000.5`), or `nil`. A group is three digits after a first of one to
    /// three that is not 0. So a comma is read as a thousands separator only where it can be
    /// one: `2,5ms` was 25 ms in a threshold and passed a run of 8.6 ms, `0,009s` was 9 s and
    /// `10,00` was 1000 (issue 61, review); all three are refused now. `2,500ms` is still
    /// 2,500 ms, as an English reader means it.
    public static func parseGrouped(_ text: some StringProtocol) -> Double? {
        let separators: Set<Character> = [",", "_"]
        guard text.contains(where: separators.contains) else { return parse(text) }
        let signed = text.first == "+" || text.first == "-"
        let body = text.dropFirst(signed ? 1 : 0)
        let whole = body.prefix { $0 != "." && $0 != "e" && $0 != "E" }
        let groups = whole.split(separator: ",", omittingEmptySubsequences: false).flatMap {
            $0.split(separator: "_", omittingEmptySubsequences: false)
        }
        guard !body.dropFirst(whole.count).contains(where: separators.contains),
            let first = groups.first, (1...3).contains(first.count), first.first != "0",
            groups.dropFirst().allSatisfy({ $0.count == 3 })
        else { return nil }
        return parse(String(text.filter { !separators.contains($0) }))
    }

    /// Whether `bytes` is a decimal number as drawn above.
    static func isDecimal(_ bytes: some Collection<UInt8>) -> Bool {
        var index = bytes.startIndex
        func digits() -> Int {
            var count = 0
            while index != bytes.endIndex, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
                count += 1
                bytes.formIndex(after: &index)
            }
            return count
        }
        func skip(_ characters: UInt8...) {
            if index != bytes.endIndex, characters.contains(bytes[index]) { bytes.formIndex(after: &index) }
        }
        skip(UInt8(ascii: "+"), UInt8(ascii: "-"))
        var mantissa = digits()
        if index != bytes.endIndex, bytes[index] == UInt8(ascii: ".") {
            bytes.formIndex(after: &index)
            mantissa += digits()
        }
        guard mantissa > 0 else { return false }
        if index != bytes.endIndex, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            bytes.formIndex(after: &index)
            skip(UInt8(ascii: "+"), UInt8(ascii: "-"))
            guard digits() > 0 else { return false }
        }
        return index == bytes.endIndex
    }
}
