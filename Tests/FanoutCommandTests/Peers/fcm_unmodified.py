"""firebase-admin as shipped, reaching `fanout sink --service fcm` at fcm.googleapis.com:443.

usage: unshare -rnm python3 fcm_unmodified.py FANOUT FOLDER SENDER < plan.json

Run in new user, network and mount namespaces: the hosts file seen here (bind-mounted over
/etc/hosts) resolves fcm.googleapis.com to 127.0.0.1, loopback is brought up, and the sink listens
on port 443 with a self-signed certificate naming fcm.googleapis.com and a service-account file
whose token_uri is its token endpoint; it ends with this script (PR_SET_PDEATHSIG) and within
150 s in any case (--duration). SENDER (Tests/FanoutFCMSinkTests/Peers/fcm_send.py) then
runs the plan with FCM's URL untouched. Prints one JSON object: the SDK's exit status and output,
and the sink's standard output and error (its summary after SIGTERM).
"""
import ctypes
import fcntl
import json
import os
import select
import signal
import socket
import struct
import subprocess
import sys

SIOCSIFFLAGS = 0x8914
PR_SET_PDEATHSIG = 1


def die_with_parent():
    """In the sink, before it runs: SIGKILL when this script ends, however it ends (a test that
    times out kills the script; the sink must not outlive it)."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
IFF_UP, IFF_LOOPBACK, IFF_RUNNING = 0x1, 0x8, 0x40


def main():
    fanout, folder, sender = sys.argv[1:4]
    plan = sys.stdin.read()
    hosts = os.path.join(folder, "hosts")
    with open(hosts, "w") as file:
        file.write("127.0.0.1 fcm.googleapis.com\n")
    subprocess.run(["mount", "--bind", hosts, "/etc/hosts"], check=True)
    # A new network namespace's loopback is down: bring it up (what `ip link set lo up` does).
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as control:
        fcntl.ioctl(control, SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", IFF_UP | IFF_LOOPBACK | IFF_RUNNING))
    sink = subprocess.Popen(
        [fanout, "sink", "--service", "fcm", "--listen", "127.0.0.1:443", "--tls-self-signed",
         os.path.join(folder, "tls"), "--fcm-credentials-out", folder, "--fcm-unregistered", "30%",
         "--duration", "150s"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=die_with_parent)
    ready, _, _ = select.select([sink.stdout], [], [], 30)
    first = sink.stdout.readline() if ready else ""
    if not first.startswith("listening on"):
        sink.kill()
        _, errors = sink.communicate(timeout=30)
        raise SystemExit(f"the sink did not listen within 30 s: {first!r} {errors}")
    certificate = os.path.join(folder, "tls", "cert.pem")
    environment = dict(os.environ, REQUESTS_CA_BUNDLE=certificate, SSL_CERT_FILE=certificate)
    try:
        sdk = subprocess.run(
            [sys.executable, sender, os.path.join(folder, "service-account.json"), "-"],
            input=plan, capture_output=True, text=True, env=environment, timeout=120)
    finally:
        sink.send_signal(signal.SIGTERM)
        try:
            output, errors = sink.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            sink.kill()
            raise
    print(json.dumps({
        "sdk_status": sdk.returncode, "sdk_output": sdk.stdout, "sdk_errors": sdk.stderr,
        "sink_output": first + output, "sink_errors": errors,
    }))


if __name__ == "__main__":
    main()
