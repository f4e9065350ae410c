"""A client that floods a sink with frames that bring no request closer (issue 61, case 12).

    python3 frame_flood.py PORT SOURCE KIND [SECONDS]

From address SOURCE to the sink's APNs port on 127.0.0.1: the preface, SETTINGS, the sink's
SETTINGS acknowledged, a request's HEADERS without END_STREAM (stream 1), then KIND frames as
fast as the socket takes them, until the sink sends GOAWAY and closes, or SECONDS (default 20)
pass. KIND is one of:
  empty-data     DATA on stream 1, empty, no END_STREAM (CVE-2019-9518)
  priority       PRIORITY on stream 1
  window-update  WINDOW_UPDATE of 1 on the connection
  unknown        a frame of type 0x20 (RFC 9113 §4.1: ignored)
  ping           PING, its acknowledgements read

Prints one JSON line: frames sent, the GOAWAY's code and debug text (or null), whether the
sink closed the connection, and the seconds it took.
"""
import json
import select
import socket
import struct
import sys
import time

import hpack

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


FRAMES = {
    "empty-data": frame(0, 0, 1),
    "priority": frame(2, 0, 1, b"\x00\x00\x00\x00\x10"),
    "window-update": frame(8, 0, 0, struct.pack(">I", 1)),
    "unknown": frame(0x20, 0, 0, b"\x01\x02\x03"),
    "ping": frame(6, 0, 0, b"\x00" * 8),
}


def main():
    port, source, kind = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    seconds = float(sys.argv[4]) if len(sys.argv) > 4 else 20
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((source, 0))
    sock.settimeout(5)
    sock.connect(("127.0.0.1", port))
    block = hpack.Encoder().encode([
        (":method", "POST"), (":scheme", "http"), (":path", "/3/device/" + "ab" * 32),
        (":authority", "127.0.0.1"), ("apns-topic", "com.example.app"),
    ])
    sock.sendall(PREFACE + frame(4, 0, 0) + frame(4, 1, 0) + frame(1, 0x4, 1, block))
    sock.setblocking(False)
    chunk = FRAMES[kind] * 4096
    sent, received, goaway, closed = 0, b"", None, False
    start = time.monotonic()
    pending = memoryview(chunk)
    while time.monotonic() - start < seconds and not closed:
        try:
            data = sock.recv(1 << 20)
            if not data:
                closed = True
            received += data
        except BlockingIOError:
            pass
        except OSError:
            closed = True
        # The sink's frames: a GOAWAY ends the flood's purpose, not its writing (the close does).
        while len(received) >= 9:
            length = int.from_bytes(received[:3], "big")
            if len(received) < 9 + length:
                break
            if received[3] == 7 and goaway is None and length >= 8:
                payload = received[9:9 + length]
                goaway = {"code": int.from_bytes(payload[4:8], "big"), "debug": payload[8:].decode(errors="replace")}
            received = received[9 + length:]
        if closed:
            break
        try:
            written = sock.send(pending)
            sent += written
            pending = pending[written:]
            if not pending:
                pending = memoryview(chunk)
        except BlockingIOError:
            select.select([sock], [sock], [], 0.05)
        except OSError:
            closed = True
    sock.close()
    print(json.dumps({
        "frames": sent // len(FRAMES[kind]), "goaway": goaway, "closed": closed,
        "seconds": round(time.monotonic() - start, 3),
    }))


if __name__ == "__main__":
    main()
