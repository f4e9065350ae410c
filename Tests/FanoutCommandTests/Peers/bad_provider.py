"""A deliberately bad APNs provider, written with Python's h2 (PyPI), for the sink's conformance
card: each fault is planted a known number of times and printed as JSON at the end.

    python3 bad_provider.py PORT UNREGISTERED_TOKEN GOOD_TOKEN...

Faults:
- churn: one connection per notification, closed after its answer (each GOOD_TOKEN);
- permanent-retried: UNREGISTERED_TOKEN sent, answered 410, and sent again on a new connection;
- stream-limit: three streams opened at once on a fresh connection once its SETTINGS (a limit
  of 1 until a request was accepted, as APNs) was read and acknowledged, before its first
  answer: two refused. (Streams in the first flight, before the SETTINGS could be read, are
  allowed by RFC 9113 and not counted.)
Nothing else: no 429 or 5xx, no GOAWAY, no provider token, no apns-id, small payloads.
"""
import collections
import json
import socket
import sys

import h2.config
import h2.connection
import h2.events
import h2.settings
from apns_request import send

port = int(sys.argv[1])
unregistered = sys.argv[2]
good = sys.argv[3:]


def connect():
    sock = socket.create_connection(("127.0.0.1", port), timeout=20)
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
    conn.initiate_connection()
    sock.sendall(conn.data_to_send())
    return sock, conn


def answers(sock, conn, streams):
    """Reads until every stream in `streams` has ended; returns their statuses."""
    statuses = {}
    while len(statuses) < len(streams):
        data = sock.recv(65536)
        if not data:
            raise SystemExit("the sink closed the connection")
        for event in conn.receive_data(data):
            if isinstance(event, h2.events.ResponseReceived):
                statuses[event.stream_id] = int(dict(event.headers)[":status"])
            elif isinstance(event, h2.events.StreamReset):
                statuses[event.stream_id] = -int(event.error_code)
            elif isinstance(event, h2.events.DataReceived):
                conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
        sock.sendall(conn.data_to_send())
    return [statuses[stream] for stream in streams]


def one(token):
    """A connection for one notification, closed at once."""
    sock, conn = connect()
    stream = send(conn, token)
    sock.sendall(conn.data_to_send())
    [status] = answers(sock, conn, [stream])
    conn.close_connection()
    sock.sendall(conn.data_to_send())
    sock.close()
    return status


planted = {"churn": 0, "permanent-retried": 0, "stream-limit": 0}
statuses = []
for token in good:
    statuses.append(one(token))
first = one(unregistered)
again = one(unregistered)
statuses += [first, again]
planted["permanent-retried"] = 1 if first == 410 else 0

def read_until(sock, conn, kind):
    """Reads (answering what h2 must, such as a SETTINGS ACK) until an event of `kind`."""
    while True:
        data = sock.recv(65536)
        if not data:
            raise SystemExit("the sink closed the connection")
        seen = any(isinstance(event, kind) for event in conn.receive_data(data))
        sock.sendall(conn.data_to_send())
        if seen:
            return


# Three streams at once after reading and acknowledging the sink's SETTINGS (limit 1).
sock, conn = connect()
read_until(sock, conn, h2.events.RemoteSettingsChanged)
# A PING and its acknowledgement: the sink has read the SETTINGS ACK before the burst.
conn.ping(b"settled!")
sock.sendall(conn.data_to_send())
read_until(sock, conn, h2.events.PingAckReceived)
# h2 keeps the limit of 1 it read (h2 4.x holds each setting as a deque, the first in force):
# the fault is this provider's, so h2 is made to forget it.
conn.remote_settings._settings[h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS] = collections.deque([2 ** 31])
streams = [send(conn, token) for token in good[:3]]
sock.sendall(conn.data_to_send())
statuses += answers(sock, conn, streams)
conn.close_connection()
sock.sendall(conn.data_to_send())
sock.close()
planted["stream-limit"] = 2
# Every connection but the last was short and followed by another.
planted["churn"] = len(good) + 2
print(json.dumps({"planted": planted, "statuses": statuses}))
