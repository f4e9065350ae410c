// The `name = value` settings reader, as `fanout send --scenario` uses it, fed arbitrary text.
//
// What parses must hold only what the reader promises: known names, a value for each, no name
// twice; what does not parse must say where (`fuzz:LINE: what`).
import FanoutClient
import FanoutFiles
import FuzzSupport

runFuzzer(
    seeds: textSeeds([
        "# headers for a campaign\ntopic = com.example.app\npush-type = alert\npriority = 5\nexpiration = 0\ncollapse-id = c1\napns-id = random\n",
        "  topic=com.example.app.voip  \n\npush-type = voip\r\npriority = 10\n",
    ]),
    test
)

func test(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let text = String(decoding: FuzzInput(start, count).bytes, as: UTF8.self)
    do {
        let settings = try SettingsFile.settings(in: text, source: "fuzz", known: HeaderSettings.names)
        precondition(Set(settings.map(\.name)).count == settings.count, "a name twice")
        precondition(
            settings.allSatisfy { HeaderSettings.names.contains($0.name) && !$0.value.isEmpty },
            "an unknown name or an empty value"
        )
    } catch {
        precondition(error.description.hasPrefix("fuzz:"), "an error that does not say where: \(error.description)")
    }
    do {
        let headers = try HeaderSettings(text: text, source: "fuzz")
        precondition(headers.priority.map { [10, 5, 1].contains($0) } ?? true, "a priority APNs does not take")
        precondition((headers.collapseID?.utf8.count ?? 0) <= 64, "a collapse id over 64 bytes")
    } catch {
        precondition(error.description.hasPrefix("fuzz:"), "an error that does not say where: \(error.description)")
    }
    return 0
}
