/// How Fanout writes a bandwidth (the sink's wire, a plan's network interface), in bits or
/// bytes a second with SI prefixes, as network interfaces are rated:
///
/// ```
/// 1Gbit       10⁹ bits a second (125,000,000 bytes)
/// 100Mbit/s   the same way; "/s" may be written
/// 12.5MB      12,500,000 bytes a second
/// 64kB/s      64,000 bytes a second
/// ```
public enum BandwidthNotation {
    /// Units and the bytes a second one of them is.
    static let units: [(suffix: String, bytes: Double)] = [
        ("Gbit", 1e9 / 8), ("Mbit", 1e6 / 8), ("kbit", 1e3 / 8), ("bit", 1.0 / 8),
        ("GB", 1e9), ("MB", 1e6), ("kB", 1e3), ("B", 1),
    ]

    /// How to write one, for error messages.
    public static let hint =
        "write a number and a unit, like 1Gbit, 100Mbit or 12.5MB (bytes) a second, from 8bit to 80Tbit"

    /// What a bandwidth may be, bytes a second: a byte a second to 10 TB a second (80 Tbit/s).
    public static let range = 1.0...1e13

    /// Bytes a second, or `nil` when `text` is not a bandwidth (no unit, not a number, outside
    /// `range`).
    public static func parse(_ text: some StringProtocol) -> Double? {
        var text = Substring(text.trimmingBlanks)
        if text.hasSuffix("/s") { text = text.dropLast(2) }
        for unit in units where text.hasSuffix(unit.suffix) {
            guard let number = DecimalNotation.parse(text.dropLast(unit.suffix.count)),
                range.contains(number * unit.bytes)
            else {
                return nil
            }
            return number * unit.bytes
        }
        return nil
    }

    /// `1 Gbit/s`, `80 Mbit/s`, `512 kbit/s`: the bits a second, three significant digits.
    public static func format(bytesPerSecond: Double) -> String {
        let bits = bytesPerSecond * 8
        for (prefix, scale) in [("G", 1e9), ("M", 1e6), ("k", 1e3)] where bits >= scale {
            return "\(significant(bits / scale)) \(prefix)bit/s"
        }
        return "\(significant(bits)) bit/s"
    }

    /// `1`, `12.5`, `333`: up to three significant digits, no trailing zeros.
    static func significant(_ value: Double) -> String {
        let decimals = value >= 100 ? 0 : value >= 10 ? 1 : 2
        var text: String
        if decimals > 0 {
            let scaled = (value * Double([1, 10, 100][decimals])).rounded() / Double([1, 10, 100][decimals])
            text = "\(scaled)"
            while text.contains(".") && (text.hasSuffix("0") || text.hasSuffix(".")) { text.removeLast() }
        } else {
            text = String(Int(value.rounded()))
        }
        return text
    }

    /// `64 KiB`, `1.5 MiB`: a count of bytes for people.
    public static func bytes(_ count: Double) -> String {
        for (unit, scale) in [("GiB", 1024.0 * 1024 * 1024), ("MiB", 1024.0 * 1024), ("KiB", 1024.0)]
        where count >= scale {
            return "\(significant(count / scale)) \(unit)"
        }
        return "\(Int(count.rounded())) bytes"
    }
}
