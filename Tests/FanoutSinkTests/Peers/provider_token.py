"""Signs an APNs provider token with PyJWT (PyPI), an ES256 implementation nobody here wrote.

    python3 provider_token.py KEY.p8 KEY_ID TEAM_ID IAT
"""
import sys

import jwt

key_file, key_id, team_id, issued_at = sys.argv[1:5]
with open(key_file) as f:
    key = f.read()
print(jwt.encode({"iss": team_id, "iat": int(issued_at)}, key, algorithm="ES256", headers={"kid": key_id}))
