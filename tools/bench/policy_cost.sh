#!/usr/bin/env bash
# What each failsafe policy costs per getBalance request, in user-space
# instructions (callgrind, tools/bench/profile.sh), against Solgate with no
# policy: "off" (policies configured for other methods: the cost of being
# there unused), hedge (one attempt as a subrequest, a timer that does not
# fire), consensus and broadcast (three attempts; their counts cover all
# three).  Writes build/bench/policy_cost.txt.
#
#   tools/bench/policy_cost.sh [SECONDS]     (default 5)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SECS=${1:-5}
OUT=$ROOT/build/bench/policy_cost.txt
variants="baseline solgate solgate_off solgate_hedge solgate_consensus solgate_broadcast"

mkdir -p "$(dirname "$OUT")"
# the getBalance targets are make bench's own profile.sh run's
PROFILE_TARGETS=0 PROFILE_VARIANTS=$variants "$ROOT/tools/bench/profile.sh" balance "$SECS" > "$OUT.profile" 2>&1 \
    || { cat "$OUT.profile"; exit 1; }
perl -ne '
    BEGIN { %label = (solgate => "no policy", solgate_off => "policies for other methods",
                      solgate_hedge => "hedge getBalance (no hedge sent)",
                      solgate_consensus => "consensus getBalance, 3 participants",
                      solgate_broadcast => "broadcast getBalance to 3") }
    $ir{$1} = $2 if /^\s{2}(\w+)\s+(\d+)(\s|$)/ && !defined $ir{$1};
    END {
        die "no figures in the profile output\n" unless $ir{solgate};
        print "failsafe policy cost: getBalance, user-space instructions per request (callgrind)\n";
        printf "  %-18s %8d\n", "baseline", $ir{baseline} if $ir{baseline};
        for my $v (qw(solgate solgate_off solgate_hedge solgate_consensus solgate_broadcast)) {
            next unless $ir{$v};
            printf "  %-18s %8d  %+7d vs no policy  (%s)\n", $v, $ir{$v}, $ir{$v} - $ir{solgate}, $label{$v};
        }
    }
' "$OUT.profile" | tee "$OUT"
