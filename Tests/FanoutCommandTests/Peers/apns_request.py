"""The request the provider peers (bad_provider.py, card_peer.py) send, with Python's h2 (PyPI):
one small alert notification to a device token, on the connection's next stream."""

BODY = b'{"aps":{"alert":"hello"}}'


def headers(token, scheme="http"):
    """The request's fields for `token`'s notification (docs/apns.md: path, topic, push type)."""
    return [(":method", "POST"), (":scheme", scheme), (":authority", "localhost"),
            (":path", "/3/device/" + token), ("apns-topic", "com.example.app"),
            ("apns-push-type", "alert"), ("content-length", str(len(BODY)))]


def send(conn, token, scheme="http"):
    """Opens the next stream on `conn` with `token`'s notification, ended; returns its id."""
    stream = conn.get_next_available_stream_id()
    conn.send_headers(stream, headers(token, scheme))
    conn.send_data(stream, BODY, end_stream=True)
    return stream
