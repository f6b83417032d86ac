# Routing that never serves stale data: a node trailing its group by more
# than max_slot_lag gets no client traffic while others are current, a
# vendor's 429 costs the client nothing, a slow node gets a small share,
# backups serve only when no primary can, and clients can be kept from
# picking upstreams.  Nodes run at the real slot pace (400 ms) unless said.

use Test::Nginx::Socket 'no_plan';
use Solgate::Sim;
use Solgate::TestConf;
use Solgate::Gateway;

our @Ports = (19861, 19862, 19863);
our @Fast = (19864, 19865, 19866);   # 10 ms slots: a stall is seen in 1 s
sim_start(port => $_, args => ['--skip-rate', 0, '--quiet']) for @Ports;
sim_start(port => $_, args => ['--slot-ms', 10, '--skip-rate', 0, '--quiet'])
    for @Fast;

our $HttpConfig =
    network_conf('mainnet', upstreams => sim_upstreams(@Ports))
  . network_conf('closed', upstreams => sim_upstreams(@Ports),
                 settings => 'use_upstream_from_client off;')
  . network_conf('withbackup', settings => 'max_slot_lag 0;', upstreams => [
        ['own-1', "http://127.0.0.1:$Fast[0]"],
        ['own-2', "http://127.0.0.1:$Fast[1]"],
        ['vendor', "http://127.0.0.1:$Fast[2]", 'backup']]);

our $Config = solgate_locations('mainnet')
  . "    location /closed { solgate_pass closed; include \$TEST_NGINX_CONF_DIR/solgate_proxy.conf; }\n"
  . "    location /withbackup { solgate_pass withbackup; include \$TEST_NGINX_CONF_DIR/solgate_proxy.conf; }\n"
  . "    location /solgate/ { solgate_admin; }\n"
  . "    location = /metrics { solgate_metrics; }\n";

our $Account = '"83astBRguLMdt2h5U1Tpdq5tjFoJ6noeGwaY3mDLVcri"';
our $Bad = "[error]\n[alert]\n[crit]\n[emerg]\n";

sub clean { for my $p (@Ports, @Fast) { sim_fault($p, 'clear'); sim_reset($p) } }
sub balances { rpc_requests($_[0], map { [$_, 'getBalance', "[$Account]"] } 1 .. $_[1]) }
sub balance_answers { [map { qr/^\{"jsonrpc":"2.0","result":\{"context":\{.*"slot":\d+\}.*"id":$_\}$/ } 1 .. $_[0]] }
sub state_of { my ($id, $net) = @_; upstream_state($id, $net) || {} }

add_block_preprocessor(sub {
    my $block = shift;
    $block->set_value(http_config => $HttpConfig) unless defined $block->http_config;
    $block->set_value(config => $Config) unless defined $block->config;
    $block->set_value(setup => 'clean();') unless defined $block->setup;
    $block->set_value(no_error_log => $Bad) unless defined $block->no_error_log;
});

no_shuffle();
no_root_location();
run_tests();

__DATA__

=== TEST 1: a node 80 slots behind from the start gets nothing, and traffic again once it catches up
--- setup
clean();
sim_fault($Ports[2], 'lag', slots => 80);
--- wait_for eval
['sim-c is seen lagging', sub { state_of('sim-c')->{lagging} }, 5]
--- request eval
[@{ balances('/', 30) },
 step {
     is(sim_client_calls($Ports[2]), 0, 'the lagging node got no client request');
     cmp_ok(sim_client_calls($Ports[0]) + sim_client_calls($Ports[1]), '==', 30,
            'the two current nodes served all 30');
     my $c = state_of('sim-c');
     cmp_ok($c->{slot_lag_slots}, '>', 20, "state: slot_lag_slots $c->{slot_lag_slots}");
     ok(!$c->{cordon}, 'lagging is not a cordon');
     like(metrics_text(), qr/^solgate_upstream_lagging\{network="mainnet",upstream="sim-c"\} 1$/m,
          'metric: solgate_upstream_lagging 1');
     sim_fault($Ports[2], 'lag', slots => 0);
     wait_for('it caught up', sub { !state_of('sim-c')->{lagging} }, 5);
     sim_reset($Ports[2]);
 },
 @{ balances('/', 30) }]
--- response_body_like eval
[@{ balance_answers(30) }, @{ balance_answers(30) }]
--- check
cmp_ok(sim_client_calls($Ports[2]), '>', 0, 'caught up: it serves again');
--- error_log eval
[qr/\[info\] .*svm upstream lagging; no client traffic while others are current: network=mainnet upstream=sim-c slotLag=\d+ maxSlotLag=20/,
 qr/\[info\] .*svm upstream caught up; back in rotation: network=mainnet upstream=sim-c/]



=== TEST 2: a node that jumps back 300 slots stops receiving traffic
Its slot view keeps the old maximum (drops under 1024 are tolerated), but
the slot observed from it is behind.
--- wait_for eval
['sim-b has a slot view', sub { (state_of('sim-b')->{processed_slot} || 0) > 0 }, 5]
--- request eval
[step {
     sim_fault($Ports[1], 'rollback', slots => 300);
     wait_for('sim-b is seen lagging', sub { state_of('sim-b')->{lagging} }, 5);
     sim_reset($Ports[1]);
 },
 @{ balances('/', 30) }]
--- response_body_like eval
balance_answers(30)
--- check
is(sim_client_calls($Ports[1]), 0, 'the node that went back got no client request');



=== TEST 3: a node answering 429 costs the client nothing
--- wait_for eval
['the nodes are polled', sub { (state_of('sim-a')->{processed_slot} || 0) > 0 }, 5]
--- request eval
[step { sim_fault($Ports[0], 'http_status', code => 429) }, @{ balances('/', 30) }]
--- response_body_like eval
balance_answers(30)
--- check
is(scalar(grep { $_->{status} != 200 } @_), 0, 'every answer 200 with a result');
--- error_log eval
qr/solgate: upstream "sim-a" failed \(http_429, status 429\), retrying on "sim-[bc]"|upstream=sim-a .*getHealth/



=== TEST 4: a node with 300 ms extra latency gets under 15% of 200 sequential requests
--- setup
clean();
sim_fault($Ports[2], 'latency', ms => 300);
--- wait_for eval
['the poller measured sim-c slow', sub { (state_of('sim-c')->{latency_ewma_us} || 0) > 200000 }, 10]
--- request eval
balances('/', 200)
--- response_body_like eval
balance_answers(200)
--- check
my $slow = sim_client_calls($Ports[2]);
cmp_ok($slow, '<', 30, "the slow node got $slow of 200");



=== TEST 5: a backup gets nothing while the primaries serve, and serves when they are all stalled
--- wait_for eval
['own-1 is polled', sub { (state_of('own-1', 'withbackup')->{processed_slot} || 0) > 0 }, 5]
--- request eval
[@{ balances('/withbackup', 20) },
 step {
     is(sim_client_calls($Fast[2]), 0, 'the backup got nothing while the primaries are healthy');
     is(state_of('vendor', 'withbackup')->{backup}, JSON::PP::true, 'state: backup true');
     sim_fault($_, 'stall', on => 1) for @Fast[0, 1];
     wait_for('both primaries are cordoned', sub {
         state_of('own-1', 'withbackup')->{cordon} && state_of('own-2', 'withbackup')->{cordon} }, 10);
     sim_reset($_) for @Fast;
 },
 @{ balances('/withbackup', 20) }]
--- response_body_like eval
[@{ balance_answers(20) }, @{ balance_answers(20) }]
--- check
is(sim_client_calls($Fast[2]), 20, 'the backup served every request');
is(sim_client_calls($Fast[0]) + sim_client_calls($Fast[1]), 0, 'the stalled primaries got none');
--- error_log eval
qr/cordoning out of rotation: network=withbackup upstream=own-1/



=== TEST 6: use_upstream_from_client off ignores the header and the query selectors
--- wait_for eval
['the nodes are polled', sub { (state_of('sim-c', 'closed')->{processed_slot} || 0) > 0 }, 5]
--- request eval
[step {
     for my $i (1 .. 12) {
         my $path = $i % 2 ? '/closed?use-upstream=sim-a' : '/closed';
         my $res = http_post(server_port(), $path, rpc($i, 'getBalance', "[$Account]"),
                             {'X-Solgate-Use-Upstream' => 'sim-a'});
         is($res->{status}, 200, "request $i answered");
     }
 }]
--- check
for my $p (@Ports) {
    cmp_ok(sim_client_calls($p), '>', 0, "node $p served some: the selectors were ignored");
}



=== TEST 7: a sendTransaction that failed after reaching a node is not sent to another
--- setup
clean();
sim_fault($_, 'http_status', code => 500) for @Ports;
--- request
POST /
{"jsonrpc":"2.0","id":7,"method":"sendTransaction","params":["AQAB"]}
--- error_code: 502
--- response_body chomp
{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error: the upstream failed (http_5xx) after the request may have reached it; not retried on another upstream, so that a transaction is never sent twice"},"id":7}
--- check
my $sent = 0;
$sent += sim_client_calls($_, 'sendTransaction') for @Ports;
is($sent, 1, 'the transaction reached exactly one node');
--- error_log eval
qr/\[error\] .*solgate: upstream "sim-[abc]" failed \(http_5xx\) after a write may have reached it; not retried elsewhere/
--- no_error_log
[alert]
[crit]



=== TEST 8: solgate_requests_total counts every request by method, upstream and outcome
An error answer that is the client's mistake (an invented method, bad params)
is outcome client_error, not the node's rpc_error.
--- request eval
[step {
     my $sum = sub {   # the samples of solgate_requests_total matching $re
         my ($re) = @_;
         my ($n, $text) = (0, metrics_text());
         $n += $1 while $text =~ /^solgate_requests_total\{network="closed",$re\} (\d+)$/mg;
         return $n;
     };
     my %before = (bal => $sum->(qr/upstream="sim-[abc]",method="getBalance",outcome="ok"/),
                   gen => $sum->(qr/upstream="",method="getGenesisHash",outcome="local"/),
                   other => $sum->(qr/upstream="sim-[abc]",method="other",outcome="[a-z_]+"/),
                   mistakes => $sum->(qr/upstream="sim-[abc]",method="(?:other|getBalance)",outcome="client_error"/),
                   node_errors => $sum->(qr/upstream="sim-[abc]",method="[A-Za-z]+",outcome="rpc_error"/));
     http_post(server_port(), '/closed', rpc($_, 'getBalance', "[$Account]")) for 1 .. 6;
     http_post(server_port(), '/closed', rpc($_, 'getGenesisHash')) for 1 .. 2;
     http_post(server_port(), '/closed', rpc(1, 'noSuchMethod' . $_)) for 1 .. 3;
     # the node answers -32602 "Invalid params": the client's mistake
     http_post(server_port(), '/closed', rpc($_, 'getBalance', '["not a pubkey"]')) for 1 .. 2;
     wait_for('6 getBalance counted ok, by upstream',
              sub { $sum->(qr/upstream="sim-[abc]",method="getBalance",outcome="ok"/) - $before{bal} == 6 }, 5);
     wait_for('2 local getGenesisHash answers, upstream ""',
              sub { $sum->(qr/upstream="",method="getGenesisHash",outcome="local"/) - $before{gen} == 2 }, 5);
     wait_for('3 invented methods are one label: other',
              sub { $sum->(qr/upstream="sim-[abc]",method="other",outcome="[a-z_]+"/) - $before{other} == 3 }, 5);
     wait_for('the 3 invented methods and 2 bad params are the clients\' mistakes',
              sub { $sum->(qr/upstream="sim-[abc]",method="(?:other|getBalance)",outcome="client_error"/)
                        - $before{mistakes} == 5 }, 5);
     is($sum->(qr/upstream="sim-[abc]",method="[A-Za-z]+",outcome="rpc_error"/), $before{node_errors},
        'none of them is counted as a node\'s error');
     unlike(metrics_text(), qr/noSuchMethod/, 'no client text in a label');
     like(metrics_text(), qr/^solgate_request_duration_seconds_count\{network="closed",upstream="sim-[abc]",class="read"\} \d+$/m,
          'the latency histogram has the read class');
 }]



=== TEST 9: a node answering a read with -32005 "node is behind" is failed over; the client gets results
The node's poller view stays healthy and current: only its answers say so.
--- wait_for eval
['the nodes are polled', sub { (state_of('sim-a')->{processed_slot} || 0) > 0 }, 5]
--- request eval
[step { sim_fault($Ports[0], 'behind_answers', on => 1) }, @{ balances('/', 30) }]
--- response_body_like eval
balance_answers(30)
--- check
is(scalar(grep { $_->{status} != 200 } @_), 0, 'every answer 200 with a result');
cmp_ok(sim_client_calls($Ports[1]) + sim_client_calls($Ports[2]), '==', 30,
       'the two other nodes answered all 30');
like(metrics_text(), qr/^solgate_failovers_total\{network="mainnet",upstream="sim-a",cause="node_behind"\} [1-9]\d*$/m,
     'metric: failovers by cause node_behind');
--- error_log eval
qr/solgate: upstream "sim-a" failed \(node_behind, status 200\), retrying on "sim-[bc]"/



=== TEST 10: when every candidate says it is behind, the last answer is the client's
--- wait_for eval
['the nodes are polled', sub { (state_of('sim-a', 'closed')->{processed_slot} || 0) > 0 }, 5]
--- setup
clean();
sim_fault($_, 'behind_answers', on => 1) for @Ports;
--- request eval
["POST /closed\n" . rpc(4, 'getBalance', "[$Account]")]
--- response_body_like: ^\{"jsonrpc":"2.0","error":\{"code":-32005,"message":"Node is behind by 0 slots","data":\{"numSlotsBehind":0\}\},"id":4\}$
--- check
my $calls = 0;
$calls += sim_client_calls($_) for @Ports;
is($calls, 3, 'each node was asked once');
