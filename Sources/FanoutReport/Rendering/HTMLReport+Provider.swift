import FanoutResults
import Foundation

/// A sink's folder (`fanout sink --output`): the page of the provider under test.
extension HTMLReport {
    /// A sink's folder: the provider under test — its fan-out, its card, its connections.
    func providerPage(_ provider: SummaryDocument.Provider) -> String {
        let delivery = provider.delivery
        // Nothing accepted: no fan-out time nor delivery time to show (not zeros).
        let measured = delivery.count > 0
        let headline = [
            ("accepted", grouped(summary.accepted)),
            ("fan-out time", measured ? String(format: "%.3f s", delivery.fanoutSeconds) : "—"),
            ("accepted/s", measured ? grouped(Int(delivery.acceptedPerSecond.rounded())) + "/s" : "—"),
            ("delivery p50", measured ? millisecondsWithUnit(delivery.p50Ms) : "—"),
            ("delivery p99", measured ? millisecondsWithUnit(delivery.p99Ms) : "—"),
            ("streams", provider.streams.text),
            ("card", summary.cardWord),
            ("valid", summary.valid ? "yes" : "NO"),
        ]
        var body =
            "<h1>Fanout sink: the provider under test</h1>\n" + RunHeadline(summary: summary).html + cards(headline)
            + invalidLines()
        let mark = provider.start.mark == "trigger" ? "the trigger's launch" : "the first request"
        body +=
            "<p>Counted from \(ChartFrame.escape(mark)) (\(ChartFrame.escape(provider.start.at ?? "nothing arrived"))); ended by \(ChartFrame.escape(provider.endedBy)). Delivery time: first \(millisecondsWithUnit(delivery.firstMs)), p90 \(millisecondsWithUnit(delivery.p90Ms)), last \(millisecondsWithUnit(delivery.lastMs)).</p>\n"
        body += "<h2>Conformance card</h2>\n" + cardTable(provider.card)
        if let devices = summary.delivery { body += deliverySection(devices, service: summary.service) }
        body += "<h2>Delivery time by percentile</h2>\n" + spectrumChart()
        body += "<h2>Accepted per second</h2>\n" + rateChart(summary.intervals, offered: nil, noun: "accepted")
        body +=
            "<h2>Capacity</h2>\n<p>\(ChartFrame.escape(provider.capacity.text.prefix(1).uppercased() + provider.capacity.text.dropFirst())).</p>\n"
        body += "<h2>Connections</h2>\n" + connectionsTable(provider)
        let own = provider.sinkOwn
        body += "<h2>The sink's own delays (not the provider's)</h2>\n"
        body += "<table><tr><th>delay</th><th>p50 ms</th><th>p99 ms</th><th>max ms</th></tr>"
        for (name, figures) in [
            ("lateness", own.lateness), ("held by the scenario", own.injected), ("event-loop lag", own.loopLag),
        ] {
            body += "<tr><td>\(name)</td>"
            body +=
                [figures.p50, figures.p99, figures.max].map { "<td>\(String(format: "%.2f", $0))</td>" }.joined()
                + "</tr>"
        }
        body += "</table>\n"
        body += "<h2>Outcomes</h2>\n" + outcomesChart()
        body += "<h2>The sink's configuration</h2>\n" + table(sinkConfigurationRows(provider))
        body +=
            "<p class=\"note\">Its connection limits and timeouts (connections a peer, idle and request timeouts) are not recorded in summary.json.</p>\n"
        body += "<h2>Environment</h2>\n" + table(summary.environment.rows.map { ($0.key, $0.value) })
        return ChartFrame.page(title: "Fanout sink: \(grouped(summary.accepted)) notifications", body: body)
    }

    /// What applied to the sink, in its own terms: where it listened, its streams, what its
    /// scenario did to answers (latency spread, errors); none of a run's keys (attempts, topic),
    /// which mean nothing for a sink.
    func sinkConfigurationRows(_ provider: SummaryDocument.Provider) -> [(key: String, value: String?)] {
        let configuration = summary.configuration
        return [
            ("listened on", summary.endpoint),
            ("TLS", summary.endpoint.hasPrefix("https://") ? "yes" : "no"),
            ("token authentication", configuration.tokenAuth ? "checked" : "not checked"),
            (
                "streams a connection",
                "\(provider.streams.initial) until its first request is accepted, then \(provider.streams.limit)"
            ),
            ("scenario (latency, errors)", configuration.schedule ?? "none: every request accepted at once"),
            ("scenario file", configuration.scenario?.description ?? "none"),
            ("expected", configuration.tokens),
            ("ended by", provider.endedBy),
        ] + (provider.trigger.map { [("trigger", $0.command)] } ?? [])
    }

    func cardTable(_ card: SummaryDocument.Provider.Card) -> String {
        var html = "<table><tr><th>check</th><th>rule</th><th>count</th><th>verdict</th><th>examples</th></tr>"
        for check in card.checks {
            let examples = check.examples.map {
                // The device fleet's examples name their notification, not a connection.
                let whose =
                    $0.apnsID.map { "apns-id \($0)" }
                    ?? "\($0.token.isEmpty ? "" : $0.token.prefix(16) + "… ")connection \($0.connection)"
                return "\(whose) at \(String(format: "%.3f", $0.atSeconds)) s: \($0.detail)"
            }
            html += "<tr><td>\(ChartFrame.escape(check.rule.rawValue))</td><td>\(ChartFrame.escape(check.title))</td>"
            html +=
                "<td>\(grouped(check.count))</td><td>\(check.passed ? "pass" : "<span class=\"invalid\">FAIL</span>")</td>"
            html += "<td>\(examples.map(ChartFrame.escape).joined(separator: "<br>"))</td></tr>"
        }
        html += "</table>\n"
        if card.forgotten > 0 {
            html +=
                "<p>\(grouped(card.forgotten)) rejected tokens were not remembered (the table was full): their retries went unchecked.</p>\n"
        }
        return html
    }

    /// The first 200 connections.
    func connectionsTable(_ provider: SummaryDocument.Provider) -> String {
        var html =
            "<table><tr><th>id</th><th>peer</th><th>opened s</th><th>closed s</th><th>by</th><th>requests</th><th>share</th><th>mean streams</th><th>peak</th><th>refused</th></tr>"
        for connection in provider.connections.prefix(200) {
            let cells = [
                "\(connection.id)", connection.peer, Self.connectionSeconds(connection.openedSeconds),
                connection.closedSeconds.map(Self.connectionSeconds) ?? "open", connection.closedBy ?? "",
                grouped(connection.requests), String(format: "%.1f%%", connection.share * 100),
                String(format: "%.1f", connection.meanStreams), "\(connection.peakStreams)",
                "\(connection.refusedStreams)",
            ]
            html += "<tr>" + cells.map { "<td>\(ChartFrame.escape($0))</td>" }.joined() + "</tr>"
        }
        html += "</table>\n"
        let more = provider.connections.count - min(200, provider.connections.count) + provider.connectionsNotListed
        if more > 0 { html += "<p>and \(grouped(more)) more connections.</p>\n" }
        return html
    }

    /// Seconds from the first request to three decimals; a connection opened a fraction of a
    /// millisecond before it reads 0.000, not -0.000 (the screenshot of session 57 showed four).
    static func connectionSeconds(_ value: Double) -> String {
        String(format: "%.3f", (value * 1000).rounded() / 1000 + 0.0)
    }
}
