"""A push provider that plants exactly one behaviour, written with Python's h2 (PyPI), for the
sink's conformance card (issue 43: the card accuses only the guilty). It prints one JSON line:
what it did and what it saw.

    python3 card_peer.py MODE PORT [COUNT] [--tls CA CERT KEY]

MODE:
- first-flight: COUNT requests in the connection's first flight, before the sink's SETTINGS
  could be read (RFC 9113 §6.5.3 lets a client do so); every answer read. Not a fault.
- goaway-race: COUNT requests in one write; the sink (--goaway-after-requests) sends GOAWAY
  while most of them are on the wire. Answers read, the PING in front of the GOAWAY
  acknowledged.
  Not a fault.
- after-goaway: one request; once the sink's GOAWAY (and the PING in front of it) is read and
  the PING acknowledged, COUNT more streams on the same connection (a fault, COUNT times). The
  sink must hold the first answer (--latency) so that the connection stays open.
- unread: COUNT requests, then the socket is closed without reading the answers (as a
  provider that died): the kernel resets the connection (unread bytes). The sink's counts are
  ahead of the provider's by COUNT.
- settled-burst: reads the sink's SETTINGS (a limit of 1 until the first acceptance) and
  acknowledges it, then opens COUNT streams at once (a fault: COUNT - 1 refused).
- certificate: over TLS with a client certificate (--tls CA CERT KEY): waits for the sink's
  SETTINGS, then COUNT streams at once before any answer. Apple's one stream until a valid
  token is a token connection's rule: not a fault.
"""
import collections
import json
import socket
import ssl
import sys
import time

import h2.config
import h2.connection
import h2.events
import h2.exceptions
import h2.settings
import hyperframe.frame
from apns_request import BODY, headers, send as send_to

mode = sys.argv[1]
port = int(sys.argv[2])
count = int(sys.argv[3]) if len(sys.argv) > 3 and not sys.argv[3].startswith("--") else 1
tls = sys.argv[sys.argv.index("--tls") + 1:sys.argv.index("--tls") + 4] if "--tls" in sys.argv else None
DEADLINE = time.monotonic() + 30


def token(i):
    return "%064x" % (i + 1)


def connect():
    raw = socket.create_connection(("127.0.0.1", port), timeout=20)
    if tls:
        ca, cert, key = tls
        context = ssl.create_default_context(cafile=ca)
        context.load_cert_chain(cert, key)
        context.set_alpn_protocols(["h2"])
        raw = context.wrap_socket(raw, server_hostname="localhost")
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
    conn.initiate_connection()
    return raw, conn


SCHEME = "https" if tls else "http"


def send(conn, i):
    return send_to(conn, token(i), SCHEME)


class Reader:
    """Reads frames, keeps each stream's status (negative: reset with that code)."""

    def __init__(self, sock, conn):
        self.sock, self.conn = sock, conn
        self.statuses = {}
        self.goaway = None
        self.settings = 0
        self.pings = []
        self.ping_acks = []
        self.closed = False

    def read(self):
        if time.monotonic() > DEADLINE:
            raise SystemExit("card_peer: no end within 30 s")
        data = self.sock.recv(65536)
        if not data:
            self.closed = True
            return
        try:
            events = self.conn.receive_data(data)
        except h2.exceptions.ProtocolError:
            # Python's h2 takes a GOAWAY as the end: any frame after it (an answer to a stream
            # below its last id) is an error to it. Stop reading, as it would.
            if self.goaway is None:
                raise
            self.closed = True
            return
        for event in events:
            if isinstance(event, h2.events.ResponseReceived):
                self.statuses[event.stream_id] = int(dict(event.headers)[":status"])
            elif isinstance(event, h2.events.StreamReset):
                self.statuses[event.stream_id] = -int(event.error_code)
            elif isinstance(event, h2.events.DataReceived):
                self.conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            elif isinstance(event, h2.events.ConnectionTerminated):
                self.goaway = event.last_stream_id
            elif isinstance(event, h2.events.RemoteSettingsChanged):
                self.settings += 1
            elif isinstance(event, h2.events.PingReceived):
                self.pings.append(event.ping_data)
            elif isinstance(event, h2.events.PingAckReceived):
                self.ping_acks.append(event.ping_data)
        # The PING and SETTINGS acknowledgements h2 queued go out at once.
        self.sock.sendall(self.conn.data_to_send())

    def until(self, done):
        while not done() and not self.closed:
            self.read()

    def round_trip(self, opaque):
        """A PING and its acknowledgement: the sink has read everything sent before it."""
        self.conn.ping(opaque)
        self.sock.sendall(self.conn.data_to_send())
        self.until(lambda: opaque in self.ping_acks)


def raw_streams(sock, conn, first_id, n):
    """n requests written as frames, past h2's own refusal to open streams after a GOAWAY; the
    header blocks come from the connection's HPACK encoder, so the sink's decoder stays in step."""
    data = b""
    for k in range(n):
        stream = first_id + 2 * k
        block = conn.encoder.encode(headers(token(1000 + k), SCHEME))
        data += hyperframe.frame.HeadersFrame(stream, data=block, flags=["END_HEADERS"]).serialize()
        data += hyperframe.frame.DataFrame(stream, data=BODY, flags=["END_STREAM"]).serialize()
    sock.sendall(data)


def ignore_limit(conn):
    """Makes h2 forget the peer's MAX_CONCURRENT_STREAMS (h2 4.x keeps each setting as a deque
    of values, the first in force): the fault is the provider's, h2 would not commit it."""
    conn.remote_settings._settings[h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS] = collections.deque([2 ** 31])


result = {"mode": mode}
sock, conn = connect()
reader = Reader(sock, conn)
if mode == "first-flight":
    streams = [send(conn, i) for i in range(count)]
    sock.sendall(conn.data_to_send())
    reader.until(lambda: all(s in reader.statuses for s in streams))
    result["statuses"] = collections.Counter(reader.statuses[s] for s in streams)
elif mode == "goaway-race":
    # h2 would stop at the sink's limit once it has read it: the limit is not known yet.
    streams = [send(conn, i) for i in range(count)]
    sock.sendall(conn.data_to_send())
    reader.until(lambda: reader.goaway is not None and all(s in reader.statuses for s in streams
                                                          if s <= reader.goaway))
    # The PING in front of the GOAWAY acknowledged, as a careful stack does (h2 drops its own):
    # the streams above the last id were all written before it.
    for opaque in reader.pings:
        sock.sendall(hyperframe.frame.PingFrame(0, opaque_data=opaque, flags=["ACK"]).serialize())
    # Let the PING's acknowledgement and the last answers cross before closing.
    sock.settimeout(0.3)
    try:
        while True:
            reader.read()
            if reader.closed:
                break
    except socket.timeout:
        pass
    result["last_stream"] = reader.goaway
    result["answered"] = sum(1 for s in streams if reader.statuses.get(s) == 200)
    result["statuses"] = collections.Counter(reader.statuses.values())
elif mode == "after-goaway":
    first = send(conn, 0)
    sock.sendall(conn.data_to_send())
    reader.until(lambda: reader.goaway is not None)
    # The PING in front of the GOAWAY is acknowledged, as HTTP/2 requires (Python's h2 drops
    # its own acknowledgement when it reads the GOAWAY behind it: written here by hand). The
    # sink knows this provider read its GOAWAY. Now the fault, count times.
    for opaque in reader.pings:
        sock.sendall(hyperframe.frame.PingFrame(0, opaque_data=opaque, flags=["ACK"]).serialize())
    time.sleep(0.05)
    raw_streams(sock, conn, first + 2, count)
    # The first answer is held by the sink (--latency); the connection stays open meanwhile:
    # the wait is the behaviour under test, not a synchronisation.
    time.sleep(0.3)
    result["planted"] = count
elif mode == "unread":
    streams = [send(conn, i) for i in range(count)]
    sock.sendall(conn.data_to_send())
    time.sleep(1.0)  # the behaviour under test: the answers arrive (20 ms after), and stay unread
    result["planted"] = count
    sock.close()  # with unread bytes: a reset
    print(json.dumps(result))
    sys.exit(0)
elif mode == "settled-burst":
    sock.sendall(conn.data_to_send())
    reader.until(lambda: reader.settings >= 1)
    reader.round_trip(b"settled!")  # the SETTINGS ACK has crossed before the burst
    ignore_limit(conn)
    streams = [send(conn, i) for i in range(count)]
    sock.sendall(conn.data_to_send())
    reader.until(lambda: all(s in reader.statuses for s in streams))
    result["statuses"] = collections.Counter(reader.statuses.values())
    result["planted"] = count - 1
elif mode == "certificate":
    sock.sendall(conn.data_to_send())
    # SETTINGS with 1, then (a certificate connection) with the full limit.
    reader.until(lambda: conn.remote_settings.max_concurrent_streams >= count)
    streams = [send(conn, i) for i in range(count)]
    sock.sendall(conn.data_to_send())
    reader.until(lambda: all(s in reader.statuses for s in streams))
    result["statuses"] = collections.Counter(reader.statuses[s] for s in streams)
    result["limit"] = conn.remote_settings.max_concurrent_streams
else:
    raise SystemExit("card_peer: unknown mode " + mode)
conn.close_connection()
try:
    sock.sendall(conn.data_to_send())
except OSError:
    pass
sock.close()
result["statuses"] = {str(k): v for k, v in result.get("statuses", {}).items()}
print(json.dumps(result))
