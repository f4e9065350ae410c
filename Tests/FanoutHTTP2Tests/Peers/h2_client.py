"""A Python h2 (PyPI) client against a Fanout server: concurrent POSTs with bodies of many
sizes, a body larger than the stream window (the server must send WINDOW_UPDATE), a small
receive window of our own (the server's sending must follow flow control), and PING.
Prints one JSON object with what it saw.

    python3 h2_client.py PORT
"""
import json
import socket
import sys

import h2.config
import h2.connection
import h2.events
import h2.settings

port = int(sys.argv[1])
sock = socket.create_connection(("127.0.0.1", port), timeout=20)
conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
conn.initiate_connection()
# A small window: the server has to wait for our WINDOW_UPDATEs to send echoed bodies.
conn.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 1000})
sock.sendall(conn.data_to_send())

sizes = [0, 1, 280, 999, 1000, 1001, 16384, 16385, 60000] * 4 + [3_000_000]
bodies = {}
expected = {}
responses = {}
pending_data = {}
remote_settings = {}
ping_acked = False


def pump():
    """Reads once, handles events, acknowledges data, sends what h2 queued."""
    global ping_acked
    data = sock.recv(1 << 20)
    if not data:
        raise SystemExit("the server closed the connection")
    for event in conn.receive_data(data):
        if isinstance(event, h2.events.ResponseReceived):
            responses[event.stream_id] = {"headers": dict(event.headers), "body": b""}
        elif isinstance(event, h2.events.DataReceived):
            responses[event.stream_id]["body"] += event.data
            conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
        elif isinstance(event, h2.events.StreamEnded):
            responses[event.stream_id]["ended"] = True
        elif isinstance(event, h2.events.RemoteSettingsChanged):
            for code, change in event.changed_settings.items():
                remote_settings[int(code)] = change.new_value
        elif isinstance(event, h2.events.PingAckReceived):
            ping_acked = True
        elif isinstance(event, (h2.events.StreamReset, h2.events.ConnectionTerminated)):
            raise SystemExit(f"unexpected {event}")
    flush_pending()
    sock.sendall(conn.data_to_send())


def flush_pending():
    """Sends request bodies as far as the server's windows allow."""
    for stream_id in list(pending_data):
        data = pending_data[stream_id]
        while data:
            window = min(conn.local_flow_control_window(stream_id), conn.max_outbound_frame_size)
            if window <= 0:
                break
            conn.send_data(stream_id, data[:window])
            data = data[window:]
        if data:
            pending_data[stream_id] = data
        else:
            conn.end_stream(stream_id)
            del pending_data[stream_id]


for index, size in enumerate(sizes):
    stream_id = conn.get_next_available_stream_id()
    body = bytes((index + i) % 251 for i in range(size))
    bodies[stream_id] = body
    expected[stream_id] = size
    headers = [
        (":method", "POST"), (":scheme", "http"), (":authority", f"127.0.0.1:{port}"),
        (":path", f"/3/device/{index:064x}"), ("apns-topic", "com.example.app"),
    ]
    conn.send_headers(stream_id, headers, end_stream=size == 0)
    if size:
        pending_data[stream_id] = body
flush_pending()
conn.ping(b"fanout!!")
sock.sendall(conn.data_to_send())

while len([r for r in responses.values() if r.get("ended")]) < len(sizes) or not ping_acked:
    pump()

problems = []
for stream_id, size in expected.items():
    response = responses[stream_id]
    status = response["headers"][":status"]
    length = int(response["headers"]["x-body-length"])
    if status != "200" or length != size:
        problems.append(f"stream {stream_id}: status {status}, length {length}, sent {size}")
    want = bodies[stream_id][:65536] if size else f"/3/device/{(stream_id - 1) // 2:064x}".encode()
    if response["body"] != want:
        problems.append(f"stream {stream_id}: echoed body differs ({len(response['body'])} bytes)")

conn.close_connection()
sock.sendall(conn.data_to_send())
sock.close()
print(json.dumps({
    "responses": len(responses),
    "problems": problems,
    "ping": ping_acked,
    "max_concurrent_streams": remote_settings.get(3),
}))
