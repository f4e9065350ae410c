import FanoutResults
import Testing

/// summary.md's section on the device fleet: Apple's categories in the console's order, then
/// ours, each with its share of the notifications received by APNs.
@Suite struct DeliverySummaryTests {
    @Test func theMarkdownTableListsAppleCategoriesThenOurs() {
        let markdown = HTMLReportTests.delivery().markdown
        #expect(
            Array(markdown.prefix(18)) == [
                "", "### Devices behind the sink", "", "| Apple's category | notifications | of received |",
                "|---|---:|---:|",
                "| Received by APNs | 1000 | 100.00% |",
                "| Delivered to Device | 700 | 70.00% |",
                "| Delivered to Device (From Storage) | 150 | 15.00% |",
                "| Stored – Device Offline | 300 | 30.00% |",
                "| Stored – Power Considerations | 0 | 0.00% |",
                "| Discarded – Token Unregistered | 0 | 0.00% |",
                "| Discarded – Token Unregistered (From Storage) | 0 | 0.00% |",
                "| Discarded – Expired | 150 | 15.00% |",
                "| Discarded – Disabled | 0 | 0.00% |",
                "| Discarded – Disabled (From Storage) | 0 | 0.00% |",
                "| ours: discarded, replaced by a newer one | 0 | 0.00% |",
                "| ours: forgotten (store full) | 0 | 0.00% |",
                "| ours: still stored at the end | 0 | 0.00% |",
            ]
        )
        #expect(markdown[18] == "")
    }

    /// The same counts behind an FCM sink: its outcomes in Android's words, FCM's lines.
    @Test func anFCMFleetsTableAndLinesAreInFCMsWords() {
        let delivery = HTMLReportTests.delivery()
        let markdown = delivery.markdown(for: .fcm)
        #expect(
            Array(markdown.prefix(15)) == [
                "", "### Devices behind the sink", "", "| outcome | messages | of received |", "|---|---:|---:|",
                "| Received by FCM | 1000 | 100.00% |",
                "| Delivered to the device | 700 | 70.00% |",
                "| Delivered to the device (kept first) | 150 | 15.00% |",
                "| Kept – device offline | 300 | 30.00% |",
                "| Kept – Doze | 0 | 0.00% |",
                "| Discarded – app uninstalled | 0 | 0.00% |",
                "| Discarded – app uninstalled (kept first) | 0 | 0.00% |",
                "| Discarded – ttl expired | 150 | 15.00% |",
                "| Discarded – notifications disabled | 0 | 0.00% |",
                "| Discarded – notifications disabled (kept first) | 0 | 0.00% |",
            ]
        )
        #expect(
            delivery.lines(for: .fcm).first
                == "devices: 1,000 received by FCM; delivered 850 (85.0%: 700 at once, 150 from storage)"
        )
        #expect(delivery.lines(for: .apns).first == delivery.lines.first)
    }
}
