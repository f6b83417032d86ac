# Network settings and their defaults, genesis validation, minContextSlot
# routing, the finalized getSlot clamp and the metrics, against simulated
# nodes at Solana's own pace (400 ms slots).

use Test::Nginx::Socket 'no_plan';
use Solgate::Sim;
use Solgate::TestConf;
use JSON::PP;
use Time::HiRes qw(sleep time);

our @Ports = (19861, 19862, 19863);
sim_start(port => $_, args => ['--quiet']) for @Ports;
no_root_location();

sub call { my ($id, $method, $params) = @_;
    return qq({"jsonrpc":"2.0","id":$id,"method":"$method")
        . (defined $params ? qq(,"params":$params) : '') . '}' }

sub state { decode_json(http_get(server_port(), '/solgate/state')->{body}) }

sub network_state {
    my ($name) = @_;
    my ($n) = grep { $_->{name} eq $name } @{ state()->{networks} };
    return $n;
}

sub wait_until {
    my ($cond, $limit) = @_;
    my $start = time;
    while (time - $start < $limit) {
        return 1 if $cond->();
        sleep 0.1;
    }
    return 0;
}

my $admin = "    location /solgate/ { solgate_admin; }\n"
          . "    location = /metrics { solgate_metrics; }\n";

# --- defaults: explicit off and 0 survive; unset takes the built-in -------
{
    my $http = <<"_EOC_";
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
    nginx_start($http, solgate_locations('inherits') . $admin
                . "    location /own { solgate_pass own; include \$TEST_NGINX_CONF_DIR/solgate_proxy.conf; }\n",
                no_root_location => 1);
    my $inherits = network_state('inherits');
    is($inherits->{state_poller_debounce_ms}, 2000, 'debounce from the defaults');
    is($inherits->{enforce_block_availability}, JSON::PP::false,
       'an explicit off in the defaults survives');
    is($inherits->{max_finalized_slot_lag}, 0, 'an explicit 0 in the defaults survives');
    is($inherits->{guard_margin}, 7, 'a 2 s debounce widens the guard margin to 7');
    my $own = network_state('own');
    is($own->{enforce_block_availability}, JSON::PP::true, "the network's own on wins");
    is($own->{max_finalized_slot_lag}, 5, "the network's own lag wins");
    is($own->{state_poller_debounce_ms}, 2000, 'what it does not set comes from the defaults');

    wait_until(sub { network_state('inherits')->{tips}{indexed} > 0 }, 3);
    sim_reset($Ports[0]);
    my $res = http_post(server_port(), '/', call(1, 'getBlock', '[999999999999]'));
    like($res->{body}, qr/"code":-32004/, 'with the guard off the node answers');
    is(sim_client_calls($Ports[0], 'getBlock'), 1, 'and getBlock reached it');
    $res = http_post(server_port(), '/own', call(2, 'getBlock', '[999999999999]'));
    is(sim_client_calls($Ports[0], 'getBlock'), 1, 'with the guard on it did not');
    nginx_stop();
}

# --- no defaults block: the built-in defaults ------------------------------
{
    nginx_start(network_conf('plain', upstreams => sim_upstreams($Ports[0])),
                solgate_locations('plain') . $admin, no_root_location => 1);
    my $plain = network_state('plain');
    is($plain->{state_poller_debounce_ms}, 400, 'debounce defaults to 400 ms');
    is($plain->{max_finalized_slot_lag}, 100, 'max_finalized_slot_lag defaults to 100');
    is($plain->{enforce_block_availability}, JSON::PP::true, 'the guard defaults to on');
    is($plain->{guard_margin}, 3, 'margin 3 at 400 ms');
    nginx_stop();
}

# --- an upstream serving another cluster is cordoned -----------------------
{
    nginx_start(network_conf('dev', cluster => 'devnet', upstreams => sim_upstreams(@Ports[0, 1])),
                solgate_locations('dev') . $admin, no_root_location => 1);
    ok(wait_until(sub {
        my @u = @{ network_state('dev')->{upstreams} };
        return 2 == grep { $_->{cordon} } @u;
    }, 3), 'both mainnet nodes are cordoned on a devnet network');
    my ($u) = @{ network_state('dev')->{upstreams} };
    is($u->{genesis}, 'differs', 'the genesis check differs');
    is($u->{cordon}{reason},
       "svm state poller: genesis hash 5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d is not devnet's (EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG)",
       'with a reason naming both hashes');
    my $res = http_post(server_port(), '/', call(3, 'getSlot'));
    is($res->{status}, 200, 'every upstream cordoned: routed to all of them anyway');
    nginx_stop();
    like(nginx_error_log(), qr/\[warn\] .*every upstream of network "dev" is cordoned, routing to all of them/,
         'with a warning');
}

# --- minContextSlot goes to an upstream that reached it --------------------
{
    sim_fault($Ports[1], 'lag', slots => 60);
    sim_fault($Ports[2], 'lag', slots => 60);
    nginx_start(network_conf('mainnet', upstreams => sim_upstreams(@Ports)),
                solgate_locations('mainnet',
                    extra => 'add_header X-Solgate-Upstream $solgate_upstream always;')
                . $admin, no_root_location => 1);
    wait_until(sub { (grep { $_->{processed_slot} > 0 } @{ network_state('mainnet')->{upstreams} }) == 3 }, 3);
    my ($a) = grep { $_->{id} eq 'sim-a' } @{ network_state('mainnet')->{upstreams} };
    my $min = $a->{processed_slot} - 5;
    my %went;
    for my $i (1 .. 12) {
        my $res = http_post(server_port(), '/', call($i, 'getBalance',
            qq(["83astBRguLMdt2h5U1Tpdq5tjFoJ6noeGwaY3mDLVcri",{"minContextSlot":$min,"commitment":"processed"}])));
        $went{$res->{headers}{'x-solgate-upstream'}}++;
    }
    is_deeply([keys %went], ['sim-a'], 'requests with minContextSlot all went to the node that reached it');

    # finalized getSlot is clamped to min(finalized tip, indexed tip)
    my $before = network_state('mainnet')->{tips};
    my $res = http_post(server_port(), '/', call(9, 'getSlot', '[{"commitment":"finalized"}]'));
    my $after = network_state('mainnet')->{tips};
    my ($slot) = $res->{body} =~ /"result":(\d+)/;
    ok($slot >= $before->{finalized} && $slot <= $after->{finalized},
       "finalized getSlot answers the finalized tip ($slot in $before->{finalized}..$after->{finalized})");

    my $metrics = http_get(server_port(), '/metrics');
    is($metrics->{headers}{'content-type'}, 'text/plain; version=0.0.4', 'metrics content type');
    for my $family (qw(solgate_upstream_latest_slot solgate_upstream_finalized_slot
                       solgate_upstream_shred_insert_slot solgate_upstream_ingestion_lag_slots
                       solgate_upstream_healthy solgate_upstream_cordoned
                       solgate_upstream_cordon_events_total solgate_upstream_large_rollbacks_total
                       solgate_upstream_poll_requests_total solgate_network_getslot_corrections_total
                       solgate_network_guard_rejections_total solgate_network_served_tip_slot)) {
        like($metrics->{body}, qr/^# TYPE $family (gauge|counter)$/m, "metric $family");
    }
    like($metrics->{body}, qr/^solgate_network_served_tip_slot\{network="mainnet",lane="all",axis="processed"\} \d+$/m,
         'served tip per axis');
    nginx_stop();
    sim_fault($_, 'clear') for @Ports;
}

done_testing();
