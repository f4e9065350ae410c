"""An APNs provider written with Python's h2 (PyPI), nobody here wrote: sends each request
read from standard input (a JSON list of {"headers": [[name, value], ...], "body": text}) over
one HTTP/2 connection, one at a time, and prints a JSON list of what came back.

    python3 apns_client.py PORT [--tls CAFILE] < requests.json
"""
import json
import socket
import ssl
import sys

import h2.config
import h2.connection
import h2.events

port = int(sys.argv[1])
requests = json.load(sys.stdin)
sock = socket.create_connection(("127.0.0.1", port), timeout=20)
if "--tls" in sys.argv:
    context = ssl.create_default_context(cafile=sys.argv[sys.argv.index("--tls") + 1])
    context.set_alpn_protocols(["h2"])
    sock = context.wrap_socket(sock, server_hostname="localhost")
    assert sock.selected_alpn_protocol() == "h2", sock.selected_alpn_protocol()
conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8",
                                                            validate_outbound_headers=False,
                                                            normalize_outbound_headers=False))
conn.initiate_connection()
sock.sendall(conn.data_to_send())

results = []
for request in requests:
    stream_id = conn.get_next_available_stream_id()
    body = request["body"].encode()
    conn.send_headers(stream_id, [tuple(field) for field in request["headers"]], end_stream=not body)
    if body:
        conn.send_data(stream_id, body, end_stream=True)
    sock.sendall(conn.data_to_send())
    response = {"headers": {}, "body": b""}
    done = False
    while not done:
        data = sock.recv(65536)
        if not data:
            raise SystemExit("the sink closed the connection")
        for event in conn.receive_data(data):
            if isinstance(event, h2.events.ResponseReceived) and event.stream_id == stream_id:
                response["headers"] = dict(event.headers)
            elif isinstance(event, h2.events.DataReceived) and event.stream_id == stream_id:
                response["body"] += event.data
                conn.acknowledge_received_data(event.flow_controlled_length, stream_id)
            elif isinstance(event, h2.events.StreamEnded) and event.stream_id == stream_id:
                done = True
            elif isinstance(event, h2.events.StreamReset) and event.stream_id == stream_id:
                response["reset"] = int(event.error_code)
                done = True
        sock.sendall(conn.data_to_send())
    body = json.loads(response["body"]) if response["body"] else {}
    if not isinstance(body, dict):
        body = {}
    results.append({
        "status": int(response["headers"].get(":status", 0)),
        "reason": body.get("reason"),
        "timestamp": body.get("timestamp"),
        "apns_id": response["headers"].get("apns-id"),
        "content_type": response["headers"].get("content-type"),
        "reset": response.get("reset"),
        "apns_request_id": response["headers"].get("apns-request-id"),
        "apns_channel_id": response["headers"].get("apns-channel-id"),
        "channels": body.get("channels"),
        "message_storage_policy": body.get("message-storage-policy"),
    })

conn.close_connection()
sock.sendall(conn.data_to_send())
sock.close()
print(json.dumps(results))
