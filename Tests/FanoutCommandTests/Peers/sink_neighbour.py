"""A hostile neighbour of a shared sink (issue 49), with raw sockets and frames.

    python3 sink_neighbour.py MODE PORT SOURCE COUNT REPORT [SECONDS] [STREAMS]

MODE is one of:
  h2      COUNT connections from address SOURCE to the sink's APNs port: the preface and
          SETTINGS, then STREAMS (default 0) requests each whose HEADERS never end (no
          END_STREAM, no DATA)
  request COUNT connections from address SOURCE to the APNs port: the preface and SETTINGS,
          then one whole request with no authorization (against a sink with auth on: 403),
          then nothing
  bad-path the same with `:path /` (404 BadPath, refused before authentication)
  admin   COUNT connections to the admin port; every third sends half a request line, the
          rest send nothing

Once every connection has been opened and has answered or not within a second, one JSON line
goes to REPORT ("opened"): how many connections were refused (h2: a GOAWAY whose last stream
is 0 came with their first frames; admin: a 503 or a close), how many were answered (request:
a HEADERS frame came back on stream 1) and the first refusal's text.
Then it watches until every connection has ended, or SECONDS (default 30) pass, and appends a
second line ("ended"): for each connection still served, when the sink closed it (seconds since
the report), the RST_STREAM codes and the GOAWAY it sent. Exits after that.
"""
import json
import resource
import selectors
import socket
import struct
import sys
import time

import hpack

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
TOKEN = "ab" * 32


def frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


class Frames:
    """Reads whole frames out of what a connection received."""

    def __init__(self):
        self.buffer = b""

    def feed(self, data):
        self.buffer += data
        frames = []
        while len(self.buffer) >= 9:
            length = int.from_bytes(self.buffer[:3], "big")
            if len(self.buffer) < 9 + length:
                break
            kind, stream = self.buffer[3], int.from_bytes(self.buffer[5:9], "big") & 0x7FFFFFFF
            frames.append((kind, stream, self.buffer[9:9 + length]))
            self.buffer = self.buffer[9 + length:]
        return frames


class Connection:
    def __init__(self, port, source, mode, streams, encoder, index):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind((source, 0))
        self.sock.settimeout(5)
        self.sock.connect(("127.0.0.1", port))
        self.sock.setblocking(False)
        self.frames = Frames()
        self.mode = mode
        self.refused = None
        self.goaway = None
        self.resets = []
        self.closed_at = None
        self.received = b""
        self.acknowledged = False
        self.answered = False
        if mode in ("request", "bad-path"):
            path = "/3/device/" + TOKEN if mode == "request" else "/"
            block = encoder.encode([
                (":method", "POST"), (":scheme", "http"), (":path", path),
                (":authority", "127.0.0.1"), ("apns-topic", "com.example.app"),
            ])
            body = b'{"aps":{"alert":"x"}}'
            self.sock.sendall(PREFACE + frame(4, 0, 0) + frame(1, 0x4, 1, block) + frame(0, 0x1, 1, body))
        elif mode == "h2":
            data = PREFACE + frame(4, 0, 0)
            for number in range(streams):
                block = encoder.encode([
                    (":method", "POST"), (":scheme", "http"), (":path", "/3/device/" + TOKEN),
                    (":authority", "127.0.0.1"), ("apns-topic", "com.example.app"),
                ])
                data += frame(1, 0x4, 1 + 2 * number, block)  # END_HEADERS, never END_STREAM
            self.sock.sendall(data)
        elif index % 3 == 0:
            self.sock.sendall(b"GET /sta")

    def read(self, now):
        """Takes what arrived; False once the sink closed the connection."""
        try:
            data = self.sock.recv(65536)
        except BlockingIOError:
            return True
        except OSError:
            data = b""
        if not data:
            self.closed_at = now
            return False
        if self.mode == "admin":
            self.received += data
            if self.received.startswith(b"HTTP/1.1 503") and self.refused is None:
                self.refused = self.received.split(b"\r\n\r\n", 1)[-1].decode(errors="replace").strip()
            return True
        for kind, stream, payload in self.frames.feed(data):
            if kind == 7 and len(payload) >= 8:
                last = int.from_bytes(payload[:4], "big") & 0x7FFFFFFF
                self.goaway = {"code": int.from_bytes(payload[4:8], "big"), "debug": payload[8:].decode(errors="replace")}
                if last == 0 and self.goaway["code"] == 0xB and self.refused is None and not self.resets:
                    self.refused = self.goaway["debug"]
            elif kind == 4 and stream == 0 and not self.acknowledged:
                # A well-formed client in every other way: the sink's SETTINGS acknowledged.
                self.acknowledged = True
                try:
                    self.sock.sendall(frame(4, 0x1, 0))
                except OSError:
                    pass
            elif kind == 1 and stream == 1:
                self.answered = True
            elif kind == 3 and len(payload) == 4:
                self.resets.append(int.from_bytes(payload, "big"))
        return True


def watch(connections, until):
    """Reads every connection that has something until `until` (a monotonic time), or until
    none is open."""
    selector = selectors.DefaultSelector()
    for connection in connections:
        if connection.closed_at is None:
            selector.register(connection.sock, selectors.EVENT_READ, connection)
    while time.monotonic() < until and selector.get_map():
        for key, _ in selector.select(timeout=0.05):
            if not key.data.read(time.monotonic()):
                selector.unregister(key.fileobj)
    selector.close()


def main():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    mode, port, source, count, report = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5]
    seconds = float(sys.argv[6]) if len(sys.argv) > 6 else 30
    streams = int(sys.argv[7]) if len(sys.argv) > 7 else 0
    connections = []
    for index in range(count):
        try:
            connections.append(Connection(port, source, mode, streams, hpack.Encoder(), index))
        except OSError:
            connections.append(None)
    start = time.monotonic()
    # Each connection's first answer (a refusal comes at once) within a second.
    open_ones = [c for c in connections if c is not None]
    watch(open_ones, start + 1)
    refused = [c for c in open_ones if c.refused is not None or (mode == "admin" and c.closed_at is not None)]
    served = [c for c in open_ones if c not in refused]
    first = next((c.refused for c in refused if c.refused), None)
    with open(report, "a") as out:
        out.write(json.dumps({
            "opened": len(open_ones), "failed": count - len(open_ones), "refused": len(refused),
            "served": len(served), "answered": sum(1 for c in open_ones if c.answered), "refusal": first,
        }) + "\n")
    reported = time.monotonic()
    watch(served, reported + seconds)
    with open(report, "a") as out:
        out.write(json.dumps({
            "ended": [
                {
                    "closed_after": None if c.closed_at is None else round(c.closed_at - reported, 3),
                    "resets": c.resets, "goaway": c.goaway,
                }
                for c in served
            ],
        }) + "\n")
    for connection in open_ones:
        connection.sock.close()


if __name__ == "__main__":
    main()
