"""A client of a shared sink that forges timed apns-ids (issue 49): each request's id carries a
send time an hour before now on this host's clock, with the host tag `fanout send` would use
(FNV-1a of the world-readable boot id, as `TimedAPNsID.hostTag`), so a sink that believed it
would count an hour of "own lateness from the send".

    python3 forged_timing.py PORT COUNT [AGO_SECONDS]

Sends COUNT notifications on one connection (100 at a time), reads every answer, prints one
JSON line: {"answered": N, "statuses": {"200": N}}.
"""
import json
import socket
import sys
import time

import h2.config
import h2.connection
import h2.events

TOKEN = "ab" * 32


def host_tag():
    try:
        with open("/proc/sys/kernel/random/boot_id", "rb") as boot:
            text = boot.read()
    except OSError:
        text = socket.gethostname().encode()
    value = 0xCBF29CE484222325
    for byte in text:
        value = ((value ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return (value ^ (value >> 32)) & 0xFFF


def timed_id(sent_seconds, number):
    """A timed apns-id for a send at `sent_seconds` (CLOCK_MONOTONIC, as the sink's uptime)."""
    microseconds = int(sent_seconds * 1_000_000) & 0xFFFFFFFFFFFF
    high = microseconds << 16 | 0x8000 | host_tag()
    low = 0x8000000000000000 | number
    digits = "%016x%016x" % (high, low)
    return "-".join([digits[0:8], digits[8:12], digits[12:16], digits[16:20], digits[20:32]])


def main():
    port, count = int(sys.argv[1]), int(sys.argv[2])
    ago = float(sys.argv[3]) if len(sys.argv) > 3 else 3600
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    connection = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=True))
    connection.initiate_connection()
    sock.sendall(connection.data_to_send())
    statuses = {}
    answered = 0
    sent = 0
    deadline = time.monotonic() + 60
    while answered < count and time.monotonic() < deadline:
        while sent < count and sent - answered < 100:
            stream = connection.get_next_available_stream_id()
            connection.send_headers(stream, [
                (":method", "POST"), (":scheme", "http"), (":path", "/3/device/" + TOKEN),
                (":authority", "127.0.0.1"), ("apns-topic", "com.example.app"), ("apns-push-type", "alert"),
                ("apns-id", timed_id(time.monotonic() - ago, sent)),
            ])
            connection.send_data(stream, b'{"aps":{"alert":"forged"}}', end_stream=True)
            sent += 1
        sock.sendall(connection.data_to_send())
        data = sock.recv(65536)
        if not data:
            break
        for event in connection.receive_data(data):
            if isinstance(event, h2.events.ResponseReceived):
                status = dict(event.headers).get(b":status", b"?").decode()
                statuses[status] = statuses.get(status, 0) + 1
            elif isinstance(event, h2.events.StreamEnded):
                answered += 1
        sock.sendall(connection.data_to_send())
    connection.close_connection()
    sock.sendall(connection.data_to_send())
    sock.close()
    print(json.dumps({"answered": answered, "statuses": statuses}))


if __name__ == "__main__":
    main()
