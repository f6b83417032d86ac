#!/usr/bin/env bash
# Cube Runner's cached getBlock against nginx serving the same bytes as a
# static file, in one nginx worker, interleaved (static, solgate, static,
# ...) so machine noise hits both alike.  Part of `make bench`; see
# tools/bench/README.md.  Loopback ports 19660-19662; stops what it starts.
#
# The targets: Solgate >= 0.90x the static file in every one of five
# consecutive rounds (each round's ratio, not only the median's; a round
# alternates one-second runs of the two, BENCH_SECONDS of each); a
# getBlock repeated right after its answer, and LOCK_CLIENTS (16)
# concurrent misses for one block, make one ledger call each (the cache
# lock), every one answered.
#
# Environment: BENCH_CACHED_ROUNDS (5), BENCH_SECONDS (5), BENCH_CONNECTIONS
# (16), BENCH_BLOCK_BYTES (1048576), SOLGATE_NGINX (/usr/sbin/nginx).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
NGINX_BIN=${SOLGATE_NGINX:-/usr/sbin/nginx}
unset NGINX
SIM=$ROOT/build/bin/solana-sim
MODULE=$ROOT/build/modules/ngx_http_solgate_module.so
WORK=$ROOT/build/bench/cached
ROUNDS=${BENCH_CACHED_ROUNDS:-5}
SECS=${BENCH_SECONDS:-5}
CONNS=${BENCH_CONNECTIONS:-16}
BYTES=${BENCH_BLOCK_BYTES:-1048576}
SIM_PORT=19660 STATIC_PORT=19661 GW_PORT=19662

sim_pid=
cleanup() {
    [ -f "$WORK/nginx.pid" ] && kill -QUIT "$(cat "$WORK/nginx.pid")" 2>/dev/null || true
    [ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null || true
    sleep 0.5
    [ -f "$WORK/nginx.pid" ] && kill -KILL "$(cat "$WORK/nginx.pid")" 2>/dev/null || true
    wait 2>/dev/null || true
}
trap cleanup EXIT

rm -rf "$WORK" && mkdir -p "$WORK/html"
taskset -c 1 "$SIM" --port "$SIM_PORT" --quiet --block-bytes "$BYTES" > "$WORK/sim.log" 2>&1 &
sim_pid=$!

cat > "$WORK/nginx.conf" <<CONF
load_module $MODULE;
worker_processes 1;
worker_cpu_affinity 0001;
daemon on;
error_log $WORK/error.log warn;
pid $WORK/nginx.pid;
events { worker_connections 1024; }
http {
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 1000000;
    client_body_temp_path $WORK/client_body_temp;
    proxy_temp_path $WORK/proxy_temp;
    fastcgi_temp_path $WORK/fastcgi_temp;
    uwsgi_temp_path $WORK/uwsgi_temp;
    scgi_temp_path $WORK/scgi_temp;
    solgate_network mainnet {
        cluster mainnet-beta;
        upstream node http://127.0.0.1:$SIM_PORT;
    }
    solgate_blocks mainnet {
        region bench;
        cache $WORK/cache;
        state $WORK/state;
        api_key \$http_x_api_key;
        plan unlimited;
        plan_define unlimited tier=operator getblock_rate=0;
    }
    server {
        listen 127.0.0.1:$STATIC_PORT;
        location / { root $WORK/html; }
    }
    server {
        listen 127.0.0.1:$GW_PORT;
        location / {
            solgate_pass mainnet;
            include $ROOT/conf/solgate_proxy.conf;
        }
        location @solgate_retry {
            solgate_pass mainnet;
            include $ROOT/conf/solgate_proxy.conf;
        }
    }
}
CONF
"$NGINX_BIN" -p "$WORK/" -c "$WORK/nginx.conf" 2>> "$WORK/start.log"

# a finalized, not skipped slot, cached by asking twice
for _ in $(seq 50); do
    curl -sf "127.0.0.1:$SIM_PORT" -d '{"jsonrpc":"2.0","id":1,"method":"getSlot","params":[{"commitment":"finalized"}]}' >/dev/null && break
    sleep 0.1
done
sleep 1.5   # the poller learns the finalized tip
final=$(curl -s "127.0.0.1:$SIM_PORT" -d '{"jsonrpc":"2.0","id":1,"method":"getSlot","params":[{"commitment":"finalized"}]}' | sed 's/.*"result":\([0-9]*\).*/\1/')
slot=$((final - 10))
while :; do
    body="{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"getBlock\",\"params\":[$slot,{\"maxSupportedTransactionVersion\":0}]}"
    curl -s "127.0.0.1:$GW_PORT" -H 'X-Api-Key: bench' -d "$body" -o "$WORK/first.json"
    grep -q '"result"' "$WORK/first.json" && break
    slot=$((slot - 1))
done
printf '%s' "$body" > "$WORK/request.json"
curl -s "127.0.0.1:$GW_PORT" -H 'X-Api-Key: bench' -d "$body" -o "$WORK/html/block.json"
cmp -s "$WORK/first.json" "$WORK/html/block.json" || { echo "cached answer differs from the ledger's" >&2; exit 1; }
size=$(stat -c %s "$WORK/html/block.json")

# The cache lock: a getBlock asked again right after the first answer, and
# LOCK_CLIENTS concurrent misses for one block, each make one ledger call.
ledger_calls() {
    curl -s "127.0.0.1:$SIM_PORT/_sim/stats" | perl -MJSON::PP -0ne \
        '$s = decode_json($_); print(($s->{calls}{getBlock} // 0) - ($s->{poller_calls}{getBlock} // 0))'
}
block_body() { printf '{"jsonrpc":"2.0","id":%s,"method":"getBlock","params":[%s,{"maxSupportedTransactionVersion":0}]}' "$2" "$1"; }
ask() { curl -s "127.0.0.1:$GW_PORT" -H 'X-Api-Key: bench' -d "$(block_body "$1" "$2")" -o "$3"; }
lock_clients=${LOCK_CLIENTS:-16}
repeat_slot=$((slot - 1)) crowd_slot=$((slot - 2))
before=$(ledger_calls)
ask "$repeat_slot" 1 "$WORK/repeat-1.json"
ask "$repeat_slot" 2 "$WORK/repeat-2.json"
repeat_calls=$(( $(ledger_calls) - before ))
before=$(ledger_calls)
crowd=()
for i in $(seq "$lock_clients"); do ask "$crowd_slot" "$i" "$WORK/crowd-$i.json" & crowd+=($!); done
wait "${crowd[@]}"
crowd_calls=$(( $(ledger_calls) - before ))
crowd_answered=$(grep -lE '"result"|"code":-3200[79]' "$WORK"/crowd-*.json | wc -l)
lock_verdict=$(awk -v r="$repeat_calls" -v c="$crowd_calls" -v a="$crowd_answered" -v n="$lock_clients" \
    'BEGIN{print (r == 1 && c == 1 && a == n) ? "met" : "missed"}')
echo "cache_lock: a getBlock asked again right after its answer made $repeat_calls ledger call(s); $lock_clients concurrent misses for one block made $crowd_calls, $crowd_answered answered ($lock_verdict)"

# One wrk run of SECONDS against VARIANT -> "requests duration_us p99_us errors".
run() {
    local url body
    if [ "$1" = static ]; then url="http://127.0.0.1:$STATIC_PORT/block.json" body=GET
    else url="http://127.0.0.1:$GW_PORT/" body="$WORK/request.json"; fi
    BENCH_BODY=$body BENCH_HEADER='X-Api-Key: bench' BENCH_EXPECT= \
        taskset -c 1 wrk -t1 -c"$CONNS" -d"${2}s" -s "$ROOT/tools/bench/wrk_post.lua" "$url" \
        | awk '/^BENCH /{for(i=2;i<=NF;i++){split($i,kv,"=");v[kv[1]]=kv[2]}
                printf "%d %d %d %d\n", v["requests"], v["duration_us"], v["p99_us"], v["err_status"]+v["bad_body"]}'
}

# A round: SECS one-second slices of each variant, alternating (static,
# solgate, static, ...), so what the machine does meanwhile (the sim's
# polls, other tenants) falls on both alike; each variant's req/s is its
# requests over its measured time, its p99 the worst slice's.
SLICE_SECS=1
round() {   # -> "static_rps static_p99 solgate_rps solgate_p99 errors"
    local v n d p e slice
    declare -A req=() dur=() p99=()
    local errors=0
    for slice in $(seq "$SECS"); do
        for v in static solgate; do
            read -r n d p e < <(run "$v" "$SLICE_SECS")
            req[$v]=$(( ${req[$v]:-0} + n )) dur[$v]=$(( ${dur[$v]:-0} + d ))
            [ "$p" -gt "${p99[$v]:-0}" ] && p99[$v]=$p
            errors=$(( errors + e ))
        done
    done
    awk -v rs="${req[static]}" -v ds="${dur[static]}" -v rg="${req[solgate]}" -v dg="${dur[solgate]}" \
        -v ps="${p99[static]}" -v pg="${p99[solgate]}" -v e="$errors" \
        'BEGIN{printf "%.0f %d %.0f %d %d\n", rs/(ds/1e6), ps, rg/(dg/1e6), pg, e}'
}

declare -a st sg ratios
for r in $(seq "$ROUNDS"); do
    read -r rs p99s rg p99g errs < <(round)
    [ "$errs" = 0 ] || { echo "errors in round $r: $errs" >&2; exit 1; }
    st+=("$rs") sg+=("$rg")
    ratios+=("$(awk -v a="$rg" -v b="$rs" 'BEGIN{printf "%.3f", a/b}')")
    echo "cached_block round $r: static ${rs} req/s (p99 ${p99s} us), solgate ${rg} req/s (p99 ${p99g} us), ratio ${ratios[-1]}"
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
ms=$(median "${st[@]}") mg=$(median "${sg[@]}")
ratio=$(awk -v a="$mg" -v b="$ms" 'BEGIN{printf "%.3f", a/b}')
lowest=$(printf '%s\n' "${ratios[@]}" | sort -n | head -1)
verdict=$(awk -v l="$lowest" 'BEGIN{print (l >= 0.90) ? "met" : "missed"}')
echo "cached_block: ${size}-byte getBlock from the region cache: solgate ${mg} req/s, static file ${ms} req/s, ratio of medians ${ratio}; lowest round ${lowest} (target >= 0.90 in each of ${ROUNDS} rounds: ${verdict})"
printf '{"scenario":"cached_block","bytes":%d,"static_rps":%s,"solgate_rps":%s,"ratio":%s,"round_ratios":[%s],"lowest_round_ratio":%s}\n' \
    "$size" "$ms" "$mg" "$ratio" "$(IFS=,; echo "${ratios[*]}")" "$lowest" > "$ROOT/build/bench/cached_block.json"
mkdir -p "$ROOT/build/bench/targets"
printf '%s\tcached 1 MB getBlock: Solgate req/s >= 0.90x the static file in each of %d rounds\tlowest %.3fx (rounds %s)\n' \
    "$verdict" "$ROUNDS" "$lowest" "${ratios[*]}" > "$ROOT/build/bench/targets/cached_block.tsv"
printf '%s\tgetBlock repeated right after its answer, and %d concurrent misses for one block: one ledger call each, all answered\trepeat %d call(s); concurrent %d call(s), %d of %d answered\n' \
    "$lock_verdict" "$lock_clients" "$repeat_calls" "$crowd_calls" "$crowd_answered" "$lock_clients" >> "$ROOT/build/bench/targets/cached_block.tsv"
