"""A push provider built on aioapns (PyPI), nobody here wrote: fans one notification out to N
generated device tokens over TLS with token auth (ES256 provider tokens), pointed at a sink
instead of api.push.apple.com, and prints what it measured of itself as JSON.

    python3 aioapns_provider.py PORT CA_FILE KEY.p8 KEY_ID TEAM_ID N [CONNECTIONS]

It sends one notification first (to the token 00…00), which opens its connection as a running
provider's would be; then the N, whose fan-out time it measures from its first send to its
last answer, as a provider's log says.
"""
import asyncio
import json
import ssl
import sys
import time

from aioapns import APNs, NotificationRequest
from aioapns.connection import APNsProductionClientProtocol

port, ca_file, key_file, key_id, team_id = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
count = int(sys.argv[6])
connections = int(sys.argv[7]) if len(sys.argv) > 7 else 4
MESSAGE = {"aps": {"alert": "hello"}}
# Notifications in flight at once: each worker sends its next when its last is answered.
WORKERS = 500
# aioapns connects to its class's host and port: the sink's instead.
APNsProductionClientProtocol.APNS_SERVER = "127.0.0.1"
APNsProductionClientProtocol.APNS_PORT = port


async def main():
    context = ssl.create_default_context(cafile=ca_file)
    context.set_alpn_protocols(["h2"])
    with open(key_file) as f:
        key = f.read()
    apns = APNs(key=key, key_id=key_id, team_id=team_id, topic="com.example.app", use_sandbox=False,
                ssl_context=context, max_connections=connections)
    # A provider's connection is open before a broadcast: one notification opens it (the sink
    # counts it, and its first request is the sink's start mark).
    warm = await apns.send_notification(NotificationRequest(device_token=f"{0:064x}", message=MESSAGE))
    assert warm.is_successful, warm.description
    tokens = iter(f"{index + 1:064x}" for index in range(count))
    results = []

    async def worker():
        for token in tokens:
            results.append(await apns.send_notification(NotificationRequest(device_token=token, message=MESSAGE)))

    started = time.monotonic()
    await asyncio.gather(*(worker() for _ in range(WORKERS)))
    elapsed = time.monotonic() - started
    accepted = sum(1 for result in results if result.is_successful)
    reasons = sorted({result.description for result in results if not result.is_successful})
    print(json.dumps({"sent": count, "accepted": accepted, "elapsed_seconds": elapsed, "reasons": reasons}))


asyncio.run(main())
