"""firebase-admin, unmodified but for FCM's host, sending through a Fanout FCM sink.

usage: fcm_send.py CREDENTIALS BASE_URL < plan.json

CREDENTIALS is the service-account.json the sink wrote (its token_uri is the sink's token
endpoint); BASE_URL is the sink, e.g. https://127.0.0.1:PORT, put in FCM's URL in place of
fcm.googleapis.com, or "-" for the SDK as shipped (fcm.googleapis.com resolved to the sink by the
hosts file: Tests/FanoutCommandTests/Peers/fcm_unmodified.py). Either way the sink's certificate
is trusted through REQUESTS_CA_BUNDLE and SSL_CERT_FILE. The plan names the calls to make:

  {"calls": [{"call": "send", "token": "t", "dry_run": false},
             {"call": "send_each", "tokens": ["a", "b"]},
             {"call": "send_each_for_multicast", "tokens": ["a", "b"]},
             {"call": "send_each_async", "tokens": ["a", "b"]}]}

Prints one JSON line a call: {"call": ..., "results": [["ok", NAME] or [EXCEPTION, MESSAGE]]}.
With FANOUT_HOLD=1 it then prints "held" and keeps the app (its connection pools) alive, as an
app server would, until stopped (SIGTERM) or 120 s pass.
send, send_each and send_each_for_multicast go over HTTP/1.1 (requests); send_each_async over
HTTP/2 (httpx, ALPN h2).
"""
import asyncio
import json
import os
import sys
import time

import firebase_admin
import requests
from firebase_admin import _http_client, credentials, messaging


def outcome(response):
    if response.success:
        return ["ok", response.message_id]
    return [type(response.exception).__name__, str(response.exception)]


def main():
    credential_path, base_url = sys.argv[1], sys.argv[2]
    if base_url != "-":
        # The host is the one thing changed: FCM's URL with the sink in place of fcm.googleapis.com.
        messaging._MessagingService.FCM_URL = base_url + "/v1/projects/{0}/messages:send"
    app = firebase_admin.initialize_app(credentials.Certificate(credential_path))
    if base_url != "-":
        # The SDK mounts its pool of 100 connections on FCM's host alone
        # (`_MessagingService.__init__`): moved with the host, so that the sink sees the
        # connections the SDK as shipped makes. Without it requests' default pool of 10 serves,
        # and send_each's thread a message can open more than 10 at once and close the rest
        # after one send each (docs/fcm.md, "Pointing an SDK at another host").
        service = messaging._get_messaging_service(app)
        adapter = requests.adapters.HTTPAdapter(
            pool_connections=100, pool_maxsize=100, max_retries=_http_client.DEFAULT_RETRY_CONFIG
        )
        service._client.session.mount(base_url, adapter)
    plan = json.load(sys.stdin)
    for step in plan["calls"]:
        call = step["call"]
        if call == "send":
            message = messaging.Message(token=step["token"], data={"campaign": "fanout"})
            try:
                results = [["ok", messaging.send(message, dry_run=step.get("dry_run", False), app=app)]]
            except Exception as error:  # the SDK's own exception is the result
                results = [[type(error).__name__, str(error)]]
        elif call == "send_each":
            messages = [messaging.Message(token=token, data={"n": str(i)}) for i, token in enumerate(step["tokens"])]
            results = [outcome(r) for r in messaging.send_each(messages, app=app).responses]
        elif call == "send_each_for_multicast":
            message = messaging.MulticastMessage(tokens=step["tokens"], notification=messaging.Notification("Poll", "Vote"))
            results = [outcome(r) for r in messaging.send_each_for_multicast(message, app=app).responses]
        elif call == "send_each_async":
            messages = [messaging.Message(token=token, data={"n": str(i)}) for i, token in enumerate(step["tokens"])]
            batch = asyncio.run(messaging.send_each_async(messages, dry_run=False, app=app))
            results = [outcome(r) for r in batch.responses]
        else:
            raise SystemExit(f"unknown call {call}")
        print(json.dumps({"call": call, "results": results}), flush=True)
    if os.environ.get("FANOUT_HOLD") == "1":
        print("held", flush=True)
        time.sleep(120)


if __name__ == "__main__":
    main()
