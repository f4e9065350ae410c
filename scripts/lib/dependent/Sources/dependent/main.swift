import FanoutClient
import FanoutEndpoint
import FanoutPayload
import NIOCore

// Another project's use of the libraries: a template compiled once, one device's payload
// encoded, and the load engine's configuration for an endpoint.
let template = try PayloadTemplate(json: Array(#"{"aps":{"alert":{"title":"Hello","body":"{{field.1}}"}}}"#.utf8))
let encoder = PayloadEncoder(template: template)
var body = ByteBuffer()
let token = String(repeating: "ab", count: 32)
_ = try encoder.encode(token: token, fields: ["from another package"], into: &body)
var shape = LoadShape()
shape.connections = 2
let configuration = LoadConfiguration(
    host: "127.0.0.1",
    port: 2197,
    headers: try NotificationHeaders(topic: "com.example.app"),
    encoder: encoder,
    shape: shape
)
print("\(configuration.endpoint.host):\(configuration.endpoint.port) \(String(buffer: body))")
