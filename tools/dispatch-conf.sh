#!/bin/sh
# Prints conf/solgate_dispatch.conf: conf/solgate_proxy.conf with its head
# and its proxy_pass replaced, so that the two snippets forward alike.
# `tools/dispatch-conf.sh > conf/solgate_dispatch.conf` writes it;
# `make conf-check` (part of `make test`) checks it.
set -eu
proxy=${1:-$(dirname "$0")/../conf/solgate_proxy.conf}

cat <<'HEAD'
# Forwarding for a Solgate location, through the upstream {} block with
# solgate_dispatch (written by tools/dispatch-conf.sh from
# solgate_proxy.conf, which it follows but for the proxy_pass).  Include it
# beside `solgate_pass` in both locations, and define the block once in
# the http block:
#
#     upstream solgate {
#         solgate_dispatch;
#     }
#     location / {
#         solgate_pass mainnet;
#         include solgate_dispatch.conf;
#     }
#     location @solgate_retry {
#         solgate_pass mainnet;
#         include solgate_dispatch.conf;
#     }
#
# It serves a network whose upstreams, ws= endpoints and Cube Runner peers
# are all http:// (ws://) without a path, each an upstream {} block or an
# address (nginx -t says which one is not); otherwise use solgate_proxy.conf.

HEAD

awk '
    !body { if ($0 == "") body = 1; next }
    /^# The upstream Solgate chose for this attempt\./ { skip = 1 }
    skip && /^proxy_pass / {
        print "# The upstream Solgate chose for this attempt, handed over by the"
        print "# solgate_dispatch block: nginx parses no URL per request."
        print "proxy_pass                http://solgate;"
        skip = 0
        next
    }
    !skip { print }
' "$proxy"
