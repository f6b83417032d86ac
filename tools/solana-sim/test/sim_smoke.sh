#!/usr/bin/env bash
# Smoke test for tools/solana-sim: starts three simulated nodes on loopback
# and checks slots, envelopes, getBlock determinism and size, faults, stats
# and batches with curl, and the pubsub port with pubsub_check.pl (Perl).
# Needs bash, curl, grep, sed and perl.
#
#   tools/solana-sim/test/sim_smoke.sh            # uses build/bin/solana-sim (builds it if missing)
#   SOLANA_SIM=/path/to/solana-sim sim_smoke.sh   # use a specific binary
#   SIM_PORT_BASE=19540 sim_smoke.sh              # ports BASE..BASE+5 (default 19520)
set -u

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$SCRIPT_DIR/../../.." && pwd)
SIM=${SOLANA_SIM:-$REPO_ROOT/build/bin/solana-sim}
BASE=${SIM_PORT_BASE:-19520}
PORT_A=$BASE
PORT_B=$((BASE + 1))
PORT_BIG=$((BASE + 2))
PORT_SPARE=$((BASE + 3))

TMP=$(mktemp -d /tmp/sim_smoke.XXXXXX)
PIDS=()
PASS=0
FAIL=0

cleanup() {
    local pid
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null; done
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ok() { PASS=$((PASS + 1)); echo "ok   - $1"; }
not_ok() { FAIL=$((FAIL + 1)); echo "FAIL - $1${2:+: $2}"; }
check() {  # check NAME CONDITION-COMMAND...
    local name=$1
    shift
    if "$@"; then ok "$name"; else not_ok "$name"; fi
}

if [[ -z ${SOLANA_SIM:-} && ! -x $SIM ]]; then
    echo "# building $SIM"
    mkdir -p "$(dirname "$SIM")"
    (cd "$REPO_ROOT" && g++ -std=c++17 -O2 -g -Wall -Wextra -Werror -o "$SIM" tools/solana-sim/src/*.cpp \
        -luv -lyajl -lpthread) || { echo "build failed"; exit 1; }
fi
[[ -x $SIM ]] || { echo "no solana-sim binary at $SIM"; exit 1; }

# rpc PORT JSON -> response body on stdout
rpc() { curl -s --max-time 10 -H 'Content-Type: application/json' -d "$2" "http://127.0.0.1:$1/"; }
ctl() { curl -s --max-time 10 "http://127.0.0.1:$1$2"; }
# result_num BODY -> numeric "result" of a single response
result_num() { sed -n 's/^{"jsonrpc":"2.0","result":\([0-9][0-9]*\),.*/\1/p' <<<"$1"; }
# field_num NAME BODY -> first numeric value of "NAME":N
field_num() { grep -o "\"$1\":[0-9][0-9]*" <<<"$2" | head -n1 | sed 's/.*://'; }
slot_at() { result_num "$(rpc "$1" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"getSlot\",\"params\":[{\"commitment\":\"$2\"}]}")"; }
shred_at() { result_num "$(rpc "$1" '{"jsonrpc":"2.0","id":1,"method":"getMaxShredInsertSlot"}')"; }

start_sim() {  # start_sim NAME PORT FLAGS...
    local name=$1 port=$2
    shift 2
    "$SIM" --port "$port" --name "$name" --quiet "$@" 2>"$TMP/$name.log" &
    PIDS+=($!)
    local i
    for i in $(seq 1 100); do
        ctl "$port" /_sim/stats >/dev/null 2>&1 && return 0
        sleep 0.05
    done
    echo "sim $name did not come up:"
    cat "$TMP/$name.log"
    exit 1
}

COMMON=(--slot-ms 100 --seed 7 --skip-rate 0.1 --block-bytes 20000 --first-available-block 1000)
start_sim A "$PORT_A" "${COMMON[@]}"
start_sim B "$PORT_B" "${COMMON[@]}"
start_sim BIG "$PORT_BIG" --block-bytes 5000000 --cluster devnet

# --- start-up line, CLI errors -------------------------------------------------
sleep 0.1
check "start line printed" grep -q "solana-sim A listening on 127.0.0.1:$PORT_A cluster=mainnet-beta slot-ms=100" "$TMP/A.log"
"$SIM" --port "$PORT_A" --quiet 2>"$TMP/inuse.log"
rc=$?
check "port in use exits 1" test "$rc" -eq 1
"$SIM" --port "$PORT_SPARE" --bogus 2>/dev/null
rc=$?
check "bad flag exits 2" test "$rc" -eq 2

# --- slots -----------------------------------------------------------------------
# Asked in one batch, finalized first, so a slot boundary between the calls can
# only make the later (higher-commitment-order) values larger.
body=$(rpc "$PORT_A" '[{"jsonrpc":"2.0","id":"f","method":"getSlot","params":[{"commitment":"finalized"}]},
  {"jsonrpc":"2.0","id":"c","method":"getSlot","params":[{"commitment":"confirmed"}]},
  {"jsonrpc":"2.0","id":"p","method":"getSlot","params":[{"commitment":"processed"}]}]')
fin=$(sed -n 's/.*"result":\([0-9]*\),"id":"f".*/\1/p' <<<"$body")
conf=$(sed -n 's/.*"result":\([0-9]*\),"id":"c".*/\1/p' <<<"$body")
proc=$(sed -n 's/.*"result":\([0-9]*\),"id":"p".*/\1/p' <<<"$body")
check "getSlot processed>=confirmed>=finalized ($proc/$conf/$fin)" \
    test -n "$fin" -a -n "$conf" -a -n "$proc" -a "${proc:-0}" -ge "${conf:-1}" -a "${conf:-0}" -ge "${fin:-1}"
check "finalized lags processed by about 32" test $((proc - fin)) -ge 30 -a $((proc - fin)) -le 50
default_slot=$(result_num "$(rpc "$PORT_A" '{"jsonrpc":"2.0","id":1,"method":"getSlot"}')")
check "getSlot defaults to finalized" test "${default_slot:-0}" -ge "$fin" -a "${default_slot:-0}" -lt "$proc"
slot_b=$(slot_at "$PORT_B" processed)
check "two nodes agree on the cluster clock" test $((slot_b - proc)) -ge -3 -a $((slot_b - proc)) -le 5
shred=$(shred_at "$PORT_A")
check "shred watermark >= processed" test "${shred:-0}" -ge "$proc"
body=$(rpc "$PORT_A" '{"jsonrpc":"2.0","id":9,"method":"getSlot","params":[{"minContextSlot":99999999999}]}')
check "minContextSlot error -32016" grep -q '"code":-32016,"message":"Minimum context slot has not been reached","data":{"contextSlot":' <<<"$body"
height=$(result_num "$(rpc "$PORT_A" '{"jsonrpc":"2.0","id":1,"method":"getBlockHeight"}')")
check "getBlockHeight below slot (skips)" test -n "$height" -a "${height:-0}" -lt "$fin"

# --- identity / static methods ---------------------------------------------------
body=$(rpc "$PORT_A" '{"jsonrpc":"2.0","id":1,"method":"getGenesisHash"}')
check "getGenesisHash mainnet-beta" test "$body" = '{"jsonrpc":"2.0","result":"5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d","id":1}'
body=$(rpc "$PORT_BIG" '{"jsonrpc":"2.0","id":1,"method":"getGenesisHash"}')
check "getGenesisHash devnet" grep -q 'EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG' <<<"$body"
body=$(rpc "$PORT_A" '{"jsonrpc":"2.0","id":1,"method":"getFirstAvailableBlock"}')
check "getFirstAvailableBlock" test "$body" = '{"jsonrpc":"2.0","result":1000,"id":1}'
body=$(rpc "$PORT_A" '{"jsonrpc":"2.0","id":1,"method":"getHealth"}')
check "getHealth ok" test "$body" = '{"jsonrpc":"2.0","result":"ok","id":1}'
body=$(rpc "$PORT_A" '{"jsonrpc":"2.0","id":1,"method":"getVersion"}')
check "getVersion" grep -q '"solana-core":"2.0.15"' <<<"$body"

# --- envelopes and id echo -------------------------------------------------------
body=$(rpc "$PORT_A" '{"jsonrpc":"2.0","id":1,"method":"getBalance","params":["5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d"]}')
ctx=$(field_num slot "$body")
fin2=$(slot_at "$PORT_A" finalized)
check "getBalance context.slot is the finalized slot" test -n "$ctx" -a "${ctx:-0}" -ge "$fin" -a "${ctx:-0}" -le "${fin2:-0}"
check "getBalance envelope shape" grep -q '^{"jsonrpc":"2.0","result":{"context":{"apiVersion":"2.0.15","slot":[0-9]*},"value":[0-9]*},"id":1}$' <<<"$body"
body=$(rpc "$PORT_A" '{"jsonrpc":"2.0","id":2,"method":"getAccountInfo","params":["5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d",{"commitment":"processed","encoding":"base64"}]}')
ctx=$(field_num slot "$body")
check "getAccountInfo processed context.slot > finalized" test -n "$ctx" -a "${ctx:-0}" -gt "$fin"
body=$(rpc "$PORT_A" '{"jsonrpc":"2.0","id":12345678901234567890.50,"method":"getLatestBlockhash"}')
check "numeric id echoed verbatim" grep -q '"id":12345678901234567890.50}$' <<<"$body"
check "getLatestBlockhash value" grep -q '"value":{"blockhash":"[1-9A-HJ-NP-Za-km-z]*","lastValidBlockHeight":[0-9]*}' <<<"$body"
body=$(rpc "$PORT_A" '{"jsonrpc":"2.0","id":"abc","method":"noSuchMethod"}')
check "unknown method -32601" test "$body" = '{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":"abc"}'
body=$(rpc "$PORT_A" '{"jsonrpc":"2.0",')
check "parse error -32700" test "$body" = '{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"},"id":null}'
body=$(rpc "$PORT_A" '42')
check "non-object -32600" test "$body" = '{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request"},"id":null}'

# --- batch -----------------------------------------------------------------------
body=$(rpc "$PORT_A" '[{"jsonrpc":"2.0","id":1,"method":"getHealth"},7,{"jsonrpc":"2.0","id":"x","method":"getGenesisHash"}]')
check "batch answered as array in order" grep -q '^\[{"jsonrpc":"2.0","result":"ok","id":1},{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request"},"id":null},{"jsonrpc":"2.0","result":"5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d","id":"x"}\]$' <<<"$body"

# --- getBlock --------------------------------------------------------------------
shred=$(shred_at "$PORT_A")
above=$((shred + 1000))
body=$(rpc "$PORT_A" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"getBlock\",\"params\":[$above]}")
check "getBlock above watermark -32004" test "$body" = "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32004,\"message\":\"Block not available for slot $above\"},\"id\":1}"
body=$(rpc "$PORT_A" '{"jsonrpc":"2.0","id":1,"method":"getBlock","params":[5]}')
check "getBlock below first available -32001" grep -q '"code":-32001,"message":"Block 5 cleaned up, does not exist on node. First available block: 1000"' <<<"$body"
body=$(rpc "$PORT_A" '{"jsonrpc":"2.0","id":1,"method":"getBlock","params":["12"]}')
check "getBlock bad slot -32602" grep -q '"code":-32602,"message":"Invalid params"' <<<"$body"

# Walk down from finalized to find one skipped slot, one v0 slot and one produced slot.
skipped="" v0slot="" produced=""
s=$fin
for i in $(seq 1 60); do
    body=$(rpc "$PORT_A" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"getBlock\",\"params\":[$s,{\"transactionDetails\":\"none\",\"rewards\":false}]}")
    if grep -q '"code":-32007' <<<"$body"; then
        [[ -z $skipped ]] && skipped=$s
    elif grep -q '"blockhash"' <<<"$body"; then
        [[ -z $produced ]] && produced=$s
        if [[ -z $v0slot ]]; then
            b2=$(rpc "$PORT_A" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"getBlock\",\"params\":[$s]}")
            grep -q '"code":-32015' <<<"$b2" && v0slot=$s
        fi
    fi
    [[ -n $skipped && -n $v0slot && -n $produced ]] && break
    s=$((s - 1))
done
check "a skipped slot answers -32007" test -n "$skipped"
rpc "$PORT_A" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"getBlock\",\"params\":[$produced,{\"transactionDetails\":\"none\"}]}" >/dev/null
check "blocks_served ends with the block last answered" grep -q "\"blocks_served\":\[\([0-9]*,\)*$produced\]}$" <<<"$(ctl "$PORT_A" /_sim/stats)"
if [[ -n $skipped ]]; then
    body=$(rpc "$PORT_A" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"getBlock\",\"params\":[$skipped]}")
    check "-32007 message" grep -q "\"message\":\"Slot $skipped was skipped, or missing due to ledger jump to recent snapshot\"" <<<"$body"
fi
check "a v0 slot without maxSupportedTransactionVersion answers -32015" test -n "$v0slot"
if [[ -n $v0slot ]]; then
    body=$(rpc "$PORT_A" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"getBlock\",\"params\":[$v0slot,{\"maxSupportedTransactionVersion\":0}]}")
    check "v0 block with maxSupportedTransactionVersion has version 0" grep -q '"version":0' <<<"$body"
    blk_a=$(rpc "$PORT_A" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"getBlock\",\"params\":[$v0slot,{\"maxSupportedTransactionVersion\":0,\"encoding\":\"base64\"}]}")
    blk_b=$(rpc "$PORT_B" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"getBlock\",\"params\":[$v0slot,{\"maxSupportedTransactionVersion\":0,\"encoding\":\"base64\"}]}")
    check "base64 getBlock identical on both nodes" test -n "$blk_a" -a "$blk_a" = "$blk_b"
    check "base64 transaction encoding" grep -q '"transaction":\["[A-Za-z0-9+/=]*","base64"\]' <<<"$blk_a"
fi
if [[ -n $produced ]]; then
    req="{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"getBlock\",\"params\":[$produced,{\"maxSupportedTransactionVersion\":0}]}"
    rpc "$PORT_A" "$req" >"$TMP/block_a.json"
    rpc "$PORT_B" "$req" >"$TMP/block_b.json"
    check "getBlock byte-identical on both nodes (slot $produced)" cmp -s "$TMP/block_a.json" "$TMP/block_b.json"
    size=$(wc -c <"$TMP/block_a.json")
    check "getBlock body reaches --block-bytes ($size bytes)" test "$size" -ge 20000
    check "getBlock fields" grep -q "^{\"jsonrpc\":\"2.0\",\"result\":{\"blockHeight\":[0-9]*,\"blockTime\":[0-9]*,\"blockhash\":\"[1-9A-Za-z]*\",\"parentSlot\":[0-9]*,\"previousBlockhash\":\"[1-9A-Za-z]*\",\"transactions\":\[" "$TMP/block_a.json"
    body=$(rpc "$PORT_A" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"getBlock\",\"params\":[$produced,{\"transactionDetails\":\"signatures\",\"rewards\":false}]}")
    check "transactionDetails=signatures, rewards=false" grep -q '"signatures":\["[1-9A-Za-z]*"' <<<"$body"
    check "rewards=false omits rewards" bash -c '! grep -q "\"rewards\"" <<<"$1"' _ "$body"
fi

# 5 MB block from the third node (fresh slot each run, so nothing is cached).
big_slot=$(slot_at "$PORT_BIG" finalized)
start_ns=$(date +%s%N)
rpc "$PORT_BIG" "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"getBlock\",\"params\":[$big_slot,{\"maxSupportedTransactionVersion\":0}]}" >"$TMP/big.json"
elapsed_ms=$((($(date +%s%N) - start_ns) / 1000000))
size=$(wc -c <"$TMP/big.json")
if grep -q '"code":-32007' "$TMP/big.json"; then
    big_slot=$((big_slot - 1))  # landed on a skipped slot: take the neighbour
    rpc "$PORT_BIG" "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"getBlock\",\"params\":[$big_slot,{\"maxSupportedTransactionVersion\":0}]}" >"$TMP/big.json"
    size=$(wc -c <"$TMP/big.json")
fi
check "5 MB getBlock ($size bytes in ${elapsed_ms} ms)" test "$size" -ge 5000000
check "5 MB getBlock is complete" bash -c '[[ $(tail -c 7 "$1") == "\"id\":7}" ]]' _ "$TMP/big.json"

# --- chunked request body and keep-alive ---------------------------------------
body=$(curl -s --max-time 5 -H 'Transfer-Encoding: chunked' -H 'Content-Type: application/json' \
    --data-binary '{"jsonrpc":"2.0","id":3,"method":"getHealth"}' "http://127.0.0.1:$PORT_A/")
check "chunked request body" test "$body" = '{"jsonrpc":"2.0","result":"ok","id":3}'
out=$(curl -sv --max-time 5 -d '{"jsonrpc":"2.0","id":1,"method":"getHealth"}' "http://127.0.0.1:$PORT_A/" \
    --next -d '{"jsonrpc":"2.0","id":2,"method":"getHealth"}' "http://127.0.0.1:$PORT_A/" 2>&1)
check "keep-alive connection reused" grep -qi 're-using existing connection\|reusing existing connection' <<<"$out"

# --- faults ------------------------------------------------------------------------
body=$(ctl "$PORT_A" '/_sim/fault/stall?on=1')
check "stall fault accepted" grep -q '"ok":true' <<<"$body"
p1=$(slot_at "$PORT_A" processed)
s1=$(shred_at "$PORT_A")
sleep 0.6
p2=$(slot_at "$PORT_A" processed)
s2=$(shred_at "$PORT_A")
check "stall: processed frozen ($p1 -> $p2)" test -n "$p1" -a "$p1" = "$p2"
check "stall: shred watermark advances ($s1 -> $s2)" test "${s2:-0}" -gt "${s1:-0}"
ctl "$PORT_A" '/_sim/fault/stall?on=0' >/dev/null
p3=$(slot_at "$PORT_A" processed)
check "stall cleared: processed catches up" test "${p3:-0}" -gt "${p2:-0}"

ctl "$PORT_A" '/_sim/fault/lag?slots=200' >/dev/null
pa=$(slot_at "$PORT_A" processed)
pb=$(slot_at "$PORT_B" processed)
check "lag fault: node 200 slots behind" test $((pb - pa)) -ge 195 -a $((pb - pa)) -le 210
body=$(rpc "$PORT_A" '{"jsonrpc":"2.0","id":1,"method":"getHealth"}')
check "lagging node reports behind" grep -q '"code":-32005,"message":"Node is behind by [0-9]* slots","data":{"numSlotsBehind":[0-9]*}' <<<"$body"
ctl "$PORT_A" '/_sim/fault/lag?slots=0' >/dev/null
ctl "$PORT_A" '/_sim/fault/unhealthy?on=1' >/dev/null
body=$(rpc "$PORT_A" '{"jsonrpc":"2.0","id":1,"method":"getHealth"}')
check "unhealthy fault" test "$body" = '{"jsonrpc":"2.0","error":{"code":-32005,"message":"Node is unhealthy","data":{"numSlotsBehind":null}},"id":1}'
ctl "$PORT_A" '/_sim/fault/unhealthy?on=0' >/dev/null

ctl "$PORT_A" '/_sim/fault/rollback?slots=50' >/dev/null
pa=$(slot_at "$PORT_A" processed)
pb=$(slot_at "$PORT_B" processed)
check "rollback fault: tips drop back 50 slots" test $((pb - pa)) -ge 45 -a $((pb - pa)) -le 60
ctl "$PORT_A" '/_sim/fault/rollback?slots=0' >/dev/null

ctl "$PORT_A" '/_sim/fault/inflate_finalized?slots=100' >/dev/null
fi_=$(slot_at "$PORT_A" finalized)
pr_=$(slot_at "$PORT_A" processed)
check "inflate_finalized puts finalized above processed" test "${fi_:-0}" -gt "${pr_:-0}"
ctl "$PORT_A" '/_sim/fault/clear' >/dev/null

ctl "$PORT_A" '/_sim/fault/latency?ms=300' >/dev/null
start_ns=$(date +%s%N)
body=$(rpc "$PORT_A" '{"jsonrpc":"2.0","id":1,"method":"getHealth"}')
elapsed_ms=$((($(date +%s%N) - start_ns) / 1000000))
check "latency fault delays the response (${elapsed_ms} ms)" test "$elapsed_ms" -ge 280 -a "$body" = '{"jsonrpc":"2.0","result":"ok","id":1}'
ctl "$PORT_A" '/_sim/fault/latency?ms=0' >/dev/null

ctl "$PORT_A" /_sim/reset >/dev/null
ctl "$PORT_A" '/_sim/fault/http_status?code=502' >/dev/null
code=$(curl -s -o /dev/null -w '%{http_code}' -d '{"jsonrpc":"2.0","id":1,"method":"getSlot"}' "http://127.0.0.1:$PORT_A/")
check "http_status fault answers 502" test "$code" = 502
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT_A/_sim/stats")
check "control API unaffected by http_status fault" test "$code" = 200
ctl "$PORT_A" '/_sim/fault/http_status?code=0' >/dev/null
code=$(curl -s -o /dev/null -w '%{http_code}' -d '{"jsonrpc":"2.0","id":1,"method":"getSlot"}' "http://127.0.0.1:$PORT_A/")
check "http_status cleared" test "$code" = 200

ctl "$PORT_A" '/_sim/fault/close?on=1' >/dev/null
curl -s --max-time 5 -o /dev/null -d '{"jsonrpc":"2.0","id":1,"method":"getSlot"}' "http://127.0.0.1:$PORT_A/"
rc=$?
check "close fault: connection closed without a response (curl rc $rc)" test "$rc" -eq 52
ctl "$PORT_A" '/_sim/fault/clear' >/dev/null
body=$(rpc "$PORT_A" '{"jsonrpc":"2.0","id":1,"method":"getHealth"}')
check "faults cleared" test "$body" = '{"jsonrpc":"2.0","result":"ok","id":1}'

# --- stats ---------------------------------------------------------------------------
# Since the reset above: getSlot x3 (502, 200, closed), getHealth x1.
stats=$(ctl "$PORT_A" /_sim/stats)
check "stats count calls rejected by faults" grep -q '"calls":{"getHealth":1,"getSlot":3},"total":4,"poller_calls":{},"poller_total":0,"http_requests":4,"client_connections":' <<<"$stats"
check "stats name, slots and faults" grep -q '^{"name":"A",.*"slots":{"processed":[0-9]*,"confirmed":[0-9]*,"finalized":[0-9]*,"shred":[0-9]*.*"faults":{"stall":false' <<<"$stats"
rpc "$PORT_A" '[{"jsonrpc":"2.0","id":1,"method":"getSlot"},{"jsonrpc":"2.0","id":2,"method":"getSlot"},{"jsonrpc":"2.0","id":3,"method":"getBlockHeight"}]' >/dev/null
stats=$(ctl "$PORT_A" /_sim/stats)
check "batch elements count as calls" grep -q '"calls":{"getBlockHeight":1,"getHealth":1,"getSlot":5},"total":7,"poller_calls":{},"poller_total":0,"http_requests":5,"client_connections":' <<<"$stats"
curl -s -A "solgate-poller/0.1.0" "http://127.0.0.1:$PORT_A/" -d '{"jsonrpc":"2.0","id":1,"method":"getHealth"}' >/dev/null
stats=$(ctl "$PORT_A" /_sim/stats)
check "calls from Solgate's poller are also counted apart" grep -q '"calls":{"getBlockHeight":1,"getHealth":2,"getSlot":5},"total":8,"poller_calls":{"getHealth":1},"poller_total":1,' <<<"$stats"
ctl "$PORT_A" /_sim/reset >/dev/null
stats=$(ctl "$PORT_A" /_sim/stats)
check "reset clears counters" grep -q '"calls":{},"total":0,"poller_calls":{},"poller_total":0,"http_requests":0,"client_connections":0' <<<"$stats"
check "reset clears blocks_served" grep -q '"blocks_served":\[\]}$' <<<"$stats"

# --- what clients send besides reads -------------------------------------------
# a wire transaction, base64: one signature (the bytes 0..63), then a few
# message bytes
tx=AQABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4fICEiIyQlJicoKSorLC0uLzAxMjM0NTY3ODk6Ozw9Pj8BAAEC
body=$(rpc "$PORT_A" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"sendTransaction\",\"params\":[\"$tx\",{\"encoding\":\"base64\"}]}")
check "sendTransaction answers the first signature" grep -q '^{"jsonrpc":"2.0","result":"1GMkH3brNXiNNs1tiFZHu4yZSRrzJwxi5wB9bHFtMinfCXNnR1adh8Vo8NTheK4evneedH4qmvjeqcBBNAefgS","id":1}$' <<<"$body"
body=$(rpc "$PORT_A" '{"jsonrpc":"2.0","id":2,"method":"sendTransaction","params":["nope"]}')
check "sendTransaction refuses what is no transaction" grep -q '"code":-32602,"message":"invalid transaction: failed to deserialize"' <<<"$body"
body=$(rpc "$PORT_A" "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"simulateTransaction\",\"params\":[\"$tx\",{\"encoding\":\"base64\"}]}")
check "simulateTransaction: context and logs" grep -q '"result":{"context":{"apiVersion":"2.0.15","slot":[0-9]*},"value":{"accounts":null,"err":null,.*"unitsConsumed":150}' <<<"$body"
body=$(rpc "$PORT_A" '{"jsonrpc":"2.0","id":4,"method":"getEpochInfo"}')
check "getEpochInfo" grep -q '"result":{"absoluteSlot":[0-9]*,"blockHeight":[0-9]*,"epoch":[0-9]*,"slotIndex":[0-9]*,"slotsInEpoch":432000,"transactionCount":[0-9]*}' <<<"$body"
body=$(rpc "$PORT_A" '{"jsonrpc":"2.0","id":5,"method":"getProgramAccounts","params":["TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"]}')
check "getProgramAccounts: a bare array" grep -q '^{"jsonrpc":"2.0","result":\[{"account":{.*},"pubkey":"[1-9A-HJ-NP-Za-km-z]*"}' <<<"$body"
body=$(rpc "$PORT_A" '{"jsonrpc":"2.0","id":6,"method":"getProgramAccounts","params":["TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA",{"withContext":true}]}')
check "getProgramAccounts withContext: an envelope" grep -q '^{"jsonrpc":"2.0","result":{"context":{"apiVersion":"2.0.15","slot":[0-9]*},"value":\[{"account"' <<<"$body"
body=$(rpc "$PORT_A" '{"jsonrpc":"2.0","id":7,"method":"getSignaturesForAddress","params":["83astBRguLMdt2h5U1Tpdq5tjFoJ6noeGwaY3mDLVcri",{"limit":2}]}')
check "getSignaturesForAddress honours limit" test "$(grep -o '"signature"' <<<"$body" | wc -l)" -eq 2
sig=$(grep -o '"signature":"[^"]*"' <<<"$body" | head -1 | cut -d'"' -f4)
body=$(rpc "$PORT_A" "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"getTransaction\",\"params\":[\"$sig\",{\"maxSupportedTransactionVersion\":0}]}")
check "getTransaction: slot, meta and the signature" grep -q "^{\"jsonrpc\":\"2.0\",\"result\":\\(null\\|{\"blockTime\":[0-9]*,\"meta\":{.*\"signatures\":\\[\"$sig\"\\]}}\\),\"id\":8}$" <<<"$body"
fin=$(rpc "$PORT_A" '{"jsonrpc":"2.0","id":9,"method":"getSlot"}' | grep -o '"result":[0-9]*' | cut -d: -f2)
body=$(rpc "$PORT_A" "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"getBlocks\",\"params\":[$((fin - 20)),$fin]}")
slots=$(sed -n 's/^{"jsonrpc":"2.0","result":\[\([0-9,]*\)\],"id":9}$/\1/p' <<<"$body")
# produced slots only (a skipped one may start the range), ascending, in it
check "getBlocks lists produced slots of the range" awk -v s="$slots" -v lo=$((fin - 20)) -v hi="$fin" \
    'BEGIN { n = split(s, a, ","); if (n < 10) exit 1; for (i = 1; i <= n; i++) if (a[i] < lo || a[i] > hi || (i > 1 && a[i] <= a[i-1])) exit 1 }'

body=$(rpc "$PORT_A" "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"getBlockTime\",\"params\":[$((fin + 1000))]}")
check "getBlockTime beyond the finalized slot: -32004" grep -q '"code":-32004' <<<"$body"
ctl "$PORT_A" '/_sim/fault/behind_answers?on=1' >/dev/null
body=$(rpc "$PORT_A" '{"jsonrpc":"2.0","id":11,"method":"getBalance","params":["83astBRguLMdt2h5U1Tpdq5tjFoJ6noeGwaY3mDLVcri"]}')
check "behind_answers: clients get -32005" test "$body" = '{"jsonrpc":"2.0","error":{"code":-32005,"message":"Node is behind by 0 slots","data":{"numSlotsBehind":0}},"id":11}'
body=$(curl -s -A "solgate-poller/0.1.0" -d '{"jsonrpc":"2.0","id":12,"method":"getSlot"}' "http://127.0.0.1:$PORT_A/")
check "behind_answers: the poller is answered" grep -q '"result":[0-9]*' <<<"$body"
ctl "$PORT_A" '/_sim/fault/clear' >/dev/null
ctl "$PORT_A" '/_sim/fault/cut_answers?on=1' >/dev/null
# the whole length announced, half of the body, then the connection closed
cut=$(curl -s --max-time 10 -i -d '{"jsonrpc":"2.0","id":14,"method":"getSlot"}' "http://127.0.0.1:$PORT_A/" || true)
said=$(sed -n 's/^Content-Length: \([0-9]*\)\r$/\1/p' <<<"$cut")
got=$(printf '%s' "${cut#*$'\r\n\r\n'}" | wc -c)
check "cut_answers: half the announced body, then the end" test -n "$said" -a "$got" = "$((said / 2))"
body=$(curl -s -A "solgate-poller/0.1.0" -d '{"jsonrpc":"2.0","id":15,"method":"getSlot"}' "http://127.0.0.1:$PORT_A/")
check "cut_answers: the poller is answered whole" grep -q '"result":[0-9]*,"id":15}$' <<<"$body"
ctl "$PORT_A" '/_sim/fault/clear' >/dev/null
balance='{"jsonrpc":"2.0","id":13,"method":"getBalance","params":["83astBRguLMdt2h5U1Tpdq5tjFoJ6noeGwaY3mDLVcri"]}'
right=$(rpc "$PORT_A" "$balance" | grep -o '"value":[0-9]*' | cut -d: -f2)
ctl "$PORT_A" '/_sim/fault/wrong_value?method=getBalance' >/dev/null
wrong=$(rpc "$PORT_A" "$balance" | grep -o '"value":[0-9]*' | cut -d: -f2)
check "wrong_value: one lamport too many" test "$wrong" = "$((right + 1))"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT_A/_sim/fault/wrong_value?method=getSlot")
check "wrong_value: another method is refused" test "$code" = 400
ctl "$PORT_A" '/_sim/fault/method_latency?method=getBalance&ms=300' >/dev/null
took=$(curl -s -o /dev/null -w '%{time_total}' -d "$balance" "http://127.0.0.1:$PORT_A/")
check "method_latency: getBalance waits about 300 ms" awk -v t="$took" 'BEGIN { exit !(t >= 0.25) }'
took=$(curl -s -o /dev/null -w '%{time_total}' -d '{"jsonrpc":"2.0","id":14,"method":"getSlot"}' "http://127.0.0.1:$PORT_A/")
check "method_latency: other methods do not" awk -v t="$took" 'BEGIN { exit !(t < 0.3) }'
ctl "$PORT_A" '/_sim/fault/clear' >/dev/null
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT_A/_sim/nope")
check "unknown control path 404" test "$code" = 404

# --- archive mode (long-term storage stand-in) ----------------------------------------
start_sim ARCH "$PORT_SPARE" "${COMMON[@]}" --archive
check "archive start line" grep -q "listening on 127.0.0.1:$PORT_SPARE cluster=mainnet-beta slot-ms=100 archive" "$TMP/ARCH.log"
body=$(rpc "$PORT_SPARE" '{"jsonrpc":"2.0","id":1,"method":"getFirstAvailableBlock"}')
check "archive getFirstAvailableBlock is 0" test "$body" = '{"jsonrpc":"2.0","result":0,"id":1}'
body=$(rpc "$PORT_SPARE" '{"jsonrpc":"2.0","id":1,"method":"minimumLedgerSlot"}')
check "archive minimumLedgerSlot keeps the local ledger" test "$body" = '{"jsonrpc":"2.0","result":1000,"id":1}'
old_skipped="" old_produced=""
for s in $(seq 1 100); do
    body=$(rpc "$PORT_SPARE" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"getBlock\",\"params\":[$s,{\"transactionDetails\":\"none\",\"rewards\":false}]}")
    if grep -q '"code":-32009' <<<"$body"; then [[ -z $old_skipped ]] && old_skipped=$s
    elif grep -q '"blockhash"' <<<"$body"; then [[ -z $old_produced ]] && old_produced=$s; fi
    [[ -n $old_skipped && -n $old_produced ]] && break
done
check "archive serves a block below --first-available-block ($old_produced)" test -n "$old_produced"
check "archive skipped slot answers -32009 ($old_skipped)" test -n "$old_skipped"
if [[ -n $old_skipped ]]; then
    body=$(rpc "$PORT_SPARE" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"getBlock\",\"params\":[$old_skipped]}")
    check "-32009 message" test "$body" = "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32009,\"message\":\"Slot $old_skipped was skipped, or missing in long-term storage\"},\"id\":1}"
fi
if [[ -n $produced ]]; then
    rpc "$PORT_SPARE" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"getBlock\",\"params\":[$produced,{\"maxSupportedTransactionVersion\":0}]}" >"$TMP/block_arch.json"
    check "archive getBlock byte-identical to a normal node (slot $produced)" cmp -s "$TMP/block_a.json" "$TMP/block_arch.json"
fi
afin=$(slot_at "$PORT_SPARE" finalized)
above=$((afin + 500))
body=$(rpc "$PORT_SPARE" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"getBlock\",\"params\":[$above]}")
check "archive getBlock above finalized -32004" grep -q '"code":-32004' <<<"$body"

ctl "$PORT_SPARE" /_sim/reset >/dev/null
body=$(ctl "$PORT_SPARE" '/_sim/fault/getblock_failure_rate?rate=1')
check "getblock_failure_rate fault accepted" grep -q '"getblock_failure_rate":1,' <<<"$body"
req="{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"getBlock\",\"params\":[$old_produced,{\"transactionDetails\":\"none\"}]}"
code=$(curl -s -o "$TMP/fail.json" -w '%{http_code}' -d "$req" "http://127.0.0.1:$PORT_SPARE/")
check "storage failure answers HTTP 503" test "$code" = 503
check "storage failure body -32019" test "$(cat "$TMP/fail.json")" = '{"jsonrpc":"2.0","error":{"code":-32019,"message":"Failed to query long-term storage; please try again"},"id":5}'
code=$(curl -s -o "$TMP/fail.json" -w '%{http_code}' -d "[$req,{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"getHealth\"}]" "http://127.0.0.1:$PORT_SPARE/")
check "storage failure in a batch: 200 and an element error" grep -q '^\[{"jsonrpc":"2.0","error":{"code":-32019,.*"id":5},{"jsonrpc":"2.0","result":"ok","id":6}\]$' "$TMP/fail.json"
check "storage failure in a batch keeps HTTP 200" test "$code" = 200
stats=$(ctl "$PORT_SPARE" /_sim/stats)
check "stats count storage failures" grep -q '"archive":true,"getblock_failures":2,"blocks_served":' <<<"$stats"
# Half the attempts fail; the sequence of outcomes per slot is the same after a reset.
ctl "$PORT_SPARE" '/_sim/fault/getblock_failure_rate?rate=0.5' >/dev/null
seq_codes() {
    local out="" i
    for i in $(seq 1 12); do
        out+=$(curl -s -o /dev/null -w '%{http_code}' -d "$req" "http://127.0.0.1:$PORT_SPARE/")" "
    done
    echo "$out"
}
ctl "$PORT_SPARE" /_sim/reset >/dev/null
codes1=$(seq_codes)
ctl "$PORT_SPARE" /_sim/reset >/dev/null
codes2=$(seq_codes)
check "rate 0.5: some attempts fail, some pass ($codes1)" bash -c '[[ $1 == *200* && $1 == *503* ]]' _ "$codes1"
check "failures are deterministic per (seed, slot, attempt)" test "$codes1" = "$codes2"
ctl "$PORT_SPARE" '/_sim/fault/clear' >/dev/null
code=$(curl -s -o /dev/null -w '%{http_code}' -d "$req" "http://127.0.0.1:$PORT_SPARE/")
check "fault/clear restores the flag failure rate (0)" test "$code" = 200

ctl "$PORT_SPARE" '/_sim/fault/getblock_latency?ms=400' >/dev/null
start_ns=$(date +%s%N)
curl -s -o "$TMP/slow.json" --max-time 5 -d "$req" "http://127.0.0.1:$PORT_SPARE/" &
slow_pid=$!
sleep 0.05
h_start=$(date +%s%N)
body=$(rpc "$PORT_SPARE" '{"jsonrpc":"2.0","id":1,"method":"getHealth"}')
h_ms=$((($(date +%s%N) - h_start) / 1000000))
wait "$slow_pid"
elapsed_ms=$((($(date +%s%N) - start_ns) / 1000000))
check "getblock_latency delays getBlock (${elapsed_ms} ms)" test "$elapsed_ms" -ge 380 -a -s "$TMP/slow.json"
check "other requests are served meanwhile (${h_ms} ms)" test "$h_ms" -lt 300 -a "$body" = '{"jsonrpc":"2.0","result":"ok","id":1}'
ctl "$PORT_SPARE" '/_sim/fault/clear' >/dev/null
"$SIM" --port "$PORT_SPARE" --getblock-failure-rate 1.5 2>/dev/null
rc=$?
check "bad --getblock-failure-rate exits 2" test "$rc" -eq 2

# --- pubsub (WebSocket) port ------------------------------------------------------
PORT_WS_RPC=$((BASE + 4))
PORT_WS=$((BASE + 5))
start_sim W "$PORT_WS_RPC" --slot-ms 100 --ws-port "$PORT_WS"
check "start line names the pubsub port" grep -q "pubsub=$PORT_WS" "$TMP/W.log"
"$SIM" --port "$PORT_SPARE" --ws-port "$PORT_SPARE" 2>/dev/null
rc=$?
check "--ws-port equal to --port exits 2" test "$rc" -eq 2
while IFS= read -r line; do
    case $line in
        "ok   - "*) ok "${line#ok   - }" ;;
        "FAIL - "*) not_ok "${line#FAIL - }" ;;
        *) echo "$line" ;;
    esac
done < <(perl -I "$REPO_ROOT/t/lib" "$SCRIPT_DIR/pubsub_check.pl" "$PORT_WS_RPC" "$PORT_WS" 2>&1)

# --- clean shutdown ----------------------------------------------------------------
kill -TERM "${PIDS[1]}"
wait "${PIDS[1]}"
rc=$?
check "SIGTERM exits cleanly" test "$rc" -eq 0

echo "$PASS passed, $FAIL failed"
[[ $FAIL -eq 0 ]]
