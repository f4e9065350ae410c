"""A TCP proxy that resets connections at random: every so often (uniform between half and
one and a half times MEAN seconds, from SEED) it picks an open connection and aborts both of
its sides with RST (SO_LINGER 0). Listens on 127.0.0.1:LISTEN_PORT, forwards to
127.0.0.1:TARGET_PORT, prints "reset N" for each reset, and exits by itself after LIFETIME
seconds.

    python3 reset_proxy.py LISTEN_PORT TARGET_PORT MEAN SEED LIFETIME
"""
import asyncio
import random
import socket
import struct
import sys


async def main(listen_port, target_port, mean, seed, lifetime):
    rng = random.Random(seed)
    pairs = set()

    async def pipe(reader, writer):
        try:
            while True:
                data = await reader.read(65536)
                if not data:
                    break
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()

    async def handle(client_reader, client_writer):
        try:
            server_reader, server_writer = await asyncio.open_connection("127.0.0.1", target_port)
        except OSError:
            client_writer.close()
            return
        pair = (client_writer, server_writer)
        pairs.add(pair)
        try:
            await asyncio.gather(pipe(client_reader, server_writer), pipe(server_reader, client_writer))
        finally:
            pairs.discard(pair)

    def abort(writer):
        sock = writer.get_extra_info("socket")
        if sock is not None:
            try:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            except OSError:
                pass
        writer.transport.abort()

    async def resetter():
        count = 0
        while True:
            await asyncio.sleep(rng.uniform(0.5 * mean, 1.5 * mean))
            if not pairs:
                continue
            pair = rng.choice(sorted(pairs, key=id))
            pairs.discard(pair)
            for writer in pair:
                abort(writer)
            count += 1
            print(f"reset {count}", flush=True)

    server = await asyncio.start_server(handle, "127.0.0.1", listen_port)
    task = asyncio.create_task(resetter())
    await asyncio.sleep(lifetime)
    task.cancel()
    server.close()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])))
