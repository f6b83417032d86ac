# Helpers for tools/bench/run.sh: configuration writers, process start and
# stop, /proc sampling.  Sourced, not run.  Every process started here is
# recorded in BENCH_PIDS and stopped by bench_cleanup (run.sh traps it).

# ---- scenarios, ports, fixed answers ---------------------------------------

# bench_defaults: the settings run.sh and profile.sh share.
bench_defaults() {
    NGINX_BIN=${SOLGATE_NGINX:-/usr/sbin/nginx}
    unset NGINX   # nginx reads $NGINX as a list of inherited sockets
    MODULE=$ROOT/build/modules/ngx_http_solgate_module.so
    SIM=$ROOT/build/bin/solana-sim
    UPSTREAM_CPU=${BENCH_UPSTREAM_CPU:-1}
    case $UPSTREAM_CPU in
        # worker_cpu_affinity mask for that CPU
        [0-9]) UPSTREAM_AFFINITY=1$(printf '%*s' "$UPSTREAM_CPU" '' | tr ' ' 0) ;;
        *) echo "BENCH_UPSTREAM_CPU must be one CPU number (0-9)" >&2; exit 2 ;;
    esac
    ALL_SCENARIOS="getslot balance genesis guard block batch"
    # The gateway's worker: unpinned (the headline: its whole CPU time per
    # request, as a gateway-bound host pays it), or BENCH_PIN=1 on CPU 0
    # alone (the second view: CPU 0's busy time per request, kernel work
    # for the worker included).
    GATEWAY_PIN=${BENCH_PIN:-0}
    case $GATEWAY_PIN in
        0) GATEWAY_AFFINITY= ;;
        1) GATEWAY_AFFINITY='worker_cpu_affinity 01;' ;;
        *) echo "BENCH_PIN must be 0 or 1" >&2; exit 2 ;;
    esac
    # How Solgate's locations forward: dispatch (solgate_dispatch.conf, a
    # fixed proxy_pass to the dispatcher block: what a network of plain
    # http:// nodes uses) or proxy (solgate_proxy.conf, proxy_pass
    # $solgate_upstream_url: https, paths, vendors).
    SOLGATE_SNIPPET=${BENCH_SNIPPET:-dispatch}
    case $SOLGATE_SNIPPET in
        dispatch|proxy) ;;
        *) echo "BENCH_SNIPPET must be dispatch or proxy" >&2; exit 2 ;;
    esac

    # Ports (all in 19600-19699): the solana-sim behind the poll path and
    # one upstream server block per scenario.
    SIM_PORT=19620
    declare -gA UP_PORT=([getslot]=19610 [balance]=19611 [genesis]=19612 [guard]=19613 [block]=19614 [batch]=19615)

    SLOT=300000000
    MAINNET_GENESIS=5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d
    BLOCK_MIN_BYTES=5000000
    local i batch_req='' batch_ans=''
    for i in 1 2 3 4 5 6 7 8 9 10; do
        batch_req+=$([ $i = 1 ] && echo '[' || echo ,)"{\"jsonrpc\":\"2.0\",\"id\":$i,\"method\":\"getSlot\"}"
        batch_ans+=$([ $i = 1 ] && echo '[' || echo ,)"{\"jsonrpc\":\"2.0\",\"result\":300000000,\"id\":$i}"
    done
    # What the upstream answers (block: a file, see bench_start_upstream).
    declare -gA UP_ANSWER=(
        [getslot]='{"jsonrpc":"2.0","result":300000000,"id":1}'
        [balance]='{"jsonrpc":"2.0","result":{"context":{"apiVersion":"2.0.15","slot":300000000},"value":0},"id":1}'
        [genesis]="{\"jsonrpc\":\"2.0\",\"result\":\"$MAINNET_GENESIS\",\"id\":1}"
        [guard]='{"jsonrpc":"2.0","error":{"code":-32004,"message":"Block not available for slot 999999999999"},"id":1}'
        [batch]="$batch_ans]"
    )
    declare -gA REQ=(
        [getslot]='{"jsonrpc":"2.0","id":1,"method":"getSlot"}'
        [balance]='{"jsonrpc":"2.0","id":1,"method":"getBalance","params":["83astBRguLMdt2h5U1Tpdq5tjFoJ6noeGwaY3mDLVcri"]}'
        [genesis]='{"jsonrpc":"2.0","id":1,"method":"getGenesisHash"}'
        [guard]='{"jsonrpc":"2.0","id":1,"method":"getBlock","params":[999999999999,{"maxSupportedTransactionVersion":0}]}'
        [block]='{"jsonrpc":"2.0","id":1,"method":"getBlock","params":[299999000,{"maxSupportedTransactionVersion":0}]}'
        [batch]="$batch_req]"
    )
    # A substring every answer must contain (empty: status and size only).
    declare -gA EXPECT=(
        [getslot]='"result":300000000,"id":1}'
        [balance]='"context":{"apiVersion":"2.0.15","slot":300000000},"value":0}'
        [genesis]="\"result\":\"$MAINNET_GENESIS\""
        [guard]='"code":-32004'
        [block]=''
        [batch]='"result":300000000,"id":10}]'
    )
}

bench_check_tools() {
    [ -x "$NGINX_BIN" ] || bench_die "no nginx at $NGINX_BIN"
    [ -f "$MODULE" ] || bench_die "no module at $MODULE (run make all)"
    [ -x "$SIM" ] || bench_die "no solana-sim at $SIM (run make all)"
    command -v wrk > /dev/null || bench_die "wrk is not installed (make deps)"
    [ -f /usr/lib/nginx/modules/ngx_http_lua_module.so ] || bench_die "libnginx-mod-http-lua is not installed (make deps)"
    [ -f /usr/lib/x86_64-linux-gnu/lua/5.1/cjson.so ] || bench_die "lua-cjson is not installed (make deps)"
    [ "$(nproc)" -ge 2 ] || bench_die "needs at least 2 CPUs (gateway on CPU 0, wrk on CPU 1)"
}

# ---- processes -------------------------------------------------------------

BENCH_PIDS=()

bench_log() { printf '[bench %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
bench_die() { bench_log "FAILED: $*"; exit 1; }

# Stops one nginx master (daemon off, our child): TERM, then up to 5 s.
stop_pid() {
    local pid=$1 i
    kill -0 "$pid" 2>/dev/null || return 0
    kill -TERM "$pid" 2>/dev/null || true
    for i in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
        kill -KILL "$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || true
}

bench_cleanup() {
    local pid
    for pid in "${BENCH_PIDS[@]}"; do stop_pid "$pid"; done
    BENCH_PIDS=()
}

forget_pid() {
    local pid=$1 p keep=()
    for p in "${BENCH_PIDS[@]}"; do [ "$p" = "$pid" ] || keep+=("$p"); done
    BENCH_PIDS=("${keep[@]}")
}

# wait_http URL [BODY]: up to 10 s for any HTTP answer.
wait_http() {
    local url=$1 body=${2:-} i
    for i in $(seq 100); do
        if [ -n "$body" ]; then
            curl -s -m 1 -o /dev/null -d "$body" "$url" && return 0
        else
            curl -s -m 1 -o /dev/null "$url" && return 0
        fi
        sleep 0.1
    done
    return 1
}

# check_answer WHAT URL BODY EXPECT: one POST by curl; the answer must be
# HTTP 200 and contain EXPECT (any 200 when EXPECT is empty).
check_answer() {
    local what=$1 url=$2 body=$3 expect=$4 code
    code=$(curl -s -m 10 -o "$WORK/answer.out" -w '%{http_code}' \
        -H 'Content-Type: application/json' -d "$body" "$url") || code=000
    if [ "$code" != 200 ] || { [ -n "$expect" ] && ! grep -qF -- "$expect" "$WORK/answer.out"; }; then
        bench_die "$what answered HTTP $code: $(head -c 300 "$WORK/answer.out" 2>/dev/null)"
    fi
}

# start_nginx PREFIX -> sets STARTED_PID (the master).  The config is
# PREFIX/conf/nginx.conf with `daemon off`, so the master is our child.
start_nginx() {
    local prefix=$1
    mkdir -p "$prefix/logs"
    "$NGINX_BIN" -t -q -p "$prefix/" -e "$prefix/logs/error.log" -c conf/nginx.conf \
        > "$prefix/logs/check.log" 2>&1 \
        || { cat "$prefix/logs/check.log" >&2; bench_die "nginx -t failed for $prefix"; }
    "$NGINX_BIN" -p "$prefix/" -e "$prefix/logs/error.log" -c conf/nginx.conf \
        > "$prefix/logs/stdout.log" 2>&1 &
    STARTED_PID=$!
    BENCH_PIDS+=("$STARTED_PID")
}

# worker_of MASTER_PID: the pid of its single worker (waits up to 5 s).
worker_of() {
    local master=$1 i kids
    for i in $(seq 50); do
        kids=$(cat "/proc/$master/task/$master/children" 2>/dev/null || true)
        set -- $kids
        if [ $# -ge 1 ]; then echo "$1"; return 0; fi
        sleep 0.1
    done
    return 1
}

# cpu_ticks PID: utime+stime of the process (all threads), in clock ticks.
cpu_ticks() {
    local stat
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || { echo 0; return; }
    stat=${stat##*) }
    set -- $stat
    echo $(( ${12} + ${13} ))
}

# cpu_snap FILE: per-CPU busy/total ticks and the fork counter from
# /proc/stat on the first line ("busy0 total0 busy1 total1 forks"), then
# "pid ticks" (utime+stime) of every process that is not a kernel thread.
cpu_snap() {
    {
        awk '$1 == "cpu0" || $1 == "cpu1" { t = 0; for (i = 2; i <= NF; i++) t += $i; printf "%d %d ", t - $5 - $6, t }
             $1 == "processes" { f = $2 } END { printf "%d\n", f }' /proc/stat
        # a process that ends between the glob and the read fails cat
        # (and, under pipefail, the snapshot): what was read is enough
        { cat /proc/[0-9]*/stat 2>/dev/null || true; } | awk '{
            i = index($0, ") "); n = split(substr($0, i + 2), f, " ");
            if (n > 13 && f[2] != 2 && $1 != 2) print $1, f[12] + f[13] }'
    } > "$1"
}

# cpu_delta BEFORE AFTER OURS...: "cpu0 cpu1 foreign_ticks forks": the busy
# share of each CPU between the two snapshots, the CPU ticks used in between
# by processes alive at the end that are not in OURS (one that came and went
# in between shows only in the fork count), and the forks since.
cpu_delta() {
    local before=$1 after=$2; shift 2
    awk -v ours=" $* " '
        FNR == 1 { if (FILENAME == ARGV[1]) split($0, a, " "); else split($0, b, " "); next }
        FILENAME == ARGV[1] { t[$1] = $2; next }
        index(ours, " " $1 " ") == 0 { f += ($1 in t) ? $2 - t[$1] : $2 }
        END {
            t0 = b[2] - a[2]; t1 = b[4] - a[4]; if (t0 <= 0) t0 = 1; if (t1 <= 0) t1 = 1;
            printf "%.3f %.3f %d %d\n", (b[1] - a[1]) / t0, (b[3] - a[3]) / t1, f, b[5] - a[5] }' "$before" "$after"
}

# status_kb PID FIELD: VmRSS / VmHWM in kB.
status_kb() {
    awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0
}

# ---- configuration ------------------------------------------------------

# write_upstream_conf PREFIX SIM_PORT: the fixed-answer upstream, one server
# block (port) per scenario.  Poll requests (User-Agent solgate-poller/...)
# are passed to a solana-sim whose clock stands still at slot 300000000, so
# Solgate's views agree with the fixed answers.
write_upstream_conf() {
    local prefix=$1 sim_port=$2
    mkdir -p "$prefix/conf" "$prefix/logs" "$prefix/html"
    {
        cat <<CONF
daemon off;
master_process on;
worker_processes 1;
worker_cpu_affinity $UPSTREAM_AFFINITY;
error_log $prefix/logs/error.log warn;
pid $prefix/logs/nginx.pid;
events { worker_connections 4096; }
http {
    access_log off;
    default_type application/json;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 1000000;
    keepalive_timeout 300s;
    client_body_buffer_size 64k;
    client_body_temp_path $prefix/client_body_temp;
    proxy_temp_path $prefix/proxy_temp;
    fastcgi_temp_path $prefix/fastcgi_temp;
    uwsgi_temp_path $prefix/uwsgi_temp;
    scgi_temp_path $prefix/scgi_temp;

    map \$http_user_agent \$bench_poller {
        "~^solgate-poller" 1;
        default 0;
    }
    upstream bench_sim { server 127.0.0.1:$sim_port; keepalive 8; }
CONF
        local s
        for s in $ALL_SCENARIOS; do
            local port=${UP_PORT[$s]}
            echo "    server {"
            echo "        listen 127.0.0.1:$port;"
            echo "        location = /_poll {"
            echo "            internal;"
            echo "            proxy_pass http://bench_sim/;"
            echo "            proxy_http_version 1.1;"
            echo "            proxy_set_header Connection \"\";"
            echo "        }"
            echo "        location / {"
            echo "            if (\$bench_poller) { rewrite ^ /_poll last; }"
            if [ "$s" = block ]; then
                # The static handler answers POST with 405; error_page to a
                # URI redirects as GET, so the file is served with 200.
                echo "            error_page 405 =200 /_block.json;"
                echo "            return 405;"
                echo "        }"
                echo "        location = /_block.json {"
                echo "            internal;"
                echo "            root $prefix/html;"
            else
                echo "            return 200 '${UP_ANSWER[$s]}';"
            fi
            echo "        }"
            echo "    }"
        done
        echo "}"
    } > "$prefix/conf/nginx.conf"
}

# The upstreams and failsafe policies of Solgate variant VARIANT: solgate
# (none), solgate_off (policies for other methods than the bench's), and
# one per policy applied to getBalance (solgate_off's consensus asks one
# upstream: nginx -t refuses an agreement= above the network's upstream
# count): solgate_hedge (the upstream answers
# long before after=, so no hedge goes out), solgate_consensus and
# solgate_broadcast (three upstreams, all the same server, all asked).
solgate_bench_policy() {
    local one='        upstream node http://bench_upstream;'
    local three="$one
        upstream node2 http://bench_upstream;
        upstream node3 http://bench_upstream;"
    case $1 in
        solgate) echo "$one" ;;
        solgate_off) echo "        consensus getBlock participants=1 agreement=1; hedge getTransaction; broadcast sendTransaction;
$one" ;;
        solgate_hedge) echo "        hedge getBalance after=100ms;
$one" ;;
        solgate_consensus) echo "        commitment finalized; consensus getBalance participants=3 agreement=3;
$three" ;;
        solgate_broadcast) echo "        broadcast getBalance;
$three" ;;
        solgate_fleet) echo "$one" ;;
        *) bench_die "unknown Solgate variant $1" ;;
    esac
}

# write_gateway_conf VARIANT PREFIX LISTEN_PORT UPSTREAM_PORT
write_gateway_conf() {
    local variant=$1 prefix=$2 port=$3 up_port=$4
    mkdir -p "$prefix/conf" "$prefix/logs"
    {
        case $variant in
            lua)
                echo "load_module /usr/lib/nginx/modules/ndk_http_module.so;"
                echo "load_module /usr/lib/nginx/modules/ngx_http_lua_module.so;"
                ;;
            solgate*)
                echo "load_module $MODULE;"
                ;;
        esac
        cat <<CONF
daemon off;
master_process on;
worker_processes 1;
$GATEWAY_AFFINITY
error_log $prefix/logs/error.log warn;
pid $prefix/logs/nginx.pid;
events { worker_connections 4096; }
http {
    access_log off;
    keepalive_requests 1000000;
    keepalive_timeout 300s;
    client_body_temp_path $prefix/client_body_temp;
    proxy_temp_path $prefix/proxy_temp;
    fastcgi_temp_path $prefix/fastcgi_temp;
    uwsgi_temp_path $prefix/uwsgi_temp;
    scgi_temp_path $prefix/scgi_temp;

    # The same upstream and keep-alive for every variant.
    upstream bench_upstream {
        server 127.0.0.1:$up_port;
        keepalive 32;
        keepalive_requests 1000000;
        keepalive_timeout 300s;
    }
CONF
        case $variant in
            baseline)
                cat <<CONF
    server {
        listen 127.0.0.1:$port;
        location / {
            proxy_pass http://bench_upstream;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_max_temp_file_size 0;
        }
    }
}
CONF
                ;;
            lua)
                cat <<'CONF'
    # A reference router as an operator would write it with lua-nginx:
    # read the body, decode the JSON-RPC call, pick an upstream round-robin.
    init_by_lua_block {
        local cjson = require "cjson.safe"
        bench_router = { decode = cjson.decode, upstreams = { "bench_upstream" }, turn = 0 }
    }
CONF
                cat <<CONF
    server {
        listen 127.0.0.1:$port;
        location / {
            set \$bench_target "";
            access_by_lua_block {
                local router = bench_router
                ngx.req.read_body()
                local body = ngx.req.get_body_data()
                if not body then
                    return ngx.exit(400)
                end
                local call = router.decode(body)
                if type(call) ~= "table" then
                    return ngx.exit(400)
                end
                local method = call.method or (call[1] and call[1].method)
                if type(method) ~= "string" then
                    return ngx.exit(400)
                end
                router.turn = router.turn % #router.upstreams + 1
                ngx.var.bench_target = router.upstreams[router.turn]
            }
            proxy_pass http://\$bench_target;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_max_temp_file_size 0;
        }
    }
}
CONF
                ;;
            solgate*)
                if [ "$variant" = solgate_fleet ]; then
                    cat <<CONF
    solgate_shared_state redis://127.0.0.1:$REDIS_PORT prefix=bench: timeout=200ms;
    solgate_host_id bench-gw;
CONF
                fi
                [ "$SOLGATE_SNIPPET" = dispatch ] && echo "    upstream solgate { solgate_dispatch; }"
                cat <<CONF
    solgate_network bench {
        cluster mainnet-beta;
$(solgate_bench_policy "$variant")
    }
    server {
        listen 127.0.0.1:$port;
        location / {
            solgate_pass bench;
            include $ROOT/conf/solgate_$SOLGATE_SNIPPET.conf;
        }
        location @solgate_retry {
            solgate_pass bench;
            include $ROOT/conf/solgate_$SOLGATE_SNIPPET.conf;
        }
        location = /_bench/metrics {
            solgate_metrics;
        }
    }
}
CONF
                ;;
        esac
    } > "$prefix/conf/nginx.conf"
}

# bench_start_redis DIR PORT -> sets STARTED_PID: a redis-server of the
# bench's own on the upstream's CPU (loopback), for the
# fleet variant, with the append-only file a fleet's Redis should have.
bench_start_redis() {
    local dir=$1 port=$2 i
    command -v redis-server > /dev/null || bench_die "redis-server missing (make deps installs it)"
    rm -rf "$dir"; mkdir -p "$dir"
    taskset -c "$UPSTREAM_CPU" redis-server --port "$port" --bind 127.0.0.1 --dir "$dir" \
        --save '' --appendonly yes --appendfsync everysec --daemonize no \
        --logfile "$dir/redis.log" &
    STARTED_PID=$!
    BENCH_PIDS+=("$STARTED_PID")
    for i in $(seq 50); do
        redis-cli -p "$port" ping 2> /dev/null | grep -q PONG && return 0
        sleep 0.1
    done
    bench_die "redis-server did not start on $port (see $dir/redis.log)"
}

# redis_commands: the commands the bench's redis-server processed so far.
redis_commands() {
    redis-cli -p "$REDIS_PORT" info stats 2> /dev/null \
        | sed -n 's/^total_commands_processed:\([0-9]*\).*/\1/p'
}

# bench_start_upstream PREFIX: the solana-sim for the poll path, the 5 MB
# block file and the upstream nginx; sets SIM_PID, UP_MASTER, UP_WORKER and
# BLOCK_BYTES.
bench_start_upstream() {
    local prefix=$1 s now_ms poll_ans
    mkdir -p "$prefix/html" "$prefix/logs"
    # The simulated node's clock stands still at slot 300000000 (one slot
    # per hour from now), so the poller's views, the harvested context.slot
    # and the fixed answers agree.
    now_ms=$(( $(date +%s%N) / 1000000 ))
    taskset -c "$UPSTREAM_CPU" "$SIM" --port "$SIM_PORT" --quiet --skip-rate 0 \
        --slot-ms 3600000 --start-slot "$SLOT" --anchor-ms "$now_ms" \
        --block-bytes "$BLOCK_MIN_BYTES" > "$prefix/logs/sim.log" 2>&1 &
    SIM_PID=$!
    BENCH_PIDS+=("$SIM_PID")
    wait_http "http://127.0.0.1:$SIM_PORT/_sim/stats" || bench_die "solana-sim did not start (see $prefix/logs/sim.log)"

    # The 5 MB getBlock answer, made once by the simulator, served as a file.
    curl -s -m 30 -o "$prefix/html/_block.json" -d "${REQ[block]}" "http://127.0.0.1:$SIM_PORT/" \
        || bench_die "could not fetch the 5 MB block from solana-sim"
    BLOCK_BYTES=$(stat -c %s "$prefix/html/_block.json")
    [ "$BLOCK_BYTES" -ge "$BLOCK_MIN_BYTES" ] || bench_die "block answer is $BLOCK_BYTES bytes, expected >= $BLOCK_MIN_BYTES"
    [[ "$(head -c 40 "$prefix/html/_block.json")" == *'"result"'* ]] || bench_die "block answer is not a result"

    write_upstream_conf "$prefix" "$SIM_PORT"
    start_nginx "$prefix"
    UP_MASTER=$STARTED_PID
    for s in $ALL_SCENARIOS; do
        wait_http "http://127.0.0.1:${UP_PORT[$s]}/" "${REQ[$s]}" || bench_die "upstream port ${UP_PORT[$s]} did not answer"
    done
    UP_WORKER=$(worker_of "$UP_MASTER") || bench_die "upstream has no worker"
    for s in $ALL_SCENARIOS; do
        check_answer "upstream $s" "http://127.0.0.1:${UP_PORT[$s]}/" "${REQ[$s]}" "${EXPECT[$s]}"
    done
    poll_ans=$(curl -s -m 5 -A solgate-poller/bench -d '{"jsonrpc":"2.0","id":1,"method":"getHealth"}' \
        "http://127.0.0.1:${UP_PORT[getslot]}/")
    [[ "$poll_ans" == *'"result":"ok"'* ]] || bench_die "the poll path through the upstream answered: $poll_ans"
}
