#!/usr/bin/env bash
# Instructions per forwarded request in libcore, sg_ call by sg_ call
# (tools/bench/request_cost.cpp): compiles it against
# build/modules/libsolgate_core.so, runs it under callgrind and prints,
# per round, the whole and each call's inclusive cost.  Opens no port.
# Output: build/bench/request_cost/.
#
#   tools/bench/request_cost.sh [ROUNDS] [BODY]   (default: 20000, getBalance)
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
out=$root/build/bench/request_cost
bin=$out/request_cost
rounds=${1:-20000}
lib=$root/build/modules
[ -f "$lib/libsolgate_core.so" ] || { echo "request_cost: $lib/libsolgate_core.so missing: run make all first" >&2; exit 1; }
mkdir -p "$out"
# against the shared core, as nginx loads it: its thread_locals cost what
# they cost there (__tls_get_addr)
${CXX:-g++} -std=c++17 -O2 -g -Wall -Wextra -Werror -I"$root/libcore/include" \
    -o "$bin" "$root/tools/bench/request_cost.cpp" -L"$lib" -Wl,-rpath,"$lib" -lsolgate_core
rm -f "$out"/callgrind.out
valgrind --tool=callgrind --callgrind-out-file="$out/callgrind.out" \
    --toggle-collect='*Measure*' "$bin" "$rounds" ${2:+"$2"} > "$out/run.log" 2>&1 \
    || { cat "$out/run.log"; exit 1; }
callgrind_annotate --inclusive=yes --threshold=100 "$out/callgrind.out" \
    > "$out/annotate.txt"
callgrind_annotate --threshold=99 "$out/callgrind.out" > "$out/self.txt"
# "12,345,678 (99.0%)  file:function [object]": a function inlined from
# several files has a line per file; its inclusive cost is the largest.
inclusive() {   # label, regex
    awk -v rounds="$rounds" -v label="$1" -v re="$2" '
        $0 ~ re { n = $1; gsub(",", "", n); if (n + 0 > max) max = n + 0 }
        END { printf "  %-36s %7.0f\n", label, max / rounds }' "$out/annotate.txt"
}
echo "instructions per round ($rounds rounds; callgrind, inclusive)"
inclusive "the whole request" "PROGRAM TOTALS"
inclusive "sg_request_parse" ":sg_request_parse( |$)"
inclusive "  ParseRpcRequestInto" "solgate::ParseRpcRequestInto\\("
for call in route fanout pick report finish free; do
    inclusive "sg_request_$call" ":sg_request_$call( |$)"
done
for call in new feed finish free; do
    inclusive "sg_response_$call" ":sg_response_$call( |$)"
done
inclusive "__tls_get_addr (everywhere)" ":__tls_get_addr "
echo "self costs: $out/self.txt; inclusive: $out/annotate.txt"
