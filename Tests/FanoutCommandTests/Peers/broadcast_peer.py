"""A broadcaster written with Python's h2 (PyPI) for the card's broadcast rules (issue 45). It
asks on one connection, one request at a time, and prints one JSON line: the statuses it was
answered and the violations it planted, by the card's rule names.

    python3 broadcast_peer.py MODE PORT BUDGET

MODE:
- bad: creates three channels; sends BUDGET + 2 priority-10 updates on the first (2 over the
  budget); on the second an update, then one with a lower timestamp (backwards, priority 5);
  deletes the third, broadcasts to it (ChannelNotRegistered) and again (a retry); leaves the
  first two open.
- good: creates two channels; on each BUDGET priority-10 updates and 3 more at priority 5,
  timestamps rising; one broadcast to a channel never created (ChannelNotRegistered, not sent
  again); deletes both.
"""
import json
import socket
import sys
import time

import h2.config
import h2.connection
import h2.events

mode, port, budget = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
APP = "com.example.app"
CREATE = b'{"message-storage-policy":1,"push-type":"LiveActivity"}'
DEADLINE = time.monotonic() + 30

sock = socket.create_connection(("127.0.0.1", port), timeout=20)
conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
conn.initiate_connection()
sock.sendall(conn.data_to_send())
statuses = []


def ask(method, path, fields=(), body=b""):
    """One request; returns the answer's status and headers."""
    stream = conn.get_next_available_stream_id()
    headers = [(":method", method), (":scheme", "http"), (":authority", "localhost"), (":path", path)]
    headers += list(fields)
    conn.send_headers(stream, headers + [("content-length", str(len(body)))], end_stream=not body)
    if body:
        conn.send_data(stream, body, end_stream=True)
    sock.sendall(conn.data_to_send())
    answer, ended = None, False
    while not ended:
        if time.monotonic() > DEADLINE:
            raise SystemExit("broadcast_peer: no answer within 30 s")
        data = sock.recv(65536)
        if not data:
            raise SystemExit("broadcast_peer: the sink closed the connection")
        for event in conn.receive_data(data):
            if isinstance(event, h2.events.ResponseReceived) and event.stream_id == stream:
                answer = dict(event.headers)
            elif isinstance(event, h2.events.DataReceived):
                conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            elif isinstance(event, h2.events.StreamEnded) and event.stream_id == stream:
                ended = True
        sock.sendall(conn.data_to_send())
    statuses.append(int(answer[":status"]))
    return answer


def create():
    return ask("POST", "/1/apps/%s/channels" % APP, body=CREATE)["apns-channel-id"]


def delete(channel):
    ask("DELETE", "/1/apps/%s/channels" % APP, [("apns-channel-id", channel)])


def update(channel, timestamp, priority):
    body = json.dumps({"aps": {"timestamp": timestamp, "event": "update", "content-state": {"n": timestamp}}})
    fields = [("apns-channel-id", channel), ("apns-push-type", "liveactivity"), ("apns-priority", str(priority))]
    return ask("POST", "/4/broadcasts/apps/" + APP, fields, body.encode())[":status"]


planted = {}
if mode == "bad":
    first, second, third = create(), create(), create()
    for k in range(budget + 2):
        update(first, 1000 + k, 10)
    planted["liveactivity-over-budget"] = 2
    update(second, 2000, 5)
    update(second, 1999, 5)
    planted["timestamp-backwards"] = 1
    delete(third)
    update(third, 3000, 5)
    update(third, 3001, 5)
    planted["deleted-channel-retried"] = 1
    planted["channels-left-open"] = 2
elif mode == "good":
    channels = [create(), create()]
    for channel in channels:
        for k in range(budget + 3):
            update(channel, 1000 + k, 10 if k < budget else 5)
    update("AAAAAAAAAAAAAAAAAAAAAA==", 1000, 5)
    for channel in channels:
        delete(channel)
else:
    raise SystemExit("broadcast_peer: MODE is bad or good")

conn.close_connection()
sock.sendall(conn.data_to_send())
sock.close()
print(json.dumps({"statuses": statuses, "planted": planted}))
