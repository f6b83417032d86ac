#!/usr/bin/env bash
# `make run`: three simulated Solana nodes and nginx with
# conf/solgate-demo.conf on 127.0.0.1:8899, in the foreground.
# Ctrl-C stops everything.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
nginx=${SOLGATE_NGINX:-/usr/sbin/nginx}
unset NGINX   # nginx reads $NGINX as a list of inherited sockets
sim=$root/build/bin/solana-sim
demo=$root/build/demo
ports=(18901 18902 18903)
ws_ports=(18911 18912 18913)   # their pubsub ports
names=(node-a node-b node-c)
pids=()
nginx_pid=

# Background children of a script ignore SIGINT, so Ctrl-C reaches only
# this shell: stop nginx (gracefully) and the nodes from here.
stop_all() {
    trap - EXIT INT TERM
    if [ -n "$nginx_pid" ]; then
        kill -QUIT "$nginx_pid" 2>/dev/null || true
        for _ in $(seq 50); do
            kill -0 "$nginx_pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "$nginx_pid" 2>/dev/null || true
    fi
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    echo "solgate demo: stopped"
}
trap stop_all EXIT INT TERM

# A demo already running keeps its pid file and logs: nothing here is
# touched before its ports are known to be free.
# (a pid file left by a demo that did not stop names another process, or
# none, once its pid is reused)
if pid=$(cat "$demo/nginx.pid" 2>/dev/null) && kill -0 "$pid" 2>/dev/null &&
    tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q 'conf/solgate-demo\.conf'; then
    echo "solgate demo: already running (nginx pid $pid, build/demo/nginx.pid);" \
         "stop it first (Ctrl-C where it runs)" >&2
    trap - EXIT
    exit 1
fi
for port in 8899 8900 "${ports[@]}" "${ws_ports[@]}"; do
    if (exec 3<> "/dev/tcp/127.0.0.1/$port") 2> /dev/null; then
        echo "solgate demo: 127.0.0.1:$port is in use by another process;" \
             "the demo needs 8899, 8900, ${ports[*]} and ${ws_ports[*]}" >&2
        trap - EXIT
        exit 1
    fi
done

mkdir -p "$demo"
rm -f "$demo/nginx.pid"

for i in "${!ports[@]}"; do
    "$sim" --port "${ports[$i]}" --ws-port "${ws_ports[$i]}" --name "${names[$i]}" --quiet \
        > "$demo/${names[$i]}.log" 2>&1 &
    pids+=($!)
done

# started PID TRIES CHECK...: true once CHECK holds, polled every 0.1 s
# up to TRIES times while PID runs; false when PID ends or time runs out.
started() {
    local pid=$1 tries=$2
    shift 2
    for _ in $(seq "$tries"); do
        kill -0 "$pid" 2>/dev/null || return 1
        "$@" && return 0
        sleep 0.1
    done
    return 1
}

# A node is up when its own process says it listens (its log is new: a
# leftover simulator holding the port would answer the port all the same).
for i in "${!ports[@]}"; do
    if ! started "${pids[$i]}" 50 \
        grep -q "^solana-sim ${names[$i]} listening on" "$demo/${names[$i]}.log"; then
        echo "solgate demo: ${names[$i]} did not start on 127.0.0.1:${ports[$i]}:" >&2
        tail -n 3 "$demo/${names[$i]}.log" >&2
        exit 1
    fi
done

"$nginx" -p "$root/" -c conf/solgate-demo.conf -t -q

"$nginx" -p "$root/" -c conf/solgate-demo.conf &
nginx_pid=$!

# the banner once nginx listens, not before: it writes its pid file after
# binding its ports (one in use makes it give up after a few tries)
wrote_pid() { [ "$(cat "$demo/nginx.pid" 2>/dev/null)" = "$nginx_pid" ]; }
if ! started "$nginx_pid" 100 wrote_pid; then
    echo "solgate demo: nginx did not start on 127.0.0.1:8899: see" \
         "build/demo/error.log and the lines above" >&2
    exit 1
fi

cat <<'EOM'
solgate demo: nginx on 127.0.0.1:8899 (RPC) and 8900 (subscriptions) over
simulated nodes on 18901-18903 (pubsub 18911-18913)
  curl -s 127.0.0.1:8899 -d '{"jsonrpc":"2.0","id":1,"method":"getSlot"}'
  curl -s 127.0.0.1:8899 -d '{"jsonrpc":"2.0","id":1,"method":"getGenesisHash"}'
  fault a node:  curl -s '127.0.0.1:18902/_sim/fault/http_status?code=502'
logs: build/demo/   stop: Ctrl-C
EOM

wait "$nginx_pid"
