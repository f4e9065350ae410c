extension Duration {
    /// The duration in whole nanoseconds (negative durations count as zero, those beyond
    /// UInt64 as its largest).
    public var wholeNanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0 else { return 0 }
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return .max }
        let (total, carry) = whole.addingReportingOverflow(UInt64(attoseconds / 1_000_000_000))
        return carry ? .max : total
    }

    /// The duration in seconds, to the nanosecond (`wholeNanoseconds`: negative durations count
    /// as zero): what every document's `…_seconds` field and every "… s" in words is made from.
    public var seconds: Double { Double(wholeNanoseconds) / 1e9 }

    /// The duration in milliseconds, to the nanosecond (`wholeNanoseconds`: negative durations
    /// count as zero).
    public var milliseconds: Double { Double(wholeNanoseconds) / 1e6 }
}
