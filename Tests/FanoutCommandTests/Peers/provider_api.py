"""A stand-in for a provider's API, for the docs test: the page's sink triggers a broadcast with
`curl -s -X POST http://localhost:PORT/broadcast`, as it would your provider, and this answers
202 and starts the command after `--` (a `fanout send` to the sink) — a provider that fans the
broadcast out after answering its API, as real ones do.

    provider_api.py --port 8080 -- "$FANOUT" send --endpoint https://127.0.0.1:2197 …

It prints `listening on 127.0.0.1:PORT` once it listens (the docs test waits for that line), each
send's output goes to `provider-send.log` in the working folder, and it stops on SIGTERM or
SIGINT, stopping a send still running."""

import argparse
import http.server
import signal
import subprocess
import sys

parser = argparse.ArgumentParser()
parser.add_argument("--port", type=int, required=True)
parser.add_argument("command", nargs=argparse.REMAINDER)
arguments = parser.parse_args()
command = arguments.command[1:] if arguments.command[:1] == ["--"] else arguments.command
if not command:
    sys.exit("provider_api.py: give the command to run after --")
sends = []


class API(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        if self.path != "/broadcast":
            self.send_response(404)
            self.end_headers()
            return
        log = open("provider-send.log", "ab")
        sends.append(subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT))
        self.send_response(202)
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *_):
        pass


def stop(*_):
    for send in sends:
        if send.poll() is None:
            send.terminate()
    sys.exit(0)


# Started by the test process, it may inherit a mask blocking both (a blocked SIGTERM left it
# running after the page's shell ended, and the test waiting on it).
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
signal.signal(signal.SIGTERM, stop)
signal.signal(signal.SIGINT, stop)
server = http.server.HTTPServer(("127.0.0.1", arguments.port), API)
print(f"listening on 127.0.0.1:{arguments.port}", flush=True)
server.serve_forever()
