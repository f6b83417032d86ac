#!/usr/bin/env bash
# Solgate benchmark: bare proxy_pass vs a lua-nginx router vs Solgate, in
# front of the same fixed-answer nginx upstream.  `make bench` runs it.
# See tools/bench/README.md.  Loopback only, ports 19600-19699; every
# process it starts is stopped on exit.
#
# Environment:
#   BENCH_ROUNDS        rounds per scenario (default 3); variants interleave
#   BENCH_SECONDS       seconds each variant is measured per round (default 5)
#   BENCH_SLICE         seconds per slice (default 1): a round measures the
#                       variants in turn, a slice each, until each has had
#                       BENCH_SECONDS, so the machine's drift falls on all alike
#   BENCH_WARMUP        seconds of warm-up per variant before a scenario's
#                       first round (default 1)
#   BENCH_CONNECTIONS   wrk connections (default 16)
#   BENCH_SCENARIOS     subset, e.g. "getslot block" (default: all six)
#   BENCH_FLEET         1 (default): getslot and balance also run Solgate in fleet
#                       mode (solgate_fleet, over a redis-server of its own); 0: not
#   BENCH_POLL_SECONDS  seconds per poll_cost.sh measurement (default 10; 0 skips it)
#   BENCH_UPSTREAM_CPU  CPU the upstream nginx and solana-sim run on (default 1)
#   BENCH_FOREIGN_MAX   share of a CPU other (long-lived) processes may take during
#                       a run before it is measured again (default 0.10)
#   BENCH_FORKS_MAX     forks on the machine during a run before it counts as
#                       disturbed too (default 40; builds fork a lot)
#   BENCH_KERNEL_MAX    CPU busy outside the benchmark's processes (pinned: CPU 0
#                       outside the gateway worker) above which a run is measured
#                       again (default 0.15; the kernel moved its network work
#                       into interrupt context)
#   BENCH_PIN           0 (default): the gateway worker is not pinned, and its whole
#                       CPU time per request is the headline; 1: pinned to CPU 0
#                       alone, CPU 0's busy time per request is shown beside it
#   BENCH_RETRIES       re-measurements per slice (default 2), BENCH_MAX_RETRIES in all (30)
#   SOLGATE_NGINX       nginx binary (default /usr/sbin/nginx)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE=$ROOT/tools/bench
source "$HERE/lib.sh"
bench_defaults
WORK=$ROOT/build/bench
ROUNDS=${BENCH_ROUNDS:-3}
SECONDS_PER_RUN=${BENCH_SECONDS:-5}
SLICE=${BENCH_SLICE:-1}
WARMUP=${BENCH_WARMUP:-1}
CONNS=${BENCH_CONNECTIONS:-16}
POLL_SECONDS=${BENCH_POLL_SECONDS:-10}
FOREIGN_MAX=${BENCH_FOREIGN_MAX:-0.10}
KERNEL_MAX=${BENCH_KERNEL_MAX:-0.15}
FORKS_MAX=${BENCH_FORKS_MAX:-40}
RETRIES=${BENCH_RETRIES:-2}
MAX_RETRIES=${BENCH_MAX_RETRIES:-30}
SCENARIOS=${BENCH_SCENARIOS:-$ALL_SCENARIOS}
VARIANTS="baseline lua solgate"
# Fleet mode costs nothing on the request path by design (it reads shared
# memory); the forwarding scenarios show it, beside plain Solgate.
FLEET_SCENARIOS=$([ "${BENCH_FLEET:-1}" = 1 ] && echo "getslot balance" || true)
REDIS_PORT=19650
variants_of() {
    case " $FLEET_SCENARIOS " in
        *" $1 "*) echo "$VARIANTS solgate_fleet" ;;
        *) echo "$VARIANTS" ;;
    esac
}

# Ports of the gateways and of poll_cost.sh (the upstream's are in lib.sh).
declare -A GW_PORT=([baseline]=19630 [lua]=19631 [solgate]=19632 [solgate_fleet]=19633)
POLL_GW_PORT=19690
POLL_SIM_PORT=19691

for s in $SCENARIOS; do
    case " $ALL_SCENARIOS " in *" $s "*) ;; *) echo "unknown scenario: $s" >&2; exit 2 ;; esac
done
case "$SECONDS_PER_RUN $SLICE" in
    *[!0-9\ ]*|0\ *|*\ 0) echo "BENCH_SECONDS and BENCH_SLICE must be whole seconds above 0" >&2; exit 2 ;;
esac
[ $((SECONDS_PER_RUN % SLICE)) = 0 ] \
    || { echo "BENCH_SECONDS ($SECONDS_PER_RUN) must be a multiple of BENCH_SLICE ($SLICE)" >&2; exit 2; }
SLICES=$((SECONDS_PER_RUN / SLICE))

on_exit() {
    local rc=$?
    trap - EXIT INT TERM
    bench_cleanup
    exit "$rc"
}
trap on_exit EXIT
trap 'exit 130' INT TERM

bench_check_tools
T0=$(date +%s)
rm -rf "$WORK/up" "$WORK/gw" "$WORK/runs" "$WORK/log_warnings.txt"
mkdir -p "$WORK/up" "$WORK/gw" "$WORK/runs" "$WORK/req"
RAW=$WORK/raw.tsv
SLICES_TSV=$WORK/slices.tsv
REDIS_OPS=$WORK/redis_ops.tsv
# commands: what the fleet gateway sent (its round-trip histogram's count);
# operations: what redis-server executed (a script's own calls counted)
printf 'scenario\tcommands\toperations\tseconds\n' > "$REDIS_OPS"
fleet_commands() {
    curl -s -m 2 "http://127.0.0.1:${GW_PORT[solgate_fleet]}/_bench/metrics" \
        | sed -n 's/^solgate_shared_state_round_trip_seconds_count{[^}]*} \([0-9]*\)$/\1/p'
}
REDIS_PID=
for s in $SCENARIOS; do
    case " $FLEET_SCENARIOS " in *" $s "*)
        bench_start_redis "$WORK/redis" "$REDIS_PORT"
        REDIS_PID=$STARTED_PID
        break ;;
    esac
done
MEM=$WORK/mem.tsv
printf 'scenario\tvariant\tround\trequests\tduration_us\tbytes\tp50_us\tp99_us\tmax_us\tgw_cpu\tup_cpu\twrk_cpu\tcpu0_busy\tcpu1_busy\tkernel_out\tforks\tforeign\trss_before_kb\trss_after_kb\thwm_kb\tdisturbed\tretries\n' > "$RAW"
printf 'scenario\tvariant\tround\tslice\trequests\tduration_us\tbytes\tp50_us\tp99_us\tmax_us\tgw_cpu\tup_cpu\twrk_cpu\tcpu0_busy\tcpu1_busy\tkernel_out\tforks\tforeign\trss_before_kb\trss_after_kb\thwm_kb\tdisturbed\tretries\n' > "$SLICES_TSV"
printf 'scenario\tvariant\trss_start_kb\trss_end_kb\thwm_end_kb\n' > "$MEM"

for s in $ALL_SCENARIOS; do printf '%s' "${REQ[$s]}" > "$WORK/req/$s.json"; done
bench_start_upstream "$WORK/up"

bench_log "upstream ready (block answer $BLOCK_BYTES bytes); scenarios: $SCENARIOS; $ROUNDS rounds x ${SECONDS_PER_RUN}s per variant in ${SLICE}s slices taken in turn (+${WARMUP}s warm-up per variant and scenario), wrk -t1 -c$CONNS"

# ---- one measured run ---------------------------------------------------------------

# wrk_run SCENARIO VARIANT SECONDS OUT: runs wrk on CPU 1, leaves its output.
wrk_run() {
    local s=$1 v=$2 secs=$3 out=$4
    BENCH_BODY=$WORK/req/$s.json BENCH_EXPECT=${EXPECT[$s]} \
        timeout $((secs + 30)) taskset -c 1 wrk -t1 -c"$CONNS" -d"${secs}s" --latency \
        -s "$HERE/wrk_post.lua" "http://127.0.0.1:${GW_PORT[$v]}/" > "$out" 2>&1
}

# check_wrk SCENARIO VARIANT OUT: fail loudly on any error or bad answer.
check_wrk() {
    local s=$1 v=$2 out=$3 line
    line=$(grep '^BENCH ' "$out") || { cat "$out" >&2; bench_die "$s/$v: no BENCH line from wrk"; }
    local requests errs bad bytes
    requests=$(sed -n 's/.* requests=\([0-9]*\).*/\1/p' <<< "$line")
    bytes=$(sed -n 's/.* bytes=\([0-9]*\).*/\1/p' <<< "$line")
    errs=$(awk '{ n = 0; for (i = 2; i <= NF; i++) if ($i ~ /^err_/) { split($i, kv, "="); n += kv[2] } print n }' <<< "$line")
    bad=$(sed -n 's/.* bad_body=\([0-9]*\).*/\1/p' <<< "$line")
    if [ "$requests" -le 0 ] || [ "$errs" -ne 0 ] || [ "$bad" -ne 0 ]; then
        cat "$out" >&2
        tail -5 "$WORK/gw/$v/logs/error.log" >&2 2>/dev/null || true
        bench_die "$s/$v: $requests requests, $errs errors (non-2xx or socket), $bad wrong bodies"
    fi
    if [ "$s" = block ] && [ $((bytes / requests)) -lt "$BLOCK_MIN_BYTES" ]; then
        cat "$out" >&2
        bench_die "$s/$v: $((bytes / requests)) bytes per answer, expected >= $BLOCK_MIN_BYTES"
    fi
}

# warm_up SCENARIO VARIANT: a run that is not measured, so the first slice
# does not pay for opening the upstream's connections.
warm_up() {
    local s=$1 v=$2 out=$WORK/runs/$1-$2.warmup
    wrk_run "$s" "$v" "$WARMUP" "$out" || { cat "$out" >&2; bench_die "wrk failed for $s/$v"; }
    check_wrk "$s" "$v" "$out"
}

# measure_once SCENARIO VARIANT ROUND SLICE: one measured slice; sets
# MEASURED (one slices.tsv line, without the flag columns), FOREIGN (share of a
# CPU used by processes other than ours), FORKS and KERNEL_OUT (CPU busy
# outside the benchmark's processes, in interrupt context; pinned: CPU 0
# busy outside the gateway worker).
measure_once() {
    local s=$1 v=$2 r=$3 k=$4
    local worker=${GW_WORKER[$v]}
    local out=$WORK/runs/$s-$v-$r-$k.txt
    local rss_before gw0 up0 sim0
    rss_before=$(status_kb "$worker" VmRSS)
    gw0=$(cpu_ticks "$worker"); up0=$(cpu_ticks "$UP_WORKER"); sim0=$(cpu_ticks "$SIM_PID")
    cpu_snap "$WORK/snap.before"
    local TIMEFORMAT='%U %S'
    if ! { time wrk_run "$s" "$v" "$SLICE" "$out"; } 2> "$out.time"; then
        cat "$out" >&2; bench_die "wrk failed for $s/$v"
    fi
    cpu_snap "$WORK/snap.after"
    local gw1 up1 sim1
    gw1=$(cpu_ticks "$worker"); up1=$(cpu_ticks "$UP_WORKER"); sim1=$(cpu_ticks "$SIM_PID")
    check_wrk "$s" "$v" "$out"

    local line hz
    hz=$(getconf CLK_TCK)
    line=$(grep '^BENCH ' "$out")
    get() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<< "$line"; }
    local dur_us wrk_cpu gw_cpu up_cpu sim_cpu
    dur_us=$(get duration_us)
    share() { awk -v a="$1" -v b="$2" -v hz="$hz" -v d="$dur_us" 'BEGIN { printf "%.3f", (b - a) / hz / (d / 1e6) }'; }
    wrk_cpu=$(awk -v d="$dur_us" '{ printf "%.3f", ($1 + $2) / (d / 1e6) }' "$out.time")
    gw_cpu=$(share "$gw0" "$gw1"); up_cpu=$(share "$up0" "$up1"); sim_cpu=$(share "$sim0" "$sim1")
    # Busy share of each CPU; "foreign": CPU used by processes that are not
    # ours (other sessions' builds and tests); "kernel_out": busy time no
    # process was charged for (pinned: CPU 0 outside the gateway worker),
    # i.e. network work the kernel did in interrupt context instead of
    # charging it to the worker.
    local cpu0 cpu1 fticks forks
    read -r cpu0 cpu1 fticks forks < <(cpu_delta "$WORK/snap.before" "$WORK/snap.after" \
        $$ "${GW_MASTER[@]}" "${GW_WORKER[@]}" "$UP_MASTER" "$UP_WORKER" "$SIM_PID" ${REDIS_PID:+"$REDIS_PID"})
    FOREIGN=$(share 0 "$fticks")
    FORKS=$forks
    if [ "$GATEWAY_PIN" = 1 ]; then
        KERNEL_OUT=$(awk -v c="$cpu0" -v g="$gw_cpu" 'BEGIN { printf "%.3f", c - g }')
    else
        KERNEL_OUT=$(awk -v c0="$cpu0" -v c1="$cpu1" -v g="$gw_cpu" -v u="$up_cpu" -v w="$wrk_cpu" \
            -v m="$sim_cpu" -v f="$FOREIGN" 'BEGIN { printf "%.3f", c0 + c1 - g - u - w - m - f }')
    fi
    MEASURED=$(printf '%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s' \
        "$s" "$v" "$r" "$k" "$(get requests)" "$dur_us" "$(get bytes)" "$(get p50_us)" "$(get p99_us)" "$(get max_us)" \
        "$gw_cpu" "$up_cpu" "$wrk_cpu" "$cpu0" "$cpu1" "$KERNEL_OUT" "$FORKS" "$FOREIGN" \
        "$rss_before" "$(status_kb "$worker" VmRSS)" "$(status_kb "$worker" VmHWM)")
}

# measure SCENARIO VARIANT ROUND SLICE: measure_once, again when the slice
# was disturbed (at most BENCH_RETRIES times per slice and BENCH_MAX_RETRIES
# in all); a slice still disturbed is kept and flagged (1 or 2 in
# slices.tsv, and its round in raw.tsv).
RETRIES_LEFT=$MAX_RETRIES
measure() {
    local s=$1 v=$2 r=$3 k=$4 attempt=0 disturbed
    while :; do
        measure_once "$s" "$v" "$r" "$k"
        # 1: other processes took CPU (or a build forked a lot); 2: the
        # kernel did the gateway's network work in interrupt context instead
        # of charging it to the worker (a different, faster data path that
        # makes runs incomparable; seen for minutes at a time)
        disturbed=$(awk -v f="$FOREIGN" -v m="$FOREIGN_MAX" -v k="$FORKS" -v km="$FORKS_MAX" \
            -v n="$KERNEL_OUT" -v nm="$KERNEL_MAX" 'BEGIN { print (f > m || k > km) ? 1 : (n > nm) ? 2 : 0 }')
        [ "$disturbed" != 0 ] || break
        local why="other processes used $FOREIGN of a CPU and forked $FORKS times"
        [ "$disturbed" = 2 ] && why="the kernel spent $KERNEL_OUT of a CPU outside the benchmark's processes (its network path changed)"
        if [ "$attempt" -ge "$RETRIES" ] || [ "$RETRIES_LEFT" -le 0 ]; then
            bench_log "$s/$v round $r slice $k: $why; keeping the slice, flagged"
            break
        fi
        attempt=$((attempt + 1)); RETRIES_LEFT=$((RETRIES_LEFT - 1))
        bench_log "$s/$v round $r slice $k: $why; measuring again"
        sleep 1
    done
    printf '%s\t%s\t%s\n' "$MEASURED" "$disturbed" "$attempt" >> "$SLICES_TSV"
}

# round_row SCENARIO VARIANT ROUND: the round's slices of the variant as one
# raw.tsv line: counts and bytes added up, CPU shares weighted by each
# slice's duration (so gw us/req is the round's CPU time over its
# requests), p50 and p99 the slices' medians, max the largest, RSS before
# the first slice and after the last, the worst flag and all the retries;
# and the round's line in the log.
round_row() {
    awk -F'\t' -v s="$1" -v v="$2" -v r="$3" '
        function median(a, n,   i, j, x) {
            for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
            return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
        }
        $1 == s && $2 == v && $3 == r {
            n++; req += $5; dur += $6; bytes += $7; p50[n] = $8; p99[n] = $9; if ($10 > mx) mx = $10
            for (i = 11; i <= 16; i++) w[i] += $i * $6
            forks += $17; w[18] += $18 * $6
            if (n == 1) rss0 = $19
            rss1 = $20; hwm = $21; if ($22 > flag) flag = $22; retries += $23
        }
        END {
            if (n == 0 || dur == 0) exit 1
            printf "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d", s, v, r, req, dur, bytes, median(p50, n), median(p99, n), mx
            for (i = 11; i <= 16; i++) printf "\t%.3f", w[i] / dur
            printf "\t%d\t%.3f\t%d\t%d\t%d\t%d\t%d\n", forks, w[18] / dur, rss0, rss1, hwm, flag, retries
        }' "$SLICES_TSV" >> "$RAW" || bench_die "$1/$2 round $3: no slices measured"
    tail -n 1 "$RAW" | awk -F'\t' '{ rps = $4 / ($5 / 1e6)
        printf "[bench]   %-22s %9.0f req/s  p99 %7.3f ms  gateway worker %3.0f%% %6.1f us/req  cpu0 %3.0f%%  upstream %3.0f%%  cpu1 %3.0f%%  foreign %3.0f%% %d forks\n",
            $1 "/" $2 " round " $3, rps, $8 / 1000, $10 * 100, $10 * 1e6 / rps, $13 * 100, $11 * 100, $14 * 100, $17 * 100, $16 }' >&2
}

# ---- scenarios --------------------------------------------------------------

declare -A GW_MASTER GW_WORKER
for s in $SCENARIOS; do
    bench_log "scenario $s: starting gateways"
    SCENARIO_VARIANTS=$(variants_of "$s")
    for v in $SCENARIO_VARIANTS; do
        rm -rf "$WORK/gw/$v"
        write_gateway_conf "$v" "$WORK/gw/$v" "${GW_PORT[$v]}" "${UP_PORT[$s]}"
        start_nginx "$WORK/gw/$v"
        GW_MASTER[$v]=$STARTED_PID
    done
    for v in $SCENARIO_VARIANTS; do
        wait_http "http://127.0.0.1:${GW_PORT[$v]}/_bench/ready" || bench_die "gateway $v did not start (see $WORK/gw/$v/logs)"
        GW_WORKER[$v]=$(worker_of "${GW_MASTER[$v]}") || bench_die "gateway $v has no worker"
    done
    # Solgate: wait until the poller knows the upstream's slots (the guard
    # needs the shred-insert frontier).
    for v in $SCENARIO_VARIANTS; do
        case $v in solgate*) ;; *) continue ;; esac
        ready=0
        for _ in $(seq 100); do
            if curl -s -m 1 "http://127.0.0.1:${GW_PORT[$v]}/_bench/metrics" \
                | grep -Eq '^solgate_network_indexed_tip_slot\{[^}]*\} [1-9]'; then ready=1; break; fi
            sleep 0.1
        done
        [ "$ready" = 1 ] || bench_die "$v's poller did not learn the frontier in 10 s (see $WORK/gw/$v/logs/error.log)"
    done
    # One request per variant, checked by hand before measuring.
    for v in $SCENARIO_VARIANTS; do
        check_answer "$s/$v" "http://127.0.0.1:${GW_PORT[$v]}/" "${REQ[$s]}" "${EXPECT[$s]}"
        printf '%s\t%s\t%s\n' "$s" "$v" "$(status_kb "${GW_WORKER[$v]}" VmRSS)" > "$WORK/runs/$s-$v.rss_start"
    done
    redis0=$(redis_commands) sent0=$(fleet_commands) t0=$(date +%s.%N)
    for v in $SCENARIO_VARIANTS; do warm_up "$s" "$v"; done
    # Each round takes the variants in turn, a slice each, the first of the
    # turn moving on by one every slice.
    set -- $SCENARIO_VARIANTS
    for r in $(seq "$ROUNDS"); do
        for k in $(seq "$SLICES"); do
            for i in $(seq 0 $(($# - 1))); do
                j=$(( (i + k - 1) % $# + 1 ))
                measure "$s" "${!j}" "$r" "$k"
            done
        done
        for v in $SCENARIO_VARIANTS; do round_row "$s" "$v" "$r"; done
    done
    case " $SCENARIO_VARIANTS " in *" solgate_fleet "*)
        # the fleet gateway's commands while the scenario ran
        awk -v s="$s" -v a="$redis0" -v b="$(redis_commands)" -v c="$sent0" -v d="$(fleet_commands)" \
            -v t0="$t0" -v t1="$(date +%s.%N)" \
            'BEGIN { printf "%s\t%d\t%d\t%.3f\n", s, d - c, b - a - 1, t1 - t0 }' >> "$REDIS_OPS" ;;
    esac
    for v in $SCENARIO_VARIANTS; do
        w=${GW_WORKER[$v]}
        printf '%s\t%s\t%s\t%s\t%s\n' "$s" "$v" "$(cut -f3 "$WORK/runs/$s-$v.rss_start")" \
            "$(status_kb "$w" VmRSS)" "$(status_kb "$w" VmHWM)" >> "$MEM"
        # warn lines would mean the variant did something unexpected
        n=$(grep -c '\[\(warn\|error\|crit\|alert\|emerg\)\]' "$WORK/gw/$v/logs/error.log" 2>/dev/null || true)
        if [ "${n:-0}" -gt 0 ]; then
            cp "$WORK/gw/$v/logs/error.log" "$WORK/runs/$s-$v.error.log"
            printf '%s/%s: %d warn-or-worse lines in the error log (build/bench/runs/%s-%s.error.log), first: %s\n' \
                "$s" "$v" "$n" "$s" "$v" "$(grep -m1 '\[\(warn\|error\|crit\|alert\|emerg\)\]' "$WORK/gw/$v/logs/error.log" | cut -c1-200)" \
                >> "$WORK/log_warnings.txt"
        fi
        stop_pid "${GW_MASTER[$v]}"
        forget_pid "${GW_MASTER[$v]}"
    done
done

# ---- poll cost (tools/bench/poll_cost.sh) ------------------------------------

POLL_OUT=$WORK/poll_cost.txt
if [ "$POLL_SECONDS" != 0 ]; then
    bench_log "poll cost: tools/bench/poll_cost.sh $POLL_SECONDS (4 measurements)"
    POLL_GW_PORT=$POLL_GW_PORT POLL_SIM_PORT=$POLL_SIM_PORT SOLGATE_NGINX=$NGINX_BIN \
        timeout $((POLL_SECONDS * 4 + 120)) "$HERE/poll_cost.sh" "$POLL_SECONDS" > "$POLL_OUT" 2> "$WORK/poll_cost.err" \
        || { cat "$WORK/poll_cost.err" >&2; bench_die "poll_cost.sh failed"; }
else
    : > "$POLL_OUT"
fi

# ---- shared memory per upstream ------------------------------------------------

SHM_OUT=$WORK/shm.txt
{
    g++ -std=c++17 -I"$ROOT/libcore/src" -I"$ROOT/libcore/include" -o "$WORK/shm_size" "$HERE/shm_size.cpp" 2> "$WORK/shm_size.err" \
        && "$WORK/shm_size" || echo "sizes unavailable"
    mkdir -p "$WORK/shm/conf" "$WORK/shm/logs"
    cat > "$WORK/shm/conf/nginx.conf" <<CONF
load_module $MODULE;
error_log $WORK/shm/logs/error.log warn;
pid $WORK/shm/logs/nginx.pid;
events { }
http {
    solgate_network bench { zone 32k; upstream node http://127.0.0.1:$SIM_PORT; }
}
CONF
    msg=$("$NGINX_BIN" -t -p "$WORK/shm/" -e "$WORK/shm/logs/error.log" -c conf/nginx.conf 2>&1 || true)
    min=$(sed -n 's/.*the minimum is \([0-9]*\)k.*/\1/p' <<< "$msg" | head -1)
    echo "zone_minimum_kb ${min:-unknown}"
    echo "zone_message $(grep -o 'zone .* minimum is [0-9]*k' <<< "$msg" | head -1)"
} > "$SHM_OUT"

T1=$(date +%s)
bench_cleanup
perl "$HERE/report.pl" --work "$WORK" --rounds "$ROUNDS" --seconds "$SECONDS_PER_RUN" --slice "$SLICE" \
    --warmup "$WARMUP" --connections "$CONNS" --elapsed $((T1 - T0)) --block-bytes "$BLOCK_BYTES" \
    --upstream-cpu "$UPSTREAM_CPU" --pinned "$GATEWAY_PIN"
