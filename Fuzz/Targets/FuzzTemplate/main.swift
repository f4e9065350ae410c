// The template parser and the per-device encoder fed arbitrary text, with a JSON parser that
// nobody here wrote as the oracle.
//
//   input := options(1) template-bytes [0x00 fields-bytes]
//
// `options` allows unknown `aps` keys (options & 1) and picks the push type (voip when
// options & 2). A template that compiles is encoded for one device with `fields` (the token
// line's tab-separated rest, named `name` and `count`): the notification must be JSON that
// Foundation's JSONSerialization reads, an object, within the size limit.
import FanoutAPNs
import FanoutPayload
import Foundation
import FuzzSupport
import NIOCore

// scripts/fuzz.sh adds the fixtures (fixtures/*.json) to these.
runFuzzer(
    seeds: [
        [0]
            + Array(
                #"{"aps":{"alert":{"title":"Hi {{field.name}}","body":"{{token}} #{{sequence}}"},"badge":"{{field.count}}"}}"#
                    .utf8
            )
            + [0] + Array("\tAlice \"A\"\t7".utf8),
        [1] + Array(#"{"aps":{"content-available":1,"x":[1,2.5e3,null,true]},"k":"\u00e9\ud83d\ude00"}"#.utf8),
    ],
    test
)

func test(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    var input = FuzzInput(start, count)
    let options = input.byte()
    let text = input.bytes.split(separator: 0, maxSplits: 1, omittingEmptySubsequences: false)
    let templateOptions = PayloadTemplate.Options(
        pushType: options & 2 != 0 ? .voip : .alert,
        fieldNames: ["name", "count"],
        allowUnknownAPSKeys: options & 1 != 0
    )
    guard let template = try? PayloadTemplate(json: Array(text[0]), file: "fuzz", options: templateOptions) else {
        return 0
    }
    let fields = text.count > 1 ? Array(text[1]) : []
    let token = Array(String(repeating: "a1", count: 32).utf8)
    let encoder = PayloadEncoder(template: template)
    var buffer = ByteBuffer()
    let size = token.withUnsafeBytes { token in
        fields.withUnsafeBytes { fields in
            try? encoder.encode(NotificationInput(token: token, sequence: 42, fields: fields), into: &buffer)
        }
    }
    guard let size else { return 0 }
    precondition(
        size == buffer.readableBytes && size <= templateOptions.effectiveSizeLimit,
        "a notification over its limit"
    )
    let json = Data(buffer.readableBytesView)
    guard (try? JSONSerialization.jsonObject(with: json)) is [String: Any] else {
        fatalError("the encoder wrote what is not a JSON object: \(String(decoding: json, as: UTF8.self))")
    }
    return 0
}
