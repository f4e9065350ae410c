"""Clients a shared FCM sink must bound, each on its own socket to 127.0.0.1:PORT, printed as
one JSON line of what each saw (seconds from its start to the sink's close, or what it read).

  python3 fcm_defences.py PORT ADMIN_PORT PER_PEER CASE...

  silent       connects and sends nothing: closed before any protocol was chosen
  idle_h2      h2c preface and SETTINGS, the sink's SETTINGS acknowledged, then nothing: the
               sink's GOAWAY (its error code read), then its close
  idle_http1   one HTTP/1.1 request answered, then nothing on the kept-alive connection
  slow_body    an HTTP/1.1 head promising 100 body bytes and 10 of them: the request timeout
  pipelined    one request whole and, in the same write, a second's head and half its body:
               the second's request timeout, not the idle timeout, closes it
  per_peer     PER_PEER connections held, each with a send answered (so none is idle: none can
               be evicted for a newcomer), then one more: closed at once; the held ones still serve
  stalled_frame  h2c, the sink's SETTINGS acknowledged, then the first 5 bytes of a frame's
               header and nothing more: the sink's GOAWAY (ENHANCE_YOUR_CALM after
               --frame-timeout), then its close
  bad_frame    h2c, the sink's SETTINGS acknowledged, then a PING on stream 1 (RFC 9113 §6.7:
               a connection error): the sink's GOAWAY PROTOCOL_ERROR, then its close
  evicted      PER_PEER connections, the first with a send answered (it proved itself), the rest
               silent; then, past the sink's idle grace, one more with a send: the oldest silent
               one is closed for it (not the older one that sent), and its send is answered

Every read has a timeout (20 s): a sink that never closes is reported, not waited for.
"""

import json
import select
import socket
import sys
import time
import urllib.request

PORT, ADMIN, PER_PEER = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
BOUND = 20.0
BODY = b'{"message":{"token":"tok"}}'
HEAD = (
    b"POST /v1/projects/fanout-fcm/messages:send HTTP/1.1\r\nhost: x\r\nauthorization: Bearer x\r\n"
    b"content-type: application/json\r\ncontent-length: %d\r\n\r\n"
)
SEND = HEAD % len(BODY) + BODY


def connect():
    sock = socket.create_connection(("127.0.0.1", PORT), timeout=BOUND)
    sock.settimeout(BOUND)
    return sock


def until_closed(sock, started, on_data=None):
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
        if on_data:
            on_data(data)


def frames(data):
    """(type, flags, payload) of each whole HTTP/2 frame in data."""
    found, at = [], 0
    while at + 9 <= len(data):
        length = int.from_bytes(data[at:at + 3], "big")
        found.append((data[at + 3], data[at + 4], data[at + 9:at + 9 + length]))
        at += 9 + length
    return found


def silent():
    sock = connect()
    seen = until_closed(sock, time.monotonic())
    seen["bytes"] = len(seen.pop("data", b""))
    return seen


def idle_h2(then=b""):
    """h2c's preface and SETTINGS, the sink's SETTINGS acknowledged, then `then`; what the
    sink's GOAWAY said, and when it closed."""
    sock = connect()
    started = time.monotonic()
    sock.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00")
    acked = []

    def acknowledge(data):
        # The sink's SETTINGS (type 4, no ACK flag) acknowledged once: no SETTINGS timeout.
        if not acked and any(kind == 4 and not flags & 1 for kind, flags, _ in frames(data)):
            sock.sendall(b"\x00\x00\x00\x04\x01\x00\x00\x00\x00" + then)
            acked.append(True)

    seen = until_closed(sock, started, acknowledge)
    goaways = [payload for kind, _, payload in frames(seen.pop("data", b"")) if kind == 7]
    seen["goaway_code"] = int.from_bytes(goaways[0][4:8], "big") if goaways else None
    return seen


def stalled_frame():
    return idle_h2(then=b"\x00\x00\x08\x06\x00")


def bad_frame():
    return idle_h2(then=b"\x00\x00\x08\x06\x00\x00\x00\x00\x01" + b"\x00" * 8)


def idle_http1():
    sock = connect()
    sock.sendall(SEND)
    seen = until_closed(sock, time.monotonic())
    seen["answered"] = seen.pop("data", b"").startswith(b"HTTP/1.1 200")
    return seen


def slow_body():
    sock = connect()
    sock.sendall(HEAD % 100 + b'{"message"')
    seen = until_closed(sock, time.monotonic())
    seen.pop("data", None)
    return seen


def pipelined():
    sock = connect()
    sock.sendall(SEND + HEAD % 100 + b'{"message"')
    seen = until_closed(sock, time.monotonic())
    seen["answered"] = seen.pop("data", b"").startswith(b"HTTP/1.1 200")
    return seen


def open_connections():
    with urllib.request.urlopen("http://127.0.0.1:%d/stats" % ADMIN, timeout=BOUND) as answer:
        return json.load(answer)["connections"]["open"]


def per_peer():
    held = [connect() for _ in range(PER_PEER)]
    for sock in held:
        sock.sendall(SEND)
        sock.recv(65536)
    # The sink admits on its loops: wait until it counts them, so the next one is the surplus.
    deadline = time.monotonic() + BOUND
    while open_connections() < PER_PEER and time.monotonic() < deadline:
        time.sleep(0.02)
    last = connect()
    refused = until_closed(last, time.monotonic())
    refused.pop("data", None)
    held[0].sendall(SEND)
    answer = held[0].recv(65536)
    for sock in held:
        sock.close()
    return {"refused": refused, "held_answered": answer.startswith(b"HTTP/1.1 200")}


def still_open(sock):
    """Whether the sink has left `sock` open: nothing (no close) within 300 ms."""
    ready, _, _ = select.select([sock], [], [], 0.3)
    if not ready:
        return True
    try:
        return sock.recv(1) != b""
    except ConnectionResetError:
        return False


def evicted():
    proven = connect()
    proven.sendall(SEND)
    proven.recv(65536)
    silent = [connect() for _ in range(PER_PEER - 1)]
    deadline = time.monotonic() + BOUND
    while open_connections() < PER_PEER and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.5)  # past the sink's --idle-grace (200 ms)
    newcomer = connect()
    newcomer.sendall(SEND)
    answer = newcomer.recv(65536)
    oldest = until_closed(silent[0], time.monotonic())
    oldest.pop("data", None)
    proven_open = still_open(proven)
    for sock in silent[1:] + [proven, newcomer]:
        sock.close()
    return {"oldest": oldest, "proven_open": proven_open, "answered": answer.startswith(b"HTTP/1.1 200")}


CASES = {
    "silent": silent, "idle_h2": idle_h2, "idle_http1": idle_http1, "slow_body": slow_body,
    "pipelined": pipelined, "per_peer": per_peer, "evicted": evicted, "stalled_frame": stalled_frame,
    "bad_frame": bad_frame,
}
print(json.dumps({case: CASES[case]() for case in sys.argv[4:]}))
