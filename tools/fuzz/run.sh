#!/usr/bin/env bash
# Runs each libFuzzer harness for SECONDS from its seed corpus and prints
# the executions it made; exits non-zero on the first finding (the input
# is kept under DIR/artifacts).
#
#   tools/fuzz/run.sh SECONDS DIR BINARY...
set -euo pipefail

seconds=$1 dir=$2
shift 2
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$dir/artifacts"
status=0
for bin in "$@"; do
    name=$(basename "$bin")
    work=$dir/corpus/$name
    seeds=$root/fuzz/corpus/${name%_fuzzer}
    mkdir -p "$work"
    log=$dir/$name.log
    if "$bin" -max_total_time="$seconds" -print_final_stats=1 -timeout=10 \
           -rss_limit_mb=2048 -artifact_prefix="$dir/artifacts/$name-" \
           "$work" "$seeds" > "$log" 2>&1; then
        execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
        printf 'fuzz %-30s ok   %10s execs in %ss\n' "$name" "${execs:-?}" "$seconds"
    else
        printf 'fuzz %-30s FAIL (see %s)\n' "$name" "$log"
        grep -E 'ERROR|property violated|SUMMARY' "$log" | head -5 || true
        status=1
    fi
done
exit $status
