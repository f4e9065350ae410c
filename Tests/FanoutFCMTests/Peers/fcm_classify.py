#!/usr/bin/env python3
"""How firebase-admin classifies FCM error answers: the exception its send would raise.

Reads a JSON array on stdin, each item {"status": HTTP status, "body": the answer's body}, and
for each writes one line: the exception's class name, a tab, its message. The answer goes
through firebase-admin's own path for a failed send (`_MessagingService._handle_fcm_error` on a
requests HTTPError carrying the response), so the class is the one `messaging.send` raises and
`send_each` keeps in `SendResponse.exception` (docs/fcm.md, "How firebase-admin classifies
errors").
"""
import json
import sys

import requests
from firebase_admin import messaging

answers = json.load(sys.stdin)
for answer in answers:
    response = requests.Response()
    response.status_code = answer["status"]
    response._content = answer["body"].encode("utf-8")
    response.headers["content-type"] = "application/json; charset=UTF-8"
    error = requests.exceptions.HTTPError(response=response)
    service = messaging._MessagingService.__new__(messaging._MessagingService)
    exception = service._handle_fcm_error(error)
    print(f"{type(exception).__name__}\t{exception}")
