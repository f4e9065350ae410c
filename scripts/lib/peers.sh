# Shared by the benchmark scripts that run programs side by side: a free loopback port, a wait
# for a listener, and background processes stopped (with the work folder removed) on exit.
# Source it after `cd` to the repository; it checks for h2load and nghttpd and sets `work` (a
# temporary folder) and `pids`, and sources lib/build.sh (the release build it measures).

command -v h2load >/dev/null && command -v nghttpd >/dev/null || {
    echo "needs h2load and nghttpd: apt-get install -y nghttp2-client nghttp2-server" >&2
    exit 2
}

work=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

. scripts/lib/build.sh

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# Waits up to 10 s for something to accept connections on port $1.
wait_port() {
    for _ in $(seq 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
        sleep 0.1
    done
    echo "nothing listens on port $1" >&2
    exit 1
}

# Starts nghttpd (h2c) serving a one-file folder; sets nghttpd_port.
start_nghttpd() {
    mkdir -p "$work/www" && printf '{"ok":true}' >"$work/www/index.html"
    nghttpd_port=$(free_port)
    nghttpd --no-tls -d "$work/www" "$nghttpd_port" >/dev/null 2>&1 &
    pids+=($!)
    wait_port "$nghttpd_port"
}

# start_nginx [LINES]: nginx answering every path itself with 200 "ok" (a backend far faster
# than any wave here), without an access log, LINES added to its http block (another server);
# sets nginx_port once it listens.
start_nginx() {
    command -v nginx >/dev/null || { echo "needs nginx: apt-get install -y nginx" >&2; exit 2; }
    nginx_port=$(free_port)
    mkdir -p "$work/nginx"
    cat >"$work/nginx/nginx.conf" <<CONF
daemon off;
master_process off;
worker_processes 1;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $work/nginx/body;
    proxy_temp_path $work/nginx/proxy;
    fastcgi_temp_path $work/nginx/fastcgi;
    uwsgi_temp_path $work/nginx/uwsgi;
    scgi_temp_path $work/nginx/scgi;
    keepalive_requests 1000000;
    server { listen 127.0.0.1:$nginx_port; location / { return 200 "ok"; } }
    ${1:-}
}
CONF
    nginx -c "$work/nginx/nginx.conf" -p "$work/nginx" &
    pids+=($!)
    wait_port "$nginx_port"
}

# start_sink NAME [OPTION...]: `fanout sink` (the release build, lib/build.sh) with OPTIONS on a
# free loopback port, its output in $work/NAME.out; sets `sink_port` and `sink_pid` once it
# listens.
start_sink() {
    local name=$1
    shift
    sink_port=$(free_port)
    "$fanout" sink --listen "127.0.0.1:$sink_port" "$@" >"$work/$name.out" 2>/dev/null &
    sink_pid=$!
    pids+=("$sink_pid")
    wait_port "$sink_port"
}

# forget PID: a process stopped and waited for is not stopped again at exit (by then its
# number may be another process's).
forget() {
    local kept=() pid
    for pid in "${pids[@]}"; do [ "$pid" = "$1" ] || kept+=("$pid"); done
    pids=("${kept[@]}")
}

# start_admin_sink OUT [OPTION...]: `fanout sink --no-auth` with OPTIONS on port 0 and
# `--admin` on port 0, its output in OUT; sets `sink_pid`, `sink_port` and `admin_port` once it
# has printed both (within 10 s).
start_admin_sink() {
    local out=$1
    shift
    "$fanout" sink --listen 127.0.0.1:0 --admin 127.0.0.1:0 --no-auth "$@" >"$out" 2>/dev/null &
    sink_pid=$!
    pids+=("$sink_pid")
    sink_port="" admin_port=""
    for _ in $(seq 100); do
        sink_port=$(sed -n 's/^listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$out")
        admin_port=$(sed -n 's/^admin on 127.0.0.1:\([0-9]*\).*/\1/p' "$out")
        [ -n "$sink_port" ] && [ -n "$admin_port" ] && return 0
        sleep 0.1
    done
    echo "the sink printed no ports:" >&2
    cat "$out" >&2
    exit 1
}

# h2load_rate REQUESTS BODY URL SHAPE...: h2load's requests a second, REQUESTS of them with
# BODY, one thread, against URL (an APNs path: topic and push type set); every request must
# succeed and be answered 2xx.
h2load_rate() {
    local requests=$1 body=$2 url=$3 out
    shift 3
    out=$(h2load -n "$requests" "$@" -t 1 -d "$body" -H 'apns-topic: com.example.app' \
        -H 'apns-push-type: alert' "$url")
    grep -q "$requests succeeded, 0 failed" <<<"$out" || { echo "h2load: not every request succeeded:" >&2; echo "$out" >&2; exit 1; }
    grep -q "status codes: $requests 2xx" <<<"$out" || { echo "h2load: not every answer was 2xx:" >&2; echo "$out" >&2; exit 1; }
    awk '/^finished in/ {print $4}' <<<"$out"
}
