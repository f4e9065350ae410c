import Testing

@testable import FanoutReport

/// The provider's connections table: times from the first request, a connection opened a
/// fraction of a millisecond before it at 0.000, one opened well before it negative.
@Suite struct ProviderTableTests {
    @Test(arguments: [(-0.0003, "0.000"), (0.0004, "0.000"), (0.0446, "0.045"), (-1.25, "-1.250"), (0, "0.000")])
    func secondsReadAsAPersonWouldWriteThem(value: Double, text: String) {
        #expect(HTMLReport.connectionSeconds(value) == text)
    }
}
