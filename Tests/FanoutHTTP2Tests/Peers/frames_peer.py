"""An independent HTTP/2 frame peer for Fanout's tests: Python's hyperframe (PyPI), h2's frame layer.

    frames_peer.py make    stdout: line 1, frames as hex; then one line per frame as a receiver sees it
    frames_peer.py parse   stdin: frames as hex; stdout: one line per frame as hyperframe reads it

Lines: "DATA stream end data", "HEADERS stream end block" (CONTINUATION joined by the receiver),
"CONTINUATION stream end_headers block", "SETTINGS ack k=v,...", "PING ack opaque",
"WINDOW_UPDATE stream increment", "RST_STREAM stream code", "GOAWAY last code debug", "PRIORITY stream".
"""
import sys

from hyperframe.frame import (ContinuationFrame, DataFrame, Frame, GoAwayFrame, HeadersFrame, PingFrame,
                              PriorityFrame, RstStreamFrame, SettingsFrame, WindowUpdateFrame)


def describe(frame) -> str:
    flags = frame.flags
    if isinstance(frame, DataFrame):
        return f"DATA {frame.stream_id} {int('END_STREAM' in flags)} {frame.data.hex()}"
    if isinstance(frame, HeadersFrame):
        return f"HEADERS {frame.stream_id} {int('END_STREAM' in flags)} {frame.data.hex()}"
    if isinstance(frame, ContinuationFrame):
        return f"CONTINUATION {frame.stream_id} {int('END_HEADERS' in flags)} {frame.data.hex()}"
    if isinstance(frame, SettingsFrame):
        return f"SETTINGS {int('ACK' in flags)} " + ",".join(f"{k}={v}" for k, v in frame.settings.items())
    if isinstance(frame, PingFrame):
        return f"PING {int('ACK' in flags)} {frame.opaque_data.hex()}"
    if isinstance(frame, WindowUpdateFrame):
        return f"WINDOW_UPDATE {frame.stream_id} {frame.window_increment}"
    if isinstance(frame, RstStreamFrame):
        return f"RST_STREAM {frame.stream_id} {frame.error_code}"
    if isinstance(frame, GoAwayFrame):
        return f"GOAWAY {frame.last_stream_id} {frame.error_code} {frame.additional_data.hex()}"
    if isinstance(frame, PriorityFrame):
        return f"PRIORITY {frame.stream_id}"
    return f"OTHER {type(frame).__name__}"


def make() -> None:
    frames, expected = [], []

    settings = SettingsFrame(0, settings={SettingsFrame.HEADER_TABLE_SIZE: 4096, SettingsFrame.MAX_CONCURRENT_STREAMS: 1000,
                                          SettingsFrame.INITIAL_WINDOW_SIZE: 65535, SettingsFrame.MAX_FRAME_SIZE: 16384,
                                          SettingsFrame.MAX_HEADER_LIST_SIZE: 8000})
    frames.append(settings)
    expected.append(describe(settings))
    ack = SettingsFrame(0)
    ack.flags.add("ACK")
    frames.append(ack)
    expected.append(describe(ack))

    headers = HeadersFrame(1, data=b"\x83\x86\x84", flags=["END_HEADERS"])
    frames.append(headers)
    expected.append(describe(headers))
    padded = HeadersFrame(3, data=b"\x83\x87", flags=["END_HEADERS", "PADDED", "PRIORITY"], pad_length=7,
                          depends_on=1, stream_weight=15)
    frames.append(padded)
    expected.append("HEADERS 3 0 8387")
    split = HeadersFrame(5, data=b"\x82\x86", flags=["END_STREAM"])
    more = ContinuationFrame(5, data=b"\x84\x41")
    last = ContinuationFrame(5, data=b"\x8c", flags=["END_HEADERS"])
    frames += [split, more, last]
    expected.append("HEADERS 5 1 828684418c")

    data = DataFrame(1, data=b'{"aps":{"alert":"hi"}}', flags=["END_STREAM"])
    frames.append(data)
    expected.append(describe(data))
    padded_data = DataFrame(3, data=b"abc", flags=["PADDED"], pad_length=10)
    frames.append(padded_data)
    expected.append("DATA 3 0 616263")
    frames.append(PriorityFrame(7, depends_on=0, stream_weight=200))
    expected.append("PRIORITY 7")
    ping = PingFrame(0, opaque_data=b"\x01\x02\x03\x04\x05\x06\x07\x08")
    frames.append(ping)
    expected.append(describe(ping))
    window = WindowUpdateFrame(0, window_increment=1 << 20)
    frames.append(window)
    expected.append(describe(window))
    frames.append(RstStreamFrame(9, error_code=7))
    expected.append("RST_STREAM 9 7")
    goaway = GoAwayFrame(0, last_stream_id=9, error_code=0, additional_data=b'{"reason":"Shutdown"}')
    frames.append(goaway)
    expected.append(describe(goaway))

    print(b"".join(frame.serialize() for frame in frames).hex())
    for line in expected:
        print(line)


def parse() -> None:
    data = bytes.fromhex(sys.stdin.read().strip())
    view = memoryview(data)
    offset = 0
    while offset < len(data):
        frame, length = Frame.parse_frame_header(view[offset:offset + 9])
        frame.parse_body(view[offset + 9:offset + 9 + length])
        print(describe(frame))
        offset += 9 + length


if __name__ == "__main__":
    {"make": make, "parse": parse}[sys.argv[1]]()
