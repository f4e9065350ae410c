/// The page `--serve` answers at `/` while a run goes: self-contained (its style and script
/// inline, nothing fetched from elsewhere), it shows the `LiveDocument` it was served with at
/// once and fetches `/live.json` from the same server every second; when the document says the
/// run is done it reloads, and `/` then answers the run's final report.html (or, from a sink
/// without `--output`, this page once more, done, which polls no more).
///
/// ```
///   GET /           ──► this page, with the document of the moment inline
///   GET /live.json  ──► the document of the moment (every second, from the page)
///   done: true      ──► reload: GET / ──► report.html, the folder's bytes
/// ```
public enum LivePage {
    /// The page with `document` inline (`</` escaped so that no string in it ends the script).
    public static func html(_ document: LiveDocument) -> String {
        let data = document.json.replacingOccurrences(of: "</", with: "<\\/")
        return head + "<script id=\"live-data\" type=\"application/json\">" + data + "</script>\n" + script
            + "</body>\n</html>\n"
    }

    private static let head = """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <title>Fanout: live</title>
        <style>
        body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; }
        h1 { font-size: 20px; margin: 0 0 8px; }
        #now { font-size: 18px; font-weight: 600; }
        svg { background: #fafafa; border: 1px solid #ddd; display: block; margin: 8px 0 16px; }
        table { border-collapse: collapse; margin-bottom: 16px; }
        td, th { border: 1px solid #ddd; padding: 2px 8px; text-align: right; }
        th { background: #f0f0f0; }
        .legend span { margin-right: 16px; }
        </style>
        </head>
        <body>
        <h1>Fanout <span id="command"></span>: live report</h1>
        <p id="now">waiting for the run's first second</p>
        <p id="totals"></p>
        <h2>Throughput per second</h2>
        <svg id="throughput" width="900" height="180" viewBox="0 0 900 180"></svg>
        <h2>Latency per second (ms)</h2>
        <p class="legend"><span style="color:\(HTMLReport.Colour.p50)">p50</span>\
        <span style="color:\(HTMLReport.Colour.p99)">p99</span></p>
        <svg id="latency" width="900" height="180" viewBox="0 0 900 180"></svg>
        <h2>The latest seconds</h2>
        <table><thead><tr><th>second</th><th>completed</th><th>p50 ms</th><th>p99 ms</th>\
        <th>rejected</th><th>failed</th><th>harness: loop lag ms</th><th>read delay p99 ms</th>\
        <th>sender cores</th><th>connections</th></tr></thead><tbody id="latest"></tbody></table>
        <h2>Outcomes so far</h2>
        <table><tbody id="outcomes"></tbody></table>

        """

    private static let script = """
        <script>
        "use strict";
        const colours = { throughput: "\(HTMLReport.Colour.throughput)", p50: "\(HTMLReport.Colour.p50)",
          p99: "\(HTMLReport.Colour.p99)" };
        function grouped(n) { return Math.round(n).toLocaleString("en-US"); }
        function counts(map) {
          const names = Object.keys(map).sort();
          return names.length === 0 ? "0" : names.map(name => name + " " + grouped(map[name])).join(", ");
        }
        function fixed(n) { return n === undefined || n === null ? "" : n.toFixed(2); }
        function total(map) { return Object.values(map).reduce((a, b) => a + b, 0); }
        function cell(row, text) { const td = document.createElement("td"); td.textContent = text; row.appendChild(td); }
        function line(svg, seconds, value, colour, top) {
          seconds = seconds.filter(s => value(s) !== undefined && value(s) !== null);
          if (seconds.length === 0) { return; }
          const first = seconds[0].second, span = Math.max(1, seconds[seconds.length - 1].second - first);
          const points = seconds.map(s => (40 + 850 * (s.second - first) / span).toFixed(1) + ","
            + (165 - 150 * value(s) / top).toFixed(1));
          const polyline = document.createElementNS("http://www.w3.org/2000/svg", "polyline");
          polyline.setAttribute("points", points.join(" "));
          polyline.setAttribute("fill", "none");
          polyline.setAttribute("stroke", colour);
          polyline.setAttribute("stroke-width", "2.5");
          svg.appendChild(polyline);
        }
        function chart(id, seconds, series, unit) {
          const svg = document.getElementById(id);
          while (svg.firstChild) { svg.removeChild(svg.firstChild); }
          const top = Math.max(1e-9, ...seconds.flatMap(s => series.map(([value]) => value(s) || 0)));
          const label = document.createElementNS("http://www.w3.org/2000/svg", "text");
          label.setAttribute("x", "4"); label.setAttribute("y", "14");
          label.textContent = "max " + (top < 10 ? top.toFixed(2) : grouped(top)) + " " + unit;
          svg.appendChild(label);
          for (const [value, colour] of series) { line(svg, seconds, value, colour, top); }
        }
        function show(d) {
          document.getElementById("command").textContent = d.command;
          document.getElementById("now").textContent = "second " + d.second + " of the run: "
            + grouped(d.rate_per_second) + "/s, " + grouped(d.finished) + " finished" + (d.done ? " (done)" : "");
          document.getElementById("totals").textContent = "accepted " + grouped(d.accepted)
            + "; rejected " + counts(d.rejected) + "; failed " + counts(d.failed);
          chart("throughput", d.seconds, [[s => s.completed, colours.throughput]], "/s");
          chart("latency", d.seconds, [[s => s.p50_ms, colours.p50], [s => s.p99_ms, colours.p99]], "ms");
          const latest = document.getElementById("latest");
          latest.textContent = "";
          for (const s of d.seconds.slice(-10).reverse()) {
            const row = document.createElement("tr");
            for (const text of [s.second, grouped(s.completed), fixed(s.p50_ms), fixed(s.p99_ms),
              grouped(total(s.rejected)), grouped(total(s.failed)), fixed(s.loop_lag_max_ms),
              fixed(s.read_delay_p99_ms), fixed(s.sender_cores), s.connections === undefined ? "" : s.connections]) {
              cell(row, String(text));
            }
            latest.appendChild(row);
          }
          const outcomes = document.getElementById("outcomes");
          outcomes.textContent = "";
          const rows = [["accepted", d.accepted]].concat(
            Object.keys(d.rejected).sort().map(name => ["rejected " + name, d.rejected[name]]),
            Object.keys(d.failed).sort().map(name => ["failed " + name, d.failed[name]]));
          for (const [name, count] of rows) {
            const row = document.createElement("tr");
            cell(row, name); cell(row, grouped(count));
            outcomes.appendChild(row);
          }
        }
        let gone = false;
        const inline = JSON.parse(document.getElementById("live-data").textContent);
        show(inline);
        // A page served once the run is done (a sink without a folder) polls no more.
        const polling = inline.done ? null : setInterval(() => {
          fetch("/live.json", { cache: "no-store" }).then(r => r.json()).then(d => {
            if (d.done) { clearInterval(polling); location.reload(); return; }
            show(d);
          }).catch(() => {
            if (!gone) { document.getElementById("now").textContent += " (the server has gone: the run ended)"; }
            gone = true;
          });
        }, 1000);
        </script>

        """
}
