"""PyJWT (with cryptography) checks an assertion Fanout signed: its RS256 signature against the
account's public key, its audience, its times; prints its header and claims as JSON.

usage: verify_assertion.py PUBLIC_KEY_PEM AUDIENCE < JWT
"""
import json
import sys

import jwt

public_key = open(sys.argv[1]).read()
token = sys.stdin.read().strip()
claims = jwt.decode(token, public_key, algorithms=["RS256"], audience=sys.argv[2],
                    options={"require": ["iss", "aud", "iat", "exp"]})
print(json.dumps({"header": jwt.get_unverified_header(token), "claims": claims}, sort_keys=True))
