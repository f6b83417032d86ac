# Use-upstream selectors and lanes against four simulated nodes in two tag
# families: "fast" nodes at the cluster tip, "slow" nodes 60 slots behind.

use Test::Nginx::Socket 'no_plan';
use Solgate::Sim;
use Solgate::TestConf;
use Solgate::Gateway;

our @Fast = (19871, 19872);
our @Slow = (19873, 19874);
sim_start(port => $_, args => ['--quiet']) for @Fast, @Slow;
sim_fault($_, 'lag', slots => 60) for @Slow;

our $HttpConfig = <<"_EOC_";
    solgate_network mainnet {
        cluster mainnet-beta;
        use_upstream_default "family:fast";
        upstream fast-a http://127.0.0.1:$Fast[0] tags=family:fast;
        upstream fast-b http://127.0.0.1:$Fast[1] tags=family:fast;
        upstream slow-a http://127.0.0.1:$Slow[0] tags=family:slow;
        upstream slow-b http://127.0.0.1:$Slow[1] tags=family:slow ignore_methods=getBalance;
    }
_EOC_

our $Config = solgate_locations('mainnet', extra => join "\n        ",
        'add_header X-Solgate-Upstream $solgate_upstream always;',
        'add_header X-Solgate-Lane $solgate_lane always;')
  . "    location /solgate/ { solgate_admin; }\n"
  . "    location = /metrics { solgate_metrics; }\n";

our $Bad = "[error]\n[alert]\n[crit]\n[emerg]\n";

# twelve getSlot(processed) pinned to the slow family, then one with the
# default selector; %View is the poller's view in between
our @LaneTraffic = (
    @{ rpc_requests('/', map { [$_, 'getSlot', '[{"commitment":"processed"}]'] } 1 .. 12) },
    step { %main::View = map { $_->{id} => $_->{processed_slot} } upstreams() },
    rpc_request('/', 99, 'getSlot', '[{"commitment":"processed"}]'));
our @LaneHeaders = (('X-Solgate-Use-Upstream: family:slow') x 12, '');
# A getSlot picks only the axis it is corrected with; the poller's tick
# refreshes both axes of every lane.
our $LanesRefreshed = step {
    wait_until(sub { metric(qr/^solgate_network_served_tip_slot\{network="mainnet",lane="fast",lane_key="grp:[0-9a-f]{16}",axis="finalized"\} ([1-9]\d*)$/m) },
               5, 'the poller refreshed the lanes');
};

add_block_preprocessor(sub {
    my $block = shift;
    $block->set_value(http_config => $HttpConfig) unless defined $block->http_config;
    $block->set_value(config => $Config) unless defined $block->config;
    $block->set_value(wait_for => ['the poller has slot views of all four nodes',
        sub { (grep { $_->{processed_slot} > 0 } upstreams()) == 4 }, 3])
        unless defined $block->wait_for;
    $block->set_value(no_error_log => $Bad) unless defined $block->no_error_log;
    $block->set_value(no_shutdown_error_log => $Bad)
        unless defined $block->no_shutdown_error_log;
});

no_root_location();
run_tests();

__DATA__

=== TEST 1: pinned to one family: routed only there, with that family's tip
--- request eval: [@LaneTraffic]
--- more_headers eval: [@LaneHeaders]
--- check
my @pinned = @_[0 .. 11];
my %went = map { $_->{headers}{'x-solgate-upstream'} => 1 } @pinned;
my %lanes = map { $_->{headers}{'x-solgate-lane'} => 1 } @pinned;
my @slots = map { $_->{body} =~ /"result":(\d+)/ } @pinned;
is_deeply([sort keys %went], ['slow-a', 'slow-b'], 'pinned to family:slow: only slow nodes');
is_deeply([keys %lanes], ['slow'], 'the lane is named "slow"');

my %view = %main::View;
my ($max_slow) = sort { $b <=> $a } @view{qw(slow-a slow-b)};
my ($max_slot) = sort { $b <=> $a } @slots;
ok($max_slot <= $max_slow + 2,
   "getSlot answers come from the slow family's tip ($max_slot, slow nodes at $max_slow, fast at $view{'fast-a'})");
ok($view{'fast-a'} - $max_slot >= 50, 'and not from the fast nodes 60 slots ahead');

my ($fast_slot) = $_[12]{body} =~ /"result":(\d+)/;
ok($fast_slot >= $view{'fast-a'} - 2, "the default selector gets the fast tip ($fast_slot)");



=== TEST 2: each lane has its series in /metrics
The same traffic as TEST 1 makes the lanes "slow" and "fast"; the "fast"
lane's finalized tip (no request asked for it) shows up within a tick.
--- request eval: [@LaneTraffic, $LanesRefreshed, "GET /metrics"]
--- more_headers eval: [@LaneHeaders, '']
--- check
my $m = $_[13]{body};
like($m, qr/^solgate_network_served_tip_slot\{network="mainnet",lane="slow",lane_key="grp:[0-9a-f]{16}",axis="processed"\} [1-9]\d*$/m,
     'served tip of lane "slow"');
like($m, qr/^solgate_network_served_tip_slot\{network="mainnet",lane="fast",lane_key="grp:[0-9a-f]{16}",axis="finalized"\} [1-9]\d*$/m,
     'served tip of lane "fast" (the default selector)');
like($m, qr/^solgate_network_served_tip_lag_slots\{network="mainnet",lane="slow",lane_key="grp:[0-9a-f]{16}",axis="processed"\} \d+$/m,
     'lag gauge per lane');
like($m, qr/^solgate_network_served_tip_advance_age_seconds\{network="mainnet",lane="all",lane_key="all",axis="processed"\} [\d.]+$/m,
     'advance-age gauge per lane');



=== TEST 3: the header beats the query
--- request eval: rpc_request('/?use-upstream=slow-b', 1, 'getSlot')
--- more_headers
X-Solgate-Use-Upstream: fast-b
--- response_headers
X-Solgate-Upstream: fast-b



=== TEST 4: the query beats the default
--- request eval: rpc_request('/?use-upstream=slow-b', 1, 'getSlot')
--- response_headers
X-Solgate-Upstream: slow-b



=== TEST 5: the default selects the fast family
Both fast nodes must cost the same for the picker to take turns: each
polled, its round trip under the 5 ms latency floor (on a loaded machine
one node's first polls can be slower, and then all six went to the other).
--- wait_for eval
['both fast nodes polled, their round trips under the 5 ms floor', sub {
    (grep { $_->{processed_slot} > 0 } upstreams()) == 4
        && equal_costs('mainnet', qr/^fast-[ab]$/, 2) }, 15]
--- request eval: [(rpc_request('/', 1, 'getSlot')) x 6]
--- check
my %default = map { $_->{headers}{'x-solgate-upstream'} => 1 } @_;
is_deeply([sort keys %default], ['fast-a', 'fast-b'], 'the default selects the fast family');



=== TEST 6: X-ERPC-Use-Upstream is accepted
--- request eval: rpc_request('/', 1, 'getSlot')
--- more_headers
X-ERPC-Use-Upstream: slow-a
--- response_headers
X-Solgate-Upstream: slow-a



=== TEST 7: a URL-encoded query selector (!fast-*&!slow-a)
--- request eval: rpc_request('/?use-upstream=%21fast-%2A%26%21slow-a', 1, 'getSlot')
--- response_headers
X-Solgate-Upstream: slow-b



=== TEST 8: method subsets: an upstream that ignores a method never gets it
--- request eval
[@{ rpc_requests('/', map { [$_, 'getBalance', '["83astBRguLMdt2h5U1Tpdq5tjFoJ6noeGwaY3mDLVcri"]'] } 1 .. 8) },
 rpc_request('/', 5, 'getBalance', '["x"]')]
--- more_headers eval
[('X-Solgate-Use-Upstream: family:slow') x 8, 'X-Solgate-Use-Upstream: slow-b']
--- response_headers eval
[('X-Solgate-Upstream: slow-a') x 8]
--- response_body eval
[(undef) x 8,
 '{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found: no upstream matching use-upstream selector \"slow-b\" serves getBalance"},"id":5}']



=== TEST 9: a malformed selector is -32602 naming the problem, never forwarded
--- request eval: rpc_request('/', 7, 'getSlot')
--- more_headers
X-Solgate-Use-Upstream: (fast-a
--- response_body eval
'{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params: use-upstream selector \"(fast-a\": missing \')\' for \'(\' at position 1"},"id":7}'



=== TEST 9a: a selector argument with a broken %-escape is -32602 naming it as sent, never read as another
--- request eval: rpc_request('/?use-upstream=%ZZ', 7, 'getSlot')
--- response_body_like eval
qr/^\{"jsonrpc":"2.0","error":\{"code":-32602,"message":"Invalid params: use-upstream selector \\"%ZZ\\"[^"]*"\},"id":7\}$/



=== TEST 10: a selector that matches nothing is -32602
--- request eval: rpc_request('/', 8, 'getSlot')
--- more_headers
X-Solgate-Use-Upstream: archive-*
--- response_body_like eval
qr/"code":-32602,"message":"Invalid params: use-upstream selector \\"archive-\*\\" matches no upstream of network \\"mainnet\\""/



=== TEST 11: a selector given twice (two headers, two arguments) is -32602: which one was meant is not known
--- request eval
[rpc_request('/', 9, 'getSlot'), rpc_request('/?use-upstream=slow-a&x=1&use-upstream=slow-b', 10, 'getSlot'),
 rpc_request('/?use-upstream=slow-a&use-upstream=slow-b', 11, 'getSlot')]
--- more_headers eval
["X-Solgate-Use-Upstream: slow-a\nX-Solgate-Use-Upstream: slow-b", '', 'X-ERPC-Use-Upstream: fast-a']
--- response_body eval
['{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params: use-upstream selector given twice (X-Solgate-Use-Upstream): send one"},"id":9}',
 '{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params: use-upstream selector given twice (use-upstream=): send one"},"id":10}',
 undef]
--- response_headers eval
[undef, undef, 'X-Solgate-Upstream: fast-a']
