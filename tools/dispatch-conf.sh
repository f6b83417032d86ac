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
# solgate_proxy.conf, which it follows but for the proxy_pass and the
# headers the block adds itself).  Include it beside `solgate_pass` in both
# locations, and define the block once in the http block:
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

# Each line of solgate_proxy.conf that differs here, exactly, and what
# takes its place ("" drops it); a line not found once fails the script,
# so an edit of solgate_proxy.conf that moves one is never passed over.
awk '
    BEGIN {
        swap["# The upstream Solgate chose for this attempt.  A URL naming an"] = \
            "# The upstream Solgate chose for this attempt, handed over by the"
        swap["# `upstream {}` block uses that block (its servers, keepalive, TLS)."] = \
            "# solgate_dispatch block: nginx parses no URL per request."
        swap["proxy_pass                $solgate_upstream_url;"] = \
            "proxy_pass                http://solgate;"
        swap["# Cube Runner: when Solgate asks another region\x27s gateway for a block, it"] = \
            "# Cube Runner: when Solgate asks another region\x27s gateway for a block, the"
        swap["# says so with this header (empty, so not sent, for every other attempt)."] = \
            "# solgate_dispatch block adds this header, with the token, to that request\n" \
            "# alone; \"\" keeps a client\x27s own from reaching nodes and vendors."
        swap["proxy_set_header          X-Solgate-Peer $solgate_peer_token;"] = \
            "proxy_set_header          X-Solgate-Peer \"\";"
        swap["# request, sent to the upstream\x27s ws= endpoint) the upgrade instead."] = \
            "# request, sent to the upstream\x27s ws= endpoint) the solgate_dispatch block\n" \
            "# adds the upgrade\x27s Connection and Upgrade headers to that request alone."
        swap["proxy_set_header          Connection $solgate_connection;"] = \
            "proxy_set_header          Connection \"\";"
        swap["proxy_set_header          Upgrade $solgate_upgrade;"] = ""
    }
    !body { if ($0 == "") body = 1; next }
    $0 in swap {
        seen[$0]++
        if (swap[$0] != "") print swap[$0]
        next
    }
    { print }
    END {
        for (line in swap) {
            if (seen[line] != 1) {
                printf "dispatch-conf.sh: %s: \"%s\" found %d times, not once\n", \
                       FILENAME, line, seen[line] > "/dev/stderr"
                failed = 1
            }
        }
        exit failed
    }
' "$proxy"
