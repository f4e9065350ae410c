import Testing

@testable import FanoutSink

/// Live Activity payloads: the keys each event needs, found in the payload's bytes.
@Suite struct LiveActivityPayloadTests {
    static let cases: [(String, LiveActivityPayload.Problem?)] = [
        (#"{"aps":{"timestamp":1732000000,"event":"update","content-state":{"score":"2-1"}}}"#, nil),
        (#"{"aps":{"event":"end","timestamp":1732000000,"dismissal-date":1732003600}}"#, nil),
        (
            #"{"aps":{"event":"start","timestamp":1,"content-state":{},"attributes-type":"Game","attributes":{"home":"A"}}}"#,
            nil
        ),
        (
            #" { "x" : [1, {"aps": 2}], "aps" : { "event" : "update" , "timestamp" : 5 , "content-state" : { } } } "#,
            nil
        ),
        (#"{"aps":{"alert":"hello"}}"#, .noEvent),
        (#"{"x":{"aps":{"event":"update"}}}"#, .noAPS),
        (#"{"aps":"update"}"#, .noAPS),
        (#"{"aps":{"event":"pause","timestamp":1,"content-state":{}}}"#, .unknownEvent),
        (#"{"aps":{"event":"update","content-state":{}}}"#, .noTimestamp),
        (#"{"aps":{"event":"update","timestamp":"soon","content-state":{}}}"#, .noTimestamp),
        (#"{"aps":{"event":"update","timestamp":1}}"#, .noContentState),
        (#"{"aps":{"event":"update","timestamp":1,"content-state":"2-1"}}"#, .noContentState),
        (#"{"aps":{"event":"start","timestamp":1,"content-state":{}}}"#, .noAttributes),
        (#"{"aps":{"event":"up\"date","timestamp":1,"content-state":{"a":"}"}}}"#, .unknownEvent),
    ]

    @Test(arguments: cases)
    func eachEventNeedsItsKeys(_ payload: String, _ problem: LiveActivityPayload.Problem?) {
        #expect(Array(payload.utf8).withUnsafeBytes { LiveActivityPayload.problem(in: $0) } == problem)
    }

    @Test func aPayloadsTimestampIsReadInPlace() {
        func timestamp(_ text: String) -> Int64? {
            Array(text.utf8).withUnsafeBytes { LiveActivityPayload.timestamp(in: $0) }
        }
        #expect(timestamp(#"{"aps":{"event":"update","timestamp":1732000000,"content-state":{}}}"#) == 1_732_000_000)
        #expect(timestamp(#"{"aps":{"timestamp": 12.75}}"#) == 12)
        #expect(timestamp(#"{"aps":{"timestamp":-3}}"#) == -3)
        #expect(timestamp(#"{"aps":{"timestamp":"12"}}"#) == nil)
        #expect(timestamp(#"{"timestamp":12,"aps":{}}"#) == nil)
    }
}
