# Network settings and their defaults, genesis validation, minContextSlot
# routing, the finalized getSlot clamp and the metrics, against simulated
# nodes at Solana's own pace (400 ms slots).

use Test::Nginx::Socket 'no_plan';
use Solgate::Sim;
use Solgate::TestConf;
use Solgate::Gateway;
use JSON::PP;

our @Ports = (19861, 19862, 19863);
sim_start(port => $_, args => ['--quiet']) for @Ports;

our $Admin = "    location /solgate/ { solgate_admin; }\n"
           . "    location = /metrics { solgate_metrics; }\n";

# the defaults block, a network that inherits it and one that overrides it
our $DefaultsHttp = <<"_EOC_";
    solgate_network_defaults {
        state_poller_debounce 2s;
        enforce_block_availability off;
        max_finalized_slot_lag 0;
    }
    solgate_network inherits {
        cluster mainnet-beta;
        upstream a http://127.0.0.1:$Ports[0];
    }
    solgate_network own {
        cluster mainnet-beta;
        enforce_block_availability on;
        max_finalized_slot_lag 5;
        upstream a http://127.0.0.1:$Ports[0];
    }
_EOC_
our $DefaultsConfig = solgate_locations('inherits') . $Admin
    . "    location /own { solgate_pass own; include \$TEST_NGINX_CONF_DIR/solgate_proxy.conf; }\n";

our $MainnetHttp = network_conf('mainnet', upstreams => sim_upstreams(@Ports));
our $MainnetConfig = solgate_locations('mainnet',
        extra => 'add_header X-Solgate-Upstream $solgate_upstream always;') . $Admin;

sub clear_faults { sim_fault($_, 'clear') for @Ports }

# two of the three nodes 60 slots behind
sub lagging_nodes {
    clear_faults();
    sim_fault($Ports[1], 'lag', slots => 60);
    sim_fault($Ports[2], 'lag', slots => 60);
}

sub all_have_slot_views {
    ['every node has slot views', sub {
        (grep { $_->{processed_slot} > 0 } upstreams('mainnet')) == 3 }, 3];
}

sub state_of { my ($res, $name) = @_;
    my ($n) = grep { $_->{name} eq $name } @{ decode_json($res->{body})->{networks} };
    return $n }

add_block_preprocessor(sub {
    my $block = shift;
    $block->set_value(setup => 'clear_faults();') unless defined $block->setup;
    $block->set_value(no_error_log => "[error]\n[alert]\n[crit]\n[emerg]\n")
        unless defined $block->no_error_log;
});

no_root_location();
run_tests();

__DATA__

=== TEST 1: defaults: an explicit off and 0 survive; what is unset comes from them
--- http_config eval: $DefaultsHttp
--- config eval: $DefaultsConfig
--- request
GET /solgate/state
--- check
my $inherits = state_of($_[0], 'inherits');
is($inherits->{state_poller_debounce_ms}, 2000, 'debounce from the defaults');
is($inherits->{enforce_block_availability}, JSON::PP::false,
   'an explicit off in the defaults survives');
is($inherits->{max_finalized_slot_lag}, 0, 'an explicit 0 in the defaults survives');
is($inherits->{guard_margin}, 7, 'a 2 s debounce widens the guard margin to 7');
my $own = state_of($_[0], 'own');
is($own->{enforce_block_availability}, JSON::PP::true, "the network's own on wins");
is($own->{max_finalized_slot_lag}, 5, "the network's own lag wins");
is($own->{state_poller_debounce_ms}, 2000, 'what it does not set comes from the defaults');



=== TEST 2: the guard: off from the defaults, getBlock reaches the node; on, it does not
--- http_config eval: $DefaultsHttp
--- config eval: $DefaultsConfig
--- wait_for eval
['the indexed tip is known', sub { network_state('inherits')->{tips}{indexed} > 0 }, 3]
--- request eval
[step { sim_reset($Ports[0]) },
 rpc_request('/', 1, 'getBlock', '[999999999999]'),
 step { is(sim_client_calls($Ports[0], 'getBlock'), 1, 'and getBlock reached it') },
 rpc_request('/own', 2, 'getBlock', '[999999999999]')]
--- response_body_like eval
[qr/"code":-32004/]
--- check
is(sim_client_calls($Ports[0], 'getBlock'), 1, 'with the guard on it did not');



=== TEST 3: no defaults block: the built-in defaults
--- http_config eval: network_conf('plain', upstreams => sim_upstreams($Ports[0]))
--- config eval: solgate_locations('plain') . $Admin
--- request
GET /solgate/state
--- check
my $plain = state_of($_[0], 'plain');
is($plain->{state_poller_debounce_ms}, 400, 'debounce defaults to 400 ms');
is($plain->{max_finalized_slot_lag}, 100, 'max_finalized_slot_lag defaults to 100');
is($plain->{enforce_block_availability}, JSON::PP::true, 'the guard defaults to on');
is($plain->{guard_margin}, 3, 'margin 3 at 400 ms');



=== TEST 4: an upstream serving another cluster is cordoned
Every upstream cordoned: requests are routed to all of them anyway, with
a warning.
--- http_config eval: network_conf('dev', cluster => 'devnet', upstreams => sim_upstreams(@Ports[0, 1]))
--- config eval: solgate_locations('dev') . $Admin
--- wait_for eval
['both mainnet nodes are cordoned on a devnet network',
 sub { 2 == grep { $_->{cordon} } upstreams('dev') }, 3]
--- request eval
["GET /solgate/state", rpc_request('/', 3, 'getSlot')]
--- check
my ($u) = @{ state_of($_[0], 'dev')->{upstreams} };
is($u->{genesis}, 'differs', 'the genesis check differs');
is($u->{cordon}{reason},
   "svm state poller: genesis hash 5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d is not devnet's (EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG)",
   'with a reason naming both hashes');
--- error_log eval
qr/\[warn\] .*every upstream of network "dev" is cordoned, routing to all of them/



=== TEST 5: minContextSlot goes to an upstream that reached it
--- setup
lagging_nodes();
--- http_config eval: $MainnetHttp
--- config eval: $MainnetConfig
--- wait_for eval: all_have_slot_views()
--- request eval
[step { $main::Min = upstream_state('sim-a')->{processed_slot} - 5 },
 map { my $i = $_;
       deferred { rpc_request('/', $i, 'getBalance',
           qq(["83astBRguLMdt2h5U1Tpdq5tjFoJ6noeGwaY3mDLVcri",{"minContextSlot":$main::Min,"commitment":"processed"}])) }
     } 1 .. 12]
--- check
my %went = map { $_->{headers}{'x-solgate-upstream'} => 1 } @_;
is_deeply([keys %went], ['sim-a'], 'requests with minContextSlot all went to the node that reached it');



=== TEST 6: finalized getSlot is clamped to min(finalized tip, indexed tip)
--- setup
lagging_nodes();
--- http_config eval: $MainnetHttp
--- config eval: $MainnetConfig
--- wait_for eval: all_have_slot_views()
--- request eval
[step { $main::Before = network_state('mainnet')->{tips} },
 rpc_request('/', 9, 'getSlot', '[{"commitment":"finalized"}]'),
 step { $main::After = network_state('mainnet')->{tips} }]
--- check
my ($slot) = $_[0]{body} =~ /"result":(\d+)/;
ok($slot >= $main::Before->{finalized} && $slot <= $main::After->{finalized},
   "finalized getSlot answers the finalized tip ($slot in $main::Before->{finalized}..$main::After->{finalized})");



=== TEST 7: the metrics
--- setup
lagging_nodes();
--- http_config eval: $MainnetHttp
--- config eval: $MainnetConfig
--- wait_for eval: all_have_slot_views()
--- request
GET /metrics
--- response_headers
Content-Type: text/plain; version=0.0.4
--- check
my $m = $_[0]{body};
for my $family (qw(solgate_upstream_latest_slot solgate_upstream_finalized_slot
                   solgate_upstream_shred_insert_slot solgate_upstream_ingestion_lag_slots
                   solgate_upstream_healthy solgate_upstream_cordoned
                   solgate_upstream_cordon_events_total solgate_upstream_large_rollbacks_total
                   solgate_upstream_poll_requests_total solgate_network_getslot_corrections_total
                   solgate_network_guard_rejections_total solgate_network_served_tip_slot)) {
    like($m, qr/^# TYPE $family (gauge|counter)$/m, "metric $family");
}
like($m, qr/^solgate_network_served_tip_slot\{network="mainnet",lane="all",lane_key="all",axis="processed"\} \d+$/m,
     'served tip per axis');
