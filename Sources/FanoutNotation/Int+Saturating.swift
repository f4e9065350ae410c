extension Int {
    /// `value` rounded toward zero, held to `Int.min…Int.max` (NaN is 0): for a figure worked
    /// out in `Double` from user input, where `Int(_:)` would trap on a value past the range.
    public init(saturating value: Double) {
        if value.isNaN {
            self = 0
        } else if value >= 0x1p63 {
            self = .max
        } else if value < -0x1p63 {
            self = .min
        } else {
            self = Int(value)
        }
    }
}
