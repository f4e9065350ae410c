extension BinaryInteger {
    /// This many microseconds (a histogram's unit) in milliseconds (a document's).
    public var microsecondsInMilliseconds: Double { Double(self) / 1000 }
}
