"""Clients a shared FCM sink must bound, each on its own socket to 127.0.0.1:PORT, printed as
one JSON line of what each saw (seconds from its start to the sink's close, or what it read).

  idle_h2      h2c preface and SETTINGS, then nothing: the sink's GOAWAY, then its close
  idle_http1   one HTTP/1.1 request answered, then nothing on the kept-alive connection
  slow_body    an HTTP/1.1 head promising 100 body bytes and 10 of them: the request timeout
  per_peer N   N + 1 connections held at once: the last is closed at once, the others are not

Every read has a timeout (20 s): a sink that never closes is reported, not waited for.
"""

import json
import socket
import sys
import time

PORT = int(sys.argv[1])
PER_PEER = int(sys.argv[2])
BOUND = 20.0
SEND = (
    b"POST /v1/projects/fanout-fcm/messages:send HTTP/1.1\r\nhost: x\r\nauthorization: Bearer x\r\n"
    b"content-type: application/json\r\ncontent-length: 27\r\n\r\n" + b'{"message":{"token":"tok"}}'
)


def connect():
    sock = socket.create_connection(("127.0.0.1", PORT), timeout=BOUND)
    sock.settimeout(BOUND)
    return sock


def until_closed(sock, started):
    """Reads until the sink closes; the seconds it took and every byte read."""
    data = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except socket.timeout:
            return {"closed": False, "bytes": len(data)}
        except ConnectionResetError:
            chunk = b""
        if not chunk:
            return {"closed": True, "after": round(time.monotonic() - started, 2), "data": data}
        data += chunk


def idle_h2():
    sock = connect()
    started = time.monotonic()
    sock.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00")
    seen = until_closed(sock, started)
    data = seen.pop("data", b"")
    # Frames: 9-byte headers, type at offset 3; GOAWAY is 7.
    types, at = [], 0
    while at + 9 <= len(data):
        length = int.from_bytes(data[at:at + 3], "big")
        types.append(data[at + 3])
        at += 9 + length
    seen["goaway"] = 7 in types
    return seen


def idle_http1():
    sock = connect()
    sock.sendall(SEND)
    started = time.monotonic()
    seen = until_closed(sock, started)
    seen["answered"] = seen.pop("data", b"").startswith(b"HTTP/1.1 200")
    return seen


def slow_body():
    sock = connect()
    started = time.monotonic()
    head = SEND.split(b"\r\n\r\n")[0].replace(b"content-length: 27", b"content-length: 100")
    sock.sendall(head + b"\r\n\r\n" + b'{"message"')
    seen = until_closed(sock, started)
    seen.pop("data", None)
    return seen


def per_peer():
    held = [connect() for _ in range(PER_PEER)]
    time.sleep(0.2)
    last = connect()
    started = time.monotonic()
    refused = until_closed(last, started)
    refused.pop("data", None)
    # The held ones still serve: one request on the first.
    held[0].sendall(SEND)
    answer = held[0].recv(65536)
    for sock in held:
        sock.close()
    return {"refused": refused, "held_answered": answer.startswith(b"HTTP/1.1 200")}


print(json.dumps({
    "idle_h2": idle_h2(),
    "idle_http1": idle_http1(),
    "slow_body": slow_body(),
    "per_peer": per_peer(),
}))
