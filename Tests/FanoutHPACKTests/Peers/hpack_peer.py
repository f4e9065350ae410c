"""An independent HPACK peer for Fanout's tests: Python's hpack package (PyPI).

    hpack_peer.py encode   stdin: JSON [[[name_hex, value_hex], ...], ...]   stdout: one block (hex) per line
    hpack_peer.py decode   stdin: one block (hex) per line                    stdout: the JSON above

One encoder or decoder serves all blocks in order, so dynamic-table state carries across them.
"""
import json
import sys

import hpack


def main() -> None:
    mode = sys.argv[1]
    if mode == "encode":
        encoder = hpack.Encoder()
        for block in json.load(sys.stdin):
            fields = [(bytes.fromhex(name), bytes.fromhex(value)) for name, value in block]
            print(encoder.encode(fields, huffman=True).hex())
    elif mode == "decode":
        decoder = hpack.Decoder()
        decoder.max_header_list_size = 1 << 20
        blocks = []
        for line in sys.stdin:
            fields = decoder.decode(bytes.fromhex(line.strip()), raw=True)
            blocks.append([[name.hex(), value.hex()] for name, value in fields])
        json.dump(blocks, sys.stdout)
    else:
        sys.exit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
