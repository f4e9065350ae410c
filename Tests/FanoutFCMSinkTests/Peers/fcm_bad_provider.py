"""A planted bad FCM provider: every fault the FCM sink's card judges, each a known number of
times, over HTTP/1.1 (Python's http.client) with access tokens from the sink's token endpoint
(google-auth, as firebase-admin gets them).

usage: fcm_bad_provider.py CREDENTIALS HOST PORT < plan.json

plan.json names the tokens: {"registered": [8 tokens], "unregistered": "u"}. The sink serves
project fanout-test with a quota of 11 messages a window. Prints one JSON line a send:
{"step": ..., "status": N}. The faults, and what each plants:

  churn            a connection closed after one send, then another opened;
                   a send asking for `connection: close`, then another           2
  access-token     two more tokens fetched at once after the first              2
  bearer           no bearer; a bearer never issued; that bearer again          3
  duplicate        one message sent twice, both answered 200                    1
  permanent        an unregistered token sent twice more; a malformed
                   message sent once more                                      3
  fast-retry       a token refused by the quota sent again at once              1
  quota-ignored    a send 1.5 s after the window's first 429                    1
"""
import http.client
import json
import sys
import time

from google.auth.transport.requests import Request
from google.oauth2 import service_account

PATH = "/v1/projects/fanout-test/messages:send"
SCOPES = ["https://www.googleapis.com/auth/firebase.messaging"]


def send(connection, step, body, bearer, close=False):
    headers = {"content-type": "application/json"}
    if close:
        headers["connection"] = "close"
    if bearer is not None:
        headers["authorization"] = "Bearer " + bearer
    connection.request("POST", PATH, body=json.dumps(body), headers=headers)
    response = connection.getresponse()
    response.read()
    print(json.dumps({"step": step, "status": response.status}), flush=True)
    return response.status


def message(token, **data):
    return {"message": {"token": token, "data": {k: str(v) for k, v in data.items()}}}


def main():
    credential_path, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    plan = json.load(sys.stdin)
    registered, unregistered = plan["registered"], plan["unregistered"]

    credentials = service_account.Credentials.from_service_account_file(credential_path, scopes=SCOPES)
    credentials.refresh(Request())
    bearer = credentials.token

    # Churn: one send on a connection of its own, closed, and the next connection opened.
    first = http.client.HTTPConnection(host, port, timeout=30)
    send(first, "churn", message(registered[0]), bearer)
    first.close()
    time.sleep(0.2)
    # A send that asks the sink to close its connection after it: closed at the provider's word.
    second = http.client.HTTPConnection(host, port, timeout=30)
    send(second, "connection-close", message(registered[0], n="close"), bearer, close=True)
    second.close()
    time.sleep(0.2)
    connection = http.client.HTTPConnection(host, port, timeout=30)

    # Two tokens fetched while the first still has an hour to live.
    for _ in range(2):
        credentials.refresh(Request())
    bearer = credentials.token

    send(connection, "no-bearer", message(registered[1]), None)
    send(connection, "unknown-bearer", message(registered[1]), "ya29.never-issued")
    send(connection, "unknown-bearer-again", message(registered[1]), "ya29.never-issued")

    send(connection, "delivered", message(registered[1], n=1), bearer)
    send(connection, "duplicate", message(registered[1], n=1), bearer)

    send(connection, "unregistered", message(unregistered), bearer)
    send(connection, "unregistered-again", message(unregistered), bearer)
    send(connection, "unregistered-other-message", message(unregistered, n=2), bearer)

    malformed = {"message": {"token": registered[2], "topic": "news"}}
    send(connection, "malformed", malformed, bearer)
    send(connection, "malformed-again", malformed, bearer)

    # The quota: 11 a window; 2 + 2 + 3 + 2 counted so far (401s are refused before it).
    for index, token in enumerate(registered[3:5]):
        send(connection, f"filling-{index}", message(token), bearer)
    send(connection, "over-quota", message(registered[7]), bearer)
    send(connection, "over-quota-again", message(registered[7]), bearer)
    time.sleep(1.5)
    send(connection, "quota-ignored", message(registered[2]), bearer)
    connection.close()


if __name__ == "__main__":
    main()
