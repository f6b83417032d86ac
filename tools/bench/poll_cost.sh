#!/usr/bin/env bash
# Poll cost: how many requests per second one simulated node receives from
# Solgate's poller, with worker_processes 1 and 4, idle and under envelope
# traffic (getBalance at processed and finalized commitment, which lets the
# traffic gate skip getSlot polls).  Also the getHealth polls per second:
# one per 400 ms tick, whatever the number of workers (the figure
# t/050-slot-tracking.t used to measure).  Loopback only; stops what it
# starts.
#
#   tools/bench/poll_cost.sh [seconds]      (default 10 s per measurement)
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
secs=${1:-10}
nginx=${SOLGATE_NGINX:-/usr/sbin/nginx}
unset NGINX   # nginx reads $NGINX as a list of inherited sockets
sim=$root/build/bin/solana-sim
module=$root/build/modules/ngx_http_solgate_module.so
work=$root/build/bench/poll
sim_port=${POLL_SIM_PORT:-19901}
gw_port=${POLL_GW_PORT:-19900}
sim_pid=

cleanup() {
    [ -f "$work/logs/nginx.pid" ] && kill -QUIT "$(cat "$work/logs/nginx.pid")" 2>/dev/null || true
    [ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null || true
    wait 2>/dev/null || true
}
trap cleanup EXIT INT TERM

mkdir -p "$work/logs" "$work/conf"
cp "$root/conf/solgate_proxy.conf" "$work/conf/"
cat > "$work/traffic.lua" <<'LUA'
local bodies = {
  '{"jsonrpc":"2.0","id":1,"method":"getBalance","params":["83astBRguLMdt2h5U1Tpdq5tjFoJ6noeGwaY3mDLVcri",{"commitment":"processed"}]}',
  '{"jsonrpc":"2.0","id":2,"method":"getBalance","params":["83astBRguLMdt2h5U1Tpdq5tjFoJ6noeGwaY3mDLVcri",{"commitment":"finalized"}]}',
}
local n = 0
request = function()
  n = n + 1
  return wrk.format("POST", "/", {["Content-Type"] = "application/json"}, bodies[n % 2 + 1])
end
LUA

"$sim" --port "$sim_port" --quiet > "$work/sim.log" 2>&1 &
sim_pid=$!
for _ in $(seq 50); do curl -s -o /dev/null "127.0.0.1:$sim_port/_sim/stats" && break; sleep 0.1; done

stat() {  # poller_total and the poller's getSlot and getHealth counts
    curl -s "127.0.0.1:$sim_port/_sim/stats" | perl -MJSON::PP -e '
        my $s = decode_json(join "", <STDIN>);
        printf "%d %d %d\n", $s->{poller_total}, $s->{poller_calls}{getSlot} // 0,
            $s->{poller_calls}{getHealth} // 0'
}

measure() {  # workers traffic(0|1) -> "total/s getSlot/s"
    local workers=$1 traffic=$2
    cat > "$work/conf/nginx.conf" <<CONF
load_module $module;
worker_processes $workers;
error_log logs/error.log warn;
pid logs/nginx.pid;
events { worker_connections 1024; }
http {
    access_log off;
    solgate_network bench {
        cluster mainnet-beta;
        upstream node http://127.0.0.1:$sim_port;
    }
    server {
        listen 127.0.0.1:$gw_port;
        location / { solgate_pass bench; include solgate_proxy.conf; }
        location @solgate_retry { solgate_pass bench; include solgate_proxy.conf; }
    }
}
CONF
    "$nginx" -p "$work/" -c conf/nginx.conf 2> "$work/logs/start.log"
    sleep 2
    curl -s -o /dev/null "127.0.0.1:$sim_port/_sim/reset"
    local start=$(date +%s.%N)
    if [ "$traffic" = 1 ]; then
        wrk -t1 -c4 -d"${secs}s" -s "$work/traffic.lua" "http://127.0.0.1:$gw_port/" > "$work/wrk.out"
    else
        sleep "$secs"
    fi
    local end=$(date +%s.%N)
    read -r total getslot gethealth < <(stat)
    kill -QUIT "$(cat "$work/logs/nginx.pid")"
    while [ -f "$work/logs/nginx.pid" ]; do sleep 0.1; done
    perl -e 'my $t = $ARGV[3] - $ARGV[4]; printf "%.2f %.2f %.2f\n", $ARGV[0] / $t, $ARGV[1] / $t, $ARGV[2] / $t' \
        "$total" "$getslot" "$gethealth" "$end" "$start"
}

printf '%-8s %-8s %12s %16s %18s\n' workers traffic "polls/s" "getSlot polls/s" "getHealth polls/s"
for workers in 1 4; do
    for traffic in 0 1; do
        read -r rate getslot gethealth < <(measure "$workers" "$traffic")
        printf '%-8s %-8s %12s %16s %18s\n' "$workers" "$([ "$traffic" = 1 ] && echo envelope || echo idle)" \
            "$rate" "$getslot" "$gethealth"
    done
done
