#!/usr/bin/env bash
# Real endpoints (issue #34), timed: `fanout send --generate 10` against each way a connection
# can fail to reach an answer, with the wall time from start to exit (target: within 1.5 s,
# the refused one with --connect-timeout 1s), the exit status (5) and the cause on standard
# error (the expired certificate is made with PyPI's cryptography), beside curl against the
# same server in the same run (its wall time, exit status and first error line); then `fanout probe` against `fanout sink --latency fixed:80ms --initial-streams 1
# --max-streams 500` (target: processing 77–83 ms, streams 1 then 500).
#
#   [FANOUT=BINARY] scripts/bench/endpoints.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib/peers.sh

release_fanout
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$work/key.pem" \
    -out "$work/cert.pem" -days 30 -subj /CN=localhost -addext "subjectAltName=DNS:localhost" 2>/dev/null
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$work/okey.pem" \
    -out "$work/ocert.pem" -days 30 -subj /CN=other.example -addext "subjectAltName=DNS:other.example" 2>/dev/null
# An expired one (valid for September 2020), made with PyPI's cryptography.
python3 - "$work" <<'PY'
import datetime, sys
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
key = ec.generate_private_key(ec.SECP256R1())
name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
start = datetime.datetime(2020, 9, 1, tzinfo=datetime.timezone.utc)
cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number()).not_valid_before(start)
        .not_valid_after(start + datetime.timedelta(days=30))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .sign(key, hashes.SHA256()))
open(sys.argv[1] + "/ekey.pem", "wb").write(key.private_bytes(
    serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
open(sys.argv[1] + "/ecert.pem", "wb").write(cert.public_bytes(serialization.Encoding.PEM))
PY
mkdir -p "$work/www"

tls_port=$(free_port)
nghttpd -d "$work/www" "$tls_port" "$work/key.pem" "$work/cert.pem" >/dev/null 2>&1 &
pids+=($!)
other_port=$(free_port)
nghttpd -d "$work/www" "$other_port" "$work/okey.pem" "$work/ocert.pem" >/dev/null 2>&1 &
pids+=($!)
expired_port=$(free_port)
nghttpd -d "$work/www" "$expired_port" "$work/ekey.pem" "$work/ecert.pem" >/dev/null 2>&1 &
pids+=($!)
http1_port=$(free_port)
python3 -m http.server "$http1_port" --bind 127.0.0.1 >/dev/null 2>&1 &
pids+=($!)
alpn_port=$(free_port)
openssl s_server -accept "$alpn_port" -cert "$work/cert.pem" -key "$work/key.pem" -alpn http/1.1 -www -quiet \
    >/dev/null 2>&1 &
pids+=($!)
closed_port=$(free_port)
for port in "$tls_port" "$other_port" "$expired_port" "$http1_port" "$alpn_port"; do wait_port "$port"; done

printf '%-34s %8s %5s  %s\n' case seconds exit "standard error"
# timed NAME COMMAND...: the command's wall time, exit status and the first line of its stderr
# (matching $pattern) in one row.
timed() {
    local name=$1 started ended status=0
    shift
    started=$(date +%s.%N)
    "$@" >/dev/null 2>"$work/err" || status=$?
    ended=$(date +%s.%N)
    printf '%-34s %8.3f %5d  %s\n' "$name" "$(echo "$ended - $started" | bc)" "$status" \
        "$(grep -m1 "$pattern" "$work/err" | cut -c1-110)"
}
# attempt NAME CURL-ARGS -- FANOUT-ARGS: fanout send, then curl against the same server.
attempt() {
    local name=$1 curl_args=()
    shift
    while [ "$1" != -- ]; do curl_args+=("$1"); shift; done
    shift
    pattern='could not reach' timed "$name" "$fanout" send --generate 10 --template fixtures/poll.json \
        --topic com.example.app --output "$work/out" "$@"
    pattern='curl' timed "  curl, same server" curl -sS --max-time 10 -o /dev/null "${curl_args[@]}"
}
attempt "closed port (--connect-timeout 1s)" --http2-prior-knowledge "http://127.0.0.1:$closed_port" \
    -- --endpoint "http://127.0.0.1:$closed_port" --connect-timeout 1s
attempt "a .invalid name" --http2 https://fanout-bench.invalid -- --endpoint https://fanout-bench.invalid
attempt "self-signed, no --ca-file" --http2 "https://localhost:$tls_port" -- --endpoint "https://localhost:$tls_port"
attempt "a certificate for another name" --http2 --cacert "$work/ocert.pem" "https://localhost:$other_port" \
    -- --endpoint "https://localhost:$other_port" --ca-file "$work/ocert.pem"
attempt "an expired certificate" --http2 --cacert "$work/ecert.pem" "https://localhost:$expired_port" \
    -- --endpoint "https://localhost:$expired_port" --ca-file "$work/ecert.pem"
attempt "HTTP/1.1 (python http.server)" --http2-prior-knowledge "http://127.0.0.1:$http1_port" \
    -- --endpoint "http://127.0.0.1:$http1_port"
attempt "ALPN http/1.1 (openssl s_server)" --http2 --cacert "$work/cert.pem" "https://localhost:$alpn_port" \
    -- --endpoint "https://localhost:$alpn_port" --ca-file "$work/cert.pem"

sink_port=$(free_port)
"$fanout" sink --listen "127.0.0.1:$sink_port" --no-auth --latency fixed:80ms --initial-streams 1 \
    --max-streams 500 >/dev/null 2>&1 &
pids+=($!)
wait_port "$sink_port"
printf '%064x\n' 1 2 3 >"$work/tokens.txt"
echo
"$fanout" probe "http://127.0.0.1:$sink_port" --tokens "$work/tokens.txt" --topic com.example.app \
    --output "$work/probe"
"$fanout" plan --devices 50M --deadline 5m --probe "$work/probe/probe.json"
# The peer: h2load's request times against the same sink, 20 one at a time on one connection.
echo
h2load -n 20 -c 1 -m 1 -t 1 -d fixtures/poll.json -H 'apns-topic: com.example.app' -H 'apns-push-type: alert' \
    "http://127.0.0.1:$sink_port/3/device/$(printf '%064x' 1)" | grep -E "status codes|time for request"
