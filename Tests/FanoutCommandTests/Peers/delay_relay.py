"""A TCP relay that gives loopback a length: every chunk of bytes read from either side reaches the
other side DELAY_MS milliseconds after it arrived (one way: an 80 ms round trip is --delay-ms 40),
in order. With --bandwidth each direction is also a link of that many bytes a second: a chunk
waits its turn and takes len / bandwidth seconds to cross, then the delay. At most --max-held
bytes wait in each direction; past that the relay stops reading that side (as a full TCP window
would). When one side ends its sending, the other is sent an end too once the bytes held before it
are delivered; a connection is closed when both ways have ended, or at once if a side fails.

Listens on 127.0.0.1:0 (or --listen HOST:PORT), prints "listening on HOST:PORT" (and writes it to
--ready-file, for a reader that cannot read a running program's output), and relays each
connection to --target HOST:PORT until SIGTERM or SIGINT.

    python3 delay_relay.py --target 127.0.0.1:8080 --delay-ms 40 [--bandwidth BYTES_PER_S]
"""
import argparse
import asyncio
import collections
import os
import signal
import sys


class Direction:
    """One way of one connection: what `reader` reads, `writer` writes when it is due."""

    def __init__(self, reader, writer, delay, bandwidth, max_held):
        self.reader = reader
        self.writer = writer
        self.delay = delay
        self.bandwidth = bandwidth
        self.max_held = max_held
        self.chunks = collections.deque()  # (due, bytes), or (due, None) for the end
        self.held = 0
        self.link_free = 0.0  # when the link has sent every byte given to it so far
        self.queued = asyncio.Event()
        self.room = asyncio.Event()
        self.room.set()

    def due(self, size, now):
        if self.bandwidth:
            self.link_free = max(now, self.link_free) + size / self.bandwidth
            return self.link_free + self.delay
        return now + self.delay

    async def read(self):
        loop = asyncio.get_running_loop()
        try:
            while True:
                await self.room.wait()
                data = await self.reader.read(65536)
                if not data:
                    break
                self.chunks.append((self.due(len(data), loop.time()), data))
                self.held += len(data)
                if self.held > self.max_held:
                    self.room.clear()
                self.queued.set()
        except OSError:
            pass  # a reset is an end too
        finally:
            self.chunks.append((self.due(0, loop.time()), None))
            self.queued.set()

    async def write(self):
        loop = asyncio.get_running_loop()
        while True:
            await self.queued.wait()
            wait = self.chunks[0][0] - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            # Every chunk due by now goes in one write: due times only grow, so order holds.
            now = loop.time()
            batch = []
            ended = False
            while self.chunks and self.chunks[0][0] <= now:
                data = self.chunks.popleft()[1]
                if data is None:
                    ended = True
                    break
                batch.append(data)
            if not self.chunks:
                self.queued.clear()
            if batch:
                self.writer.writelines(batch)
                await self.writer.drain()
                self.held -= sum(map(len, batch))
                if self.held <= self.max_held:
                    self.room.set()
            if ended:
                if self.writer.can_write_eof():
                    self.writer.write_eof()
                return


def address(text):
    host, _, port = text.rpartition(":")
    return host or "127.0.0.1", int(port)


async def main(arguments):
    target = address(arguments.target)
    delay = arguments.delay_ms / 1000
    handlers = set()  # one task a connection
    ways = set()  # each connection's reading and writing tasks, cancelled to stop

    async def relay(client_reader, client_writer):
        handlers.add(asyncio.current_task())
        server_writer = None
        try:
            server_reader, server_writer = await asyncio.open_connection(*target)
            tasks = tuple(
                asyncio.create_task(coroutine)
                for way in (
                    Direction(client_reader, server_writer, delay, arguments.bandwidth, arguments.max_held),
                    Direction(server_reader, client_writer, delay, arguments.bandwidth, arguments.max_held),
                )
                for coroutine in (way.read(), way.write())
            )
            ways.add(tasks)
            try:
                # Until both ways have delivered their end, or one fails.
                await asyncio.wait(tasks[1::2], return_when=asyncio.FIRST_EXCEPTION)
            finally:
                ways.discard(tasks)
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
        except OSError as error:
            print(f"relay to {target[0]}:{target[1]}: {error}", file=sys.stderr, flush=True)
        finally:
            for writer in (client_writer, server_writer):
                if writer is not None:
                    writer.close()
            handlers.discard(asyncio.current_task())

    host, port = address(arguments.listen)
    server = await asyncio.start_server(relay, host, port)
    line = "listening on %s:%d\n" % server.sockets[0].getsockname()[:2]
    sys.stdout.write(line)
    sys.stdout.flush()
    if arguments.ready_file:
        # Written whole under another name, then renamed: a reader never sees half a line.
        with open(arguments.ready_file + ".part", "w") as file:
            file.write(line)
        os.replace(arguments.ready_file + ".part", arguments.ready_file)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for number in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(number, stop.set)
    # A parent may have them blocked (a swift-testing run's children inherit its threads' mask).
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    await stop.wait()
    server.close()
    # Python 3.11 reports a cancelled connection handler as an error, so only its ways are
    # cancelled and it is left to end.
    for tasks in list(ways):
        for task in tasks:
            task.cancel()
    if handlers:
        await asyncio.wait(handlers, timeout=2)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="A TCP relay that delays every byte each way.")
    parser.add_argument("--target", required=True, help="HOST:PORT to relay each connection to")
    parser.add_argument("--delay-ms", type=float, required=True, help="one-way delay in milliseconds")
    parser.add_argument("--bandwidth", type=float, default=0, help="bytes a second each way (0: unlimited)")
    parser.add_argument("--max-held", type=int, default=16 << 20, help="bytes held each way before reading stops")
    parser.add_argument("--listen", default="127.0.0.1:0", help="HOST:PORT to listen on")
    parser.add_argument("--ready-file", help="also write the listening line to this file")
    asyncio.run(main(parser.parse_args()))
