#!/bin/sh
# Debian's nginx with the ASan runtime preloaded, for a module built with
# `make SANITIZE=1` (its workers are forked, so they share the runtime).
# Reports go to $SOLGATE_ASAN_LOG.PID; leaks are not checked (nginx frees
# its pools at exit only in part, by design).
asan=$(gcc -print-file-name=libasan.so)
ubsan=$(gcc -print-file-name=libubsan.so)
export LD_PRELOAD="$asan $ubsan${LD_PRELOAD:+ $LD_PRELOAD}"
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:log_path=${SOLGATE_ASAN_LOG:-/tmp/solgate-asan}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=${SOLGATE_ASAN_LOG:-/tmp/solgate-asan}"
exec "${SOLGATE_NGINX:-/usr/sbin/nginx}" "$@"
