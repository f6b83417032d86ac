#!/bin/sh
# Prints conf/solgate_dispatch.conf: conf/solgate_proxy.conf with its head,
# its proxy_pass and its variable headers replaced (the solgate_dispatch
# block adds those to the attempts that have them), so that the two
# snippets forward alike.
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
    /^# Cube Runner: when Solgate asks/ { skip = 1 }
    skip && /^proxy_set_header +X-Solgate-Peer / {
        print "# Cube Runner: when Solgate asks another region\x27s gateway for a block, the"
        print "# solgate_dispatch block adds this header, with the token, to that request"
        print "# alone; \"\" keeps a client\x27s own from reaching nodes and vendors."
        print "proxy_set_header          X-Solgate-Peer \"\";"
        skip = 0
        next
    }
    /^# Keep-alive to upstreams;/ { skip = 1 }
    skip && /^proxy_set_header +Upgrade / {
        print "# Keep-alive to upstreams; for a WebSocket subscription (an upgrade"
        print "# request, sent to the upstream\x27s ws= endpoint) the solgate_dispatch block"
        print "# adds the upgrade\x27s Connection and Upgrade headers to that request alone."
        print "proxy_http_version        1.1;"
        print "proxy_set_header          Connection \"\";"
        skip = 0
        next
    }
    !skip { print }
' "$proxy"
