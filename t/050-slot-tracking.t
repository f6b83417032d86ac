# Slot tracking against simulated nodes: cordoning a stalled node and
# letting it back, getSlot never moving backwards, the getBlock guard, the
# operator's cordon, one poller per upstream with several workers, reloads.
# The nodes run fast (10 ms slots) so lag thresholds are crossed in seconds.
# How often the poller polls (once per 400 ms tick, whatever the number of
# workers) is measured by tools/bench/poll_cost.sh, not here.

use Test::Nginx::Socket 'no_plan';
use Solgate::Sim;
use Solgate::TestConf;
use Solgate::Gateway;

our @Ports = (19851, 19852, 19853);
sim_start(port => $_, args => ['--slot-ms', 10, '--skip-rate', 0, '--quiet'])
    for @Ports;
# a chain that does not move while the tests run (10-minute slots)
our $StillPort = 19854;
sim_start(port => $StillPort, args => ['--slot-ms', 600000, '--skip-rate', 0, '--quiet']);

our $HttpConfig = network_conf('mainnet', upstreams => sim_upstreams(@Ports));
our $Config = solgate_locations('mainnet',
        extra => 'add_header X-Solgate-Upstream $solgate_upstream always;')
  . "    location /solgate/ { solgate_admin; }\n"
  . "    location = /metrics { solgate_metrics; }\n";

our $Account = '"83astBRguLMdt2h5U1Tpdq5tjFoJ6noeGwaY3mDLVcri"';
our $Bad = "[error]\n[alert]\n[crit]\n[emerg]\n";

sub clean { for my $p (@Ports) { sim_fault($p, 'clear'); sim_reset($p) } }

# A bounded wait for the poller's view of one upstream.
sub upstream_wait {
    my ($desc, $id, $cond, $secs) = @_;
    return [$desc, sub { $cond->(upstream_state($id)) }, $secs];
}

# pid => 1 for every worker with an established TCP connection to
# 127.0.0.1:$port (its sockets, looked up in /proc/net/tcp)
sub workers_connected_to {
    my ($port) = @_;
    my %inode;
    open my $fh, '<', '/proc/net/tcp' or die "cannot read /proc/net/tcp: $!";
    while (<$fh>) {
        my @f = split ' ';
        next unless @f > 9 && $f[2] =~ /^0100007F:([0-9A-F]{4})$/ && hex($1) == $port;
        $inode{ $f[9] } = 1 if $f[3] eq '01';
    }
    close $fh;
    my %pids;
    for my $pid (nginx_workers()) {
        opendir my $dh, "/proc/$pid/fd" or next;
        for my $fd (grep { /^\d+$/ } readdir $dh) {
            my $l = readlink "/proc/$pid/fd/$fd";
            $pids{$pid} = 1 if defined $l && $l =~ /^socket:\[(\d+)\]$/ && $inode{$1};
        }
        closedir $dh;
    }
    return \%pids;
}

# With N workers: every node's poll lease is held by a live worker, that
# worker alone is connected to the node, and the node is polled.
sub one_poller_per_node {
    for my $i (0 .. $#Ports) {
        my $id = sim_upstreams(@Ports)->[$i][0];
        my $holder = wait_for("$id: its poll lease is held by a worker", sub {
            my $l = upstream_state($id)->{lease} or return 0;
            return (grep { $_ == $l->{pid} } nginx_workers()) && $l->{pid};
        }, 5);
        wait_for("$id: polled by the lease holder alone", sub {
            my $c = workers_connected_to($Ports[$i]);
            return keys %$c == 1 && $holder && $c->{$holder};
        }, 5);
        wait_for("$id: polled", sub {
            (sim_stats($Ports[$i])->{poller_calls}{getHealth} || 0) >= 1 }, 5);
    }
}

add_block_preprocessor(sub {
    my $block = shift;
    $block->set_value(http_config => $HttpConfig) unless defined $block->http_config;
    $block->set_value(config => $Config) unless defined $block->config;
    # every block starts from healthy nodes with zeroed counters
    $block->set_value(setup => 'clean();') unless defined $block->setup;
    $block->set_value(no_error_log => $Bad) unless defined $block->no_error_log;
    $block->set_value(no_shutdown_error_log => $Bad)
        unless defined $block->no_shutdown_error_log;
});

no_root_location();
run_tests();

__DATA__

=== TEST 1: a stalled node is cordoned, gets no client traffic, and comes back
The cordon is logged once (edge-triggered) and the node is still polled
while it is out of rotation.
--- wait_for eval
upstream_wait('the poller has slot views', 'sim-b', sub { $_[0]{processed_slot} > 0 }, 3)
--- request eval
[step {
     sim_fault($Ports[1], 'stall', on => 1);
     wait_for('a node whose replay stalls is cordoned',
              sub { upstream_state('sim-b')->{cordon} }, 5);
     my $b = upstream_state('sim-b');
     is($b->{cordon}{by}, 'poller', 'cordoned by the poller');
     like($b->{cordon}{reason}, qr/^svm state poller: shred-insert lag \d+ slots exceeds threshold 100 \(node ingests shreds but does not replay them\)$/,
          'with the lag reason');
     sim_reset($Ports[1]);
 },
 @{ rpc_requests('/', map { [$_, 'getBalance', "[$Account]"] } 1 .. 30) }]
--- response_body_like: "context"
--- check
is(sim_client_calls($Ports[1]), 0, 'the cordoned node gets no client traffic');
wait_for('but it is still polled', sub { sim_stats($Ports[1])->{poller_total} > 0 }, 5);
sim_fault($Ports[1], 'stall', on => 0);
wait_for('it is uncordoned after it recovers', sub { !upstream_state('sim-b')->{cordon} }, 5);
--- error_log eval
[qr/\[warn\] .*svm upstream unhealthy; cordoning out of rotation: network=mainnet upstream=sim-b shredInsertSlot=\d+ shredInsertSlotLag=\d+ latestSlot=\d+ reason="svm state poller: shred-insert lag/,
 qr/\[info\] .*svm upstream recovered; uncordoning: network=mainnet upstream=sim-b shredInsertSlotLag=\d+ reason="svm state poller: getHealth ok and shred-insert lag back within threshold"/]
--- shutdown_check
my @cordons = nginx_error_log() =~ /cordoning out of rotation: network=mainnet upstream=sim-b/g;
is(scalar @cordons, 1, 'the cordon is edge-triggered: logged once');



=== TEST 2: getSlot(processed) never moves backwards across lagging nodes
With max_slot_lag 0 the lagging nodes keep their share, so the answers
really come from nodes 40 and 80 slots apart.
--- http_config eval
network_conf('mainnet', upstreams => sim_upstreams(@Ports), settings => 'max_slot_lag 0;')
--- setup
clean();
sim_fault($Ports[1], 'lag', slots => 40);
sim_fault($Ports[2], 'lag', slots => 80);
--- wait_for eval
upstream_wait('the poller has slot views', 'sim-c', sub { $_[0]{processed_slot} > 0 }, 3)
--- request eval
rpc_requests('/', map { [$_, 'getSlot', '[{"commitment":"processed"}]'] } 1 .. 200)
--- response_body_like eval
[map { qr/^\{"jsonrpc":"2.0","result":\d+,"id":$_\}$/ } 1 .. 200]
--- check
my ($last, $backwards, %spread) = (0, 0);
for my $i (1 .. @_) {
    my $res = $_[$i - 1];
    next unless $res->{body} =~ /^\{"jsonrpc":"2.0","result":(\d+),"id":$i\}$/;
    $backwards++ if $1 < $last;
    $last = $1 if $1 > $last;
    $spread{ $res->{headers}{'x-solgate-upstream'} // '' }++;
}
is($backwards, 0, 'getSlot(processed) never decreased');
is(scalar keys %spread, 3, 'the calls went to all three nodes');
--- error_log eval
qr/falling back to highest known slot: knownHighestSlot=\d+ responseSlot=\d+ upstreamId=sim-[bc]/



=== TEST 3: getBlock far above the frontier never reaches a node
--- wait_for eval
upstream_wait("the poller knows sim-a's shred-insert slot", 'sim-a', sub { $_[0]{shred_insert_slot} > 0 }, 3)
--- request eval
[step { sim_reset($_) for @Ports },
 rpc_request('/', 7, 'getBlock', '[999999999999]'),
 "GET /metrics", "GET /metrics"]
--- response_body eval
['{"jsonrpc":"2.0","error":{"code":-32004,"message":"Block not available for slot 999999999999"},"id":7}']
--- response_body_like eval
[undef,
 qr/^solgate_network_guard_rejections_total\{network="mainnet"\} 1$/m,
 qr/^solgate_upstream_poll_requests_total\{network="mainnet",upstream="sim-a",method="getHealth"\} \d+$/m]
--- check
is_deeply([map { sim_stats($_)->{calls}{getBlock} || 0 } @Ports], [0, 0, 0],
          'no node saw a getBlock call');



=== TEST 4: the operator's cordon survives the node's recovery
--- request eval
["POST /solgate/cordon?upstream=sim-c&reason=disk+swap+at+95%25+%ZZ+100%",
 step {
     # the node goes unhealthy, then healthy again for several ticks
     sim_fault($Ports[2], 'unhealthy', on => 1);
     wait_until(sub { !upstream_state('sim-c')->{healthy} }, 5,
                'the poller sees sim-c unhealthy');
     sim_fault($Ports[2], 'unhealthy', on => 0);
     my $ticks = wait_until(sub { my $u = upstream_state('sim-c');
                                  $u->{healthy} && $u->{polls}{getHealth} }, 5,
                            'the poller sees sim-c healthy again');
     wait_until(sub { upstream_state('sim-c')->{polls}{getHealth} >= $ticks + 3 }, 5,
                'three more healthy ticks');
     my $c = upstream_state('sim-c');
     is($c->{cordon}{by}, 'operator', 'still cordoned by the operator');
     # '+' a space, %25 a '%', a '%' without two hex digits kept as sent
     is($c->{cordon}{reason}, 'disk swap at 95% %ZZ 100%', 'with the operator reason');
     sim_reset($Ports[2]);
 },
 @{ rpc_requests('/', map { [$_, 'getSlot'] } 1 .. 9) },
 step { is(sim_client_calls($Ports[2]), 0, 'the cordoned node gets no client traffic') },
 "POST /solgate/uncordon?upstream=sim-c",
 step { ok(!upstream_state('sim-c')->{cordon}, 'uncordoned') },
 "POST /solgate/cordon?upstream=nope"]
--- error_code eval
[200, (200) x 9, 200, 404]



=== TEST 5: one worker: it polls every node, under its lease
--- workers: 1
--- check
one_poller_per_node();



=== TEST 6: four workers: each node is still polled by one worker only
--- workers: 4
--- check
one_poller_per_node();



=== TEST 7: a killed worker's leases pass to another worker
The master logs the killed worker as an alert.
--- workers: 2
--- wait_for eval
["a worker holds sim-a's lease", sub {
    my $l = upstream_state('sim-a')->{lease};
    $main::Holder = $l && $l->{pid} }, 3]
--- check
kill 'KILL', $main::Holder;
wait_for('another worker took the lease over', sub {
    my $l = upstream_state('sim-a')->{lease};
    return $l && $l->{pid} != $main::Holder && kill(0, $l->{pid});
}, 5);
sim_reset($Ports[0]);
wait_for('and sim-a is polled again',
         sub { (sim_stats($Ports[0])->{poller_calls}{getHealth} || 0) >= 1 }, 5);
--- error_log eval
qr/\[alert\] .*worker process \d+ exited on signal 9/
--- no_error_log
[error]
[crit]
[emerg]



=== TEST 8: reloads under traffic leave no thread behind
Every round sends SIGHUP, then 40 requests at once.
--- workers: 2
--- request eval
[map { (step { $main::Old{$_} = 1 for nginx_workers(); nginx_reload() },
        @{ rpc_requests('/', map { [$_, 'getSlot'] } 1 .. 40) }) } 1 .. 3]
--- check
# the old workers finish and exit
wait_for('two workers after the reloads', sub {
    my @w = nginx_workers();
    return @w == 2 && !grep { $main::Old{$_} } @w;
}, 10);
my @workers = nginx_workers();
is_deeply([map { process_threads($_) } @workers], [2, 2],
          'each worker has its main thread and one poller thread');
--- shutdown_check
my @stopped = nginx_error_log() =~ /solgate: poller thread stopped/g;
ok(@stopped >= 6, 'every old worker stopped its poller thread');



=== TEST 9: a getSlot answer with a long id (3 KB) is held whole and corrected, never cut
--- http_config eval
network_conf('mainnet', upstreams => sim_upstreams(@Ports), settings => 'max_slot_lag 0;')
--- setup
clean();
sim_fault($Ports[1], 'lag', slots => 40);
--- wait_for eval
upstream_wait('the poller has slot views', 'sim-c', sub { $_[0]{processed_slot} > 0 }, 3)
--- request eval
my $id = '"' . ('x' x 3000) . '"';
[map { "POST /\n" . qq({"jsonrpc":"2.0","id":$id,"method":"getSlot","params":[{"commitment":"processed"}]}) } 1 .. 30]
--- response_body_like eval
[map { qr/^\{"jsonrpc":"2.0","result":\d+,"id":"x{3000}"\}$/ } 1 .. 30]
--- check
my ($last, $backwards) = (0, 0);
for my $res (@_) {
    next unless $res->{body} =~ /"result":(\d+)/;
    $backwards++ if $1 < $last;
    $last = $1 if $1 > $last;
}
is($backwards, 0, 'getSlot(processed) never decreased');



=== TEST 10: a node that is down is not lagging: its last slot makes no lag
Its getSlot polls fail (HTTP 502): it is cordoned for that, and the lag
its last slot would make, growing until it is back, is neither logged,
nor a sample, nor "lagging" in the state; back, its slots are current.
--- setup
clean();
--- wait_for eval
upstream_wait('the poller has slot views', 'sim-b', sub { $_[0]{processed_slot} > 0 }, 3)
--- request eval
[step {
     sim_fault($Ports[1], 'http_status', code => 502);
     wait_for('its slot polls fail', sub {
         my $b = upstream_state('sim-b');
         !$b->{slots_current} && $b->{cordon} }, 5);
     my $frozen = upstream_state('sim-b')->{processed_slot};
     # 10 ms slots: the others pass its last slot by 50 in half a second
     wait_for('the others are far past its last slot', sub {
         (upstream_state('sim-a')->{processed_slot} || 0) > $frozen + 50 }, 5);
     my $b = upstream_state('sim-b');
     ok($b->{processed_slot} + 20 < upstream_state('sim-a')->{processed_slot}, 'its last slot trails');
     ok(!defined $b->{slot_lag_slots}, 'but the state makes no lag of it (null)');
     ok(!$b->{lagging}, 'and it is not lagging');
     my $m = metrics_text();
     unlike($m, qr/^solgate_upstream_slot_lag_slots\{network="mainnet",upstream="sim-b"\}/m,
            'and has no lag sample');
     like($m, qr/^solgate_upstream_lagging\{network="mainnet",upstream="sim-b"\} 0$/m,
          'nor a lagging one');
     like($m, qr/^solgate_upstream_cordoned\{network="mainnet",upstream="sim-b",reason="unhealthy"\} 1$/m,
          'its cordon says what is wrong, by its cause');
     sim_fault($Ports[1], 'clear');
     wait_for('back, its slots are current', sub {
         my $s = upstream_state('sim-b');
         $s->{slots_current} && !$s->{cordon} }, 5);
 },
 "GET /solgate/state"]
--- response_body_like: "slots_current":true
--- no_error_log eval
[qr/svm upstream lagging; no client traffic while others are current: network=mainnet upstream=sim-b/]



=== TEST 11: one node's inflated slot neither reaches clients nor pins later getSlot answers
sim-a reports its finalized slot 1000 slots too high (10 s at these 10 ms
slots). A getSlot that names no commitment counts as processed here, but
a node answers it at its default, finalized: sim-a's answers are 1000
slots ahead of the network. Each answer is held within max_slot_lag plus
the polls' margin of the processed tip of the nodes in rotation, so no
client sees the inflated slot, and the answers after it (from the others,
after the fault is cleared) are not raised to it. Each answer is compared
with a truthful node's slot taken right after it.
--- wait_for eval
upstream_wait('the poller has slot views', 'sim-c', sub { $_[0]{processed_slot} > 0 }, 3)
--- request eval
[step {
     my $slot_of = sub { $_[0]{body} =~ /"result":(\d+)/ ? $1 : die "no slot in $_[0]{body}" };
     my $call = rpc(1, 'getSlot');
     my (%from, @over);
     for my $phase ('inflated', 'cleared') {
         sim_fault($Ports[0], 'inflate_finalized', slots => 1000) if $phase eq 'inflated';
         sim_fault($Ports[0], 'clear') if $phase eq 'cleared';
         for (1 .. 30) {
             my $res = http_post(server_port(), '/', $call);
             my $answer = $slot_of->($res);
             $from{$phase}{ $res->{headers}{'x-solgate-upstream'} // '' }++;
             my $truth = $slot_of->(http_post($Ports[1], '/', rpc(1, 'getSlot', '[{"commitment":"processed"}]')));
             # the inflated answers are ~968 ahead (finalized + 1000)
             push @over, "$phase: $answer against $truth" if $answer > $truth + 100;
         }
     }
     ok($from{inflated}{'sim-a'}, 'sim-a answered calls while its slot was inflated');
     is_deeply(\@over, [], 'no answer was near the inflated slot, then or after');
 },
 "GET /solgate/state"]
--- response_body_like: "slots_current"



=== TEST 12: with two nodes, one stalled, getSlot keeps up with the current one
The stalled node is cordoned and lags: it does not vote on how high an
answer may be, so the answers follow the node still in rotation rather
than stopping a little above the stalled one.
--- http_config eval
$::HttpConfig . network_conf('pair', upstreams => sim_upstreams(@Ports[0, 1]))
--- config eval
$::Config . "    location /pair { solgate_pass pair; include \$TEST_NGINX_CONF_DIR/solgate_proxy.conf; }\n"
--- wait_for eval
['the pair is polled', sub { ((upstream_state('sim-b', 'pair') || {})->{processed_slot} || 0) > 0 }, 3]
--- request eval
[step {
     my $slot = sub {
         my ($port, $path) = @_;
         my $body = http_post($port, $path, rpc(1, 'getSlot', '[{"commitment":"processed"}]'))->{body};
         return $body =~ /"result":(\d+)/ ? $1 : die "no slot in $body";
     };
     sim_fault($Ports[1], 'stall', on => 1);
     wait_for('the stalled node is cordoned', sub {
         (upstream_state('sim-b', 'pair') || {})->{cordon} }, 5);
     my $first = $slot->(server_port(), '/pair');
     # 10 ms slots: the current node is 100 slots on within a second
     wait_for('sim-a moves 100 slots on', sub { $slot->($Ports[0], '/') > $first + 100 }, 5);
     my $later = $slot->(server_port(), '/pair');
     cmp_ok($later, '>', $first + 50, "getSlot kept up ($first, then $later)");
     sim_fault($Ports[1], 'stall', on => 0);
 },
 "GET /solgate/state"]
--- response_body_like: "slots_current"



=== TEST 13: traffic at the slot a poll already found stands in for getSlot polls
The node's chain does not move, so every answer carries the slot the
first poll found and never raises a view: the same as when the polls (or
another host) always get to a new slot first. Those answers still show
both views current, so ticks skip their getSlot calls (at most 4 in a
row). Before, only an answer that raised a view counted, and the gate
never opened.
--- http_config eval
$::HttpConfig . network_conf('still', upstreams => sim_upstreams($::StillPort))
--- config eval
$::Config . "    location /still { solgate_pass still; include \$TEST_NGINX_CONF_DIR/solgate_proxy.conf; }\n"
--- setup
clean(); sim_reset($::StillPort);
--- wait_for eval
['the still node is polled', sub { ((upstream_state('sim-a', 'still') || {})->{finalized_slot} || 0) > 0 }, 3]
--- request eval
[step {
     my $skips = sub {
         metric(qr/^solgate_upstream_traffic_gate_skips_total\{network="still",upstream="sim-a"\} (\d+)$/m) // 0 };
     my @calls = map { rpc(1, 'getBalance', "[$::Account,{\"commitment\":\"$_\"}]") } qw(processed finalized);
     my $n = 0;
     wait_for('ticks skip getSlot under traffic at the polled slot', sub {
         for (1 .. 10) {
             my $res = http_post(server_port(), '/still', $calls[$n++ % 2]);
             die "getBalance: $res->{body}" unless $res->{body} =~ /"context"/;
         }
         return $skips->() >= 2;
     }, 8);
 },
 "GET /solgate/state"]
--- response_body_like: "slots_current"
