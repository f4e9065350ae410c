"""Runs a command on a pseudo-terminal, as a person at a terminal would, and prints what it
wrote there (standard output and error together) after it ends.

    python3 in_terminal.py SECONDS PROGRAM [ARGUMENTS...]

Exits with the command's status; kills it and exits 124 after SECONDS.
"""
import os
import pty
import select
import signal
import sys
import time

limit = float(sys.argv[1])
pid, terminal = pty.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])

written = b""
deadline = time.monotonic() + limit
while time.monotonic() < deadline:
    ready, _, _ = select.select([terminal], [], [], 0.5)
    if not ready:
        continue
    try:
        data = os.read(terminal, 65536)
    except OSError:  # EIO: the command closed the terminal (it ended)
        break
    if not data:
        break
    written += data
else:
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    sys.stdout.buffer.write(written)
    sys.exit(124)

_, status = os.waitpid(pid, 0)
sys.stdout.buffer.write(written)
sys.exit(os.waitstatus_to_exitcode(status))
