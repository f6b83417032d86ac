#!/usr/bin/env bash
# libcore timings and figures (tools/bench/core_bench.cpp): compiles the
# benchmark against the libcore objects `make all` left in build/libcore
# and runs it.  Writes build/bench/core_bench.json.
#
#   tools/bench/core_bench.sh [glob|queue|poller_stop|receipts|scanner ...]
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
out=$root/build/bench
bin=$out/core_bench
# the objects of today's sources (a renamed source leaves a stale object)
mapfile -t objs < <(cd "$root/libcore/src" && for f in */*.cpp; do
    echo "$root/build/libcore/${f%.cpp}.o"; done)
for o in "${objs[@]}"; do
    [ -f "$o" ] || { echo "core_bench: $o missing: run make all first" >&2; exit 1; }
done
mkdir -p "$out"
src=$root/tools/bench/core_bench.cpp
if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ] || [ -n "$(for o in "${objs[@]}"; do [ "$o" -nt "$bin" ] && echo "$o"; done | head -1)" ]; then
    ${CXX:-g++} -std=c++17 -O2 -g -Wall -Wextra -Werror \
        -I"$root/libcore/include" -I"$root/libcore/src" -I"$root/libcore/test" \
        -o "$bin" "$src" "${objs[@]}" \
        -lyajl -luv -lcurl -lcrypto -llmdb -lhiredis -lpthread
fi
echo "libcore figures (tools/bench/core_bench.cpp; the workloads of the libcore tests named there)"
CORE_BENCH_JSON=$out/core_bench.json "$bin" "$@"
