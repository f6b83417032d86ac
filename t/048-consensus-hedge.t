# consensus and hedge: a finalized read is asked of several nodes and only
# an answer enough of them agree on reaches the client; a node whose
# finalized slot trails is not asked; a slow node's answer is raced by
# another node's and the loser is cancelled.

use Test::Nginx::Socket 'no_plan';
use Solgate::Sim;
use Solgate::TestConf;
use Solgate::Gateway;

our @Ports = (19941, 19942, 19943);
# blocks of 60 KB: more than proxy_buffer_size and proxy_buffers hold
sim_start(port => $_, args => ['--quiet', '--block-bytes', 60000]) for @Ports;

our $Account = '"83astBRguLMdt2h5U1Tpdq5tjFoJ6noeGwaY3mDLVcri"';
our $Finalized = qq([$Account,{"commitment":"finalized"}]);

our $HttpConfig =
    network_conf('cons', upstreams => sim_upstreams(@Ports),
                 settings => 'consensus getBalance participants=3 agreement=2;')
  . network_conf('pair', upstreams => sim_upstreams(@Ports[0, 1]),
                 settings => 'consensus getBalance participants=2 agreement=2;')
  . network_conf('fin', upstreams => sim_upstreams(@Ports),
                 settings => 'consensus getBalance participants=3 agreement=2; '
                           . 'max_finalized_slot_lag 30; max_slot_lag 0;')
  . network_conf('hedged', upstreams => sim_upstreams(@Ports),
                 settings => 'hedge getBalance after=100ms max=1;')
  . network_conf('blocks', upstreams => sim_upstreams(@Ports),
                 settings => 'consensus getBlock; hedge getAccountInfo after=50ms;');

our $Config = solgate_locations('cons')
  . join('', map { "    location /$_ { solgate_pass $_; add_header X-Solgate-Upstream \$solgate_upstream always; "
                  . "include \$TEST_NGINX_CONF_DIR/solgate_proxy.conf; }\n" }
             qw(pair fin hedged))
  . "    location /big { solgate_pass blocks; subrequest_output_buffer_size 1m; include \$TEST_NGINX_CONF_DIR/solgate_proxy.conf; }\n"
  . "    location /tiny { solgate_pass blocks; subrequest_output_buffer_size 400; include \$TEST_NGINX_CONF_DIR/solgate_proxy.conf; }\n"
  . "    location /solgate/ { solgate_admin; }\n"
  . "    location = /metrics { solgate_metrics; }\n";

our $Bad = "[error]\n[alert]\n[crit]\n[emerg]\n";

sub clean { for my $p (@Ports) { sim_fault($p, 'clear'); sim_reset($p) } }
sub state_of { my ($id, $net) = @_; upstream_state($id, $net) || {} }
sub polled { my ($net, @ids) = @_;
    sub { !grep { !(state_of($_, $net)->{finalized_slot} || 0) } @ids } }
# The balance as an honest node answers it.
sub true_balance {
    my $body = http_post($Ports[2], '/', rpc(1, 'getBalance', $Finalized))->{body};
    return $body =~ /"value":(\d+)/ ? $1 : die "no balance in $body";
}
sub calls { join ' ', map { sim_client_calls($_, 'getBalance') } @Ports }
# A produced slot a little below sim-c's finalized tip.
sub produced_slot {
    my $tip = state_of('sim-c', 'blocks')->{finalized_slot} or die 'not polled';
    for my $s (reverse $tip - 60 .. $tip - 20) {
        my $body = http_post($Ports[2], '/', get_block_call(1, $s))->{body};
        return $s if $body =~ /"result":\{/;
    }
    die 'no produced slot';
}
sub counter { my ($name, $labels) = @_;
    metric(qr/^\Q$name\E\{\Q$labels\E\} (\d+)$/m) // 0 }

run_solgate_blocks(http_config => $HttpConfig, config => $Config, setup => 'clean();',
                   no_error_log => $Bad);

__DATA__

=== TEST 1: consensus asks three nodes, and their agreed answer reaches the client
--- wait_for eval
['the nodes are polled', main::polled('cons', qw(sim-a sim-b sim-c)), 5]
--- request eval
"POST /\n" . main::rpc(7, 'getBalance', $main::Finalized)
--- response_body_like: ^\{"jsonrpc":"2.0","result":\{"context":\{"apiVersion":"[^"]+","slot":\d+\},"value":\d+\},"id":7\}$
--- check
is(main::calls(), '1 1 1', 'each node was asked once');
is(main::counter('solgate_consensus_total', 'network="cons",outcome="agreed"'), 1,
   'metric: one agreed consensus');



=== TEST 2: a node answering a wrong balance never reaches a finalized client
--- setup
clean();
sim_fault($Ports[0], 'wrong_value', method => 'getBalance');
--- wait_for eval
['the nodes are polled', main::polled('cons', qw(sim-a sim-b sim-c)), 5]
--- request eval
[map { "POST /\n" . main::rpc($_, 'getBalance', $main::Finalized) } 1 .. 8]
--- response_body_like eval
my $v = main::true_balance();
[map { qr/"value":$v\},"id":$_\}$/ } 1 .. 8]
--- check
like(main::calls(), qr/^8 8 (8|9)$/, 'every node was asked each time (sim-c maybe once more, by the test)');
cmp_ok(main::counter('solgate_consensus_total', 'network="cons",outcome="agreed"'), '==', 8,
       'metric: eight agreed');



=== TEST 3: two nodes that disagree give the dispute error
--- setup
clean();
sim_fault($Ports[0], 'wrong_value', method => 'getBalance');
--- wait_for eval
['the nodes are polled', main::polled('pair', qw(sim-a sim-b)), 5]
--- request eval
"POST /pair\n" . main::rpc(8, 'getBalance', $main::Finalized)
--- response_body: {"jsonrpc":"2.0","error":{"code":-32090,"message":"Consensus dispute: 2 participants asked, answers split 1+1, 2 must agree"},"id":8}
--- response_headers
!X-Solgate-Upstream
--- check
is(main::counter('solgate_consensus_total', 'network="pair",outcome="dispute"'), 1,
   'metric: one dispute');
# a call that is not finalized is not compared: one node answers it
my $res = http_post(server_port(), '/pair', rpc(9, 'getBalance', qq([$main::Account,{"commitment":"confirmed"}])));
like($res->{body}, qr/"value":\d+\},"id":9\}$/, 'a confirmed read is answered by one node');



=== TEST 4: a node whose finalized slot trails by more than max_finalized_slot_lag is not asked
--- setup
clean();
sim_fault($Ports[2], 'lag', slots => 60);
--- wait_for eval
['sim-c is seen 60 slots behind', sub {
     my ($a, $c) = (main::state_of('sim-a', 'fin'), main::state_of('sim-c', 'fin'));
     ($c->{finalized_slot} || 0) > 0 && ($a->{finalized_slot} || 0) > $c->{finalized_slot} + 30 }, 5]
--- request eval
[map { "POST /fin\n" . main::rpc($_, 'getBalance', $main::Finalized) } 1 .. 4]
--- response_body_like eval
[map { qr/"value":\d+\},"id":$_\}$/ } 1 .. 4]
--- check
is(main::calls(), '4 4 0', 'sim-a and sim-b voted, sim-c was left out');
is(scalar(grep { ($_->{headers}{'x-solgate-upstream'} // '') =~ /^sim-[ab]$/ } @_), 4,
   '$solgate_upstream names a node whose answer was agreed on');



=== TEST 5: a hedge answers from another node when the first is slow, and the slow attempt is cancelled
sim-a answers getBalance after 2 s; no client waits for it.
--- setup
clean();
sim_fault($Ports[0], 'method_latency', method => 'getBalance', ms => 2000);
--- wait_for eval
['the nodes are polled', main::polled('hedged', qw(sim-a sim-b sim-c)), 5]
--- request eval
[map { "POST /hedged\n" . main::rpc($_, 'getBalance', "[$main::Account]") } 1 .. 6]
--- response_body_like eval
[map { qr/"value":\d+\},"id":$_\}$/ } 1 .. 6]
--- timeout: 1.5
--- check
is(scalar(grep { ($_->{headers}{'x-solgate-upstream'} // '') =~ /^sim-[bc]$/ } @_), 6,
   '$solgate_upstream names the node whose answer was taken, never the slow one');
my $sent = main::counter('solgate_hedges_sent_total', 'network="hedged"');
my $won = main::counter('solgate_hedges_won_total', 'network="hedged"');
cmp_ok($sent, '>=', 1, "metric: $sent hedges sent");
cmp_ok($won, '>=', 1, "metric: $won hedges won");
ok(!main::state_of('sim-a', 'hedged')->{ejected}, 'a cancelled attempt does not eject the slow node');
# for the next tests (their requests are made before their nginx starts)
wait_for('network blocks is polled', main::polled('blocks', qw(sim-c)), 5);
$main::Slot = main::produced_slot();



=== TEST 6: a consensus over answers larger than nginx's proxy buffers answers (each attempt is read without the event pipe)
--- wait_for eval
['the nodes are polled', main::polled('blocks', qw(sim-a sim-b sim-c)), 5]
--- request eval
"POST /big\n" . get_block_call(6, $main::Slot)
--- response_body_like: ^\{"jsonrpc":"2.0","result":\{"blockHeight":\d+,.{60000,}\},"id":6\}$
--- timeout: 5
--- check
is(main::counter('solgate_consensus_total', 'network="blocks",outcome="agreed"'), 1,
   'metric: agreed');



=== TEST 7: answers too big for subrequest_output_buffer_size fail their attempts, not the client's request
The block answers do not fit in 400 bytes; a getAccountInfo answer does, and a
cancelled hedge's error page does not disturb it.
--- wait_for eval
['the nodes are polled', main::polled('blocks', qw(sim-a sim-b sim-c)), 5]
--- setup
clean();
sim_fault($Ports[0], 'method_latency', method => 'getAccountInfo', ms => 1000);
--- request eval
["POST /tiny\n" . get_block_call(7, $main::Slot),
 map { "POST /tiny\n" . main::rpc($_, 'getAccountInfo', "[$main::Account]") } 8 .. 10]
--- error_code eval
[502, 200, 200, 200]
--- response_body_like eval
[qr/^\{"jsonrpc":"2.0","error":\{"code":-32603,"message":"Internal error: no upstream could serve the request \(3 tried\)"\},"id":7\}$/,
 map { qr/^\{"jsonrpc":"2.0","result":\{"context":\{[^}]*\},"value":[^\n]*\},"id":$_\}$/ } 8 .. 10]
--- timeout: 3
--- error_log eval
[qr/\[error\] .*solgate: the answer of upstream "sim-[abc]" \(\d+ bytes or more\) is larger than subrequest_output_buffer_size 400; that attempt gets no say/]
--- no_error_log
[alert]
[crit]
too big subrequest response



=== TEST 8: a client that leaves during a consensus blames no upstream
Every node takes 2 s; the client gives up after 0.3 s.
--- setup
clean();
sim_fault($_, 'method_latency', method => 'getBalance', ms => 2000) for @Ports;
--- wait_for eval
['the nodes are polled', main::polled('cons', qw(sim-a sim-b sim-c)), 5]
--- request eval
"POST /\n" . main::rpc(12, 'getBalance', $main::Finalized)
--- timeout: 0.3
--- abort
--- ignore_response
--- check
wait_for('the attempts have ended', sub {
    metric(qr/^solgate_requests_total\{network="cons",[^}]*method="getBalance"[^}]*\} (\d+)$/m) }, 5);
for my $id (qw(sim-a sim-b sim-c)) {
    ok(!main::state_of($id, 'cons')->{ejected_for_ms}, "$id is not ejected");
}
--- no_error_log
[alert]
[crit]



=== TEST 9: inside a batch, a consensus call is compared call by call: a wrong node never reaches the client
--- setup
clean();
sim_fault($Ports[0], 'wrong_value', method => 'getBalance');
--- wait_for eval
['the nodes are polled', main::polled('cons', qw(sim-a sim-b sim-c)), 5]
--- request eval
[map { "POST /\n[" . main::rpc(1, 'getSlot') . ',' . main::rpc(2, 'getBalance', $main::Finalized)
       . ',' . main::rpc(3, 'getGenesisHash') . "]" } 1 .. 4]
--- response_body_like eval
my $v = main::true_balance();
[map { qr/^\[\{"jsonrpc":"2.0","result":\d+,"id":1\},\{"jsonrpc":"2.0","result":\{"context":\{[^}]*\},"value":$v\},"id":2\},\{"jsonrpc":"2.0","result":"5eykt[^"]+","id":3\}\]$/ } 1 .. 4]
--- check
like(main::calls(), qr/^4 4 (4|5)$/, 'each batch asked every node for the balance');
is(main::counter('solgate_consensus_total', 'network="cons",outcome="agreed"'), 4,
   'metric: four agreed');



=== TEST 10: inside a batch, a hedged call does not wait for a slow node
sim-a answers getBalance after 2 s.
--- setup
clean();
sim_fault($Ports[0], 'method_latency', method => 'getBalance', ms => 2000);
--- wait_for eval
['the nodes are polled', main::polled('hedged', qw(sim-a sim-b sim-c)), 5]
--- request eval
[map { "POST /hedged\n[" . main::rpc(1, 'getBalance', "[$main::Account]") . ',' . main::rpc(2, 'getSlot') . "]" } 1 .. 6]
--- response_body_like eval
[map { qr/^\[\{"jsonrpc":"2.0","result":\{"context":\{[^}]*\},"value":\d+\},"id":1\},\{"jsonrpc":"2.0","result":\d+,"id":2\}\]$/ } 1 .. 6]
--- timeout: 1.5
--- check
cmp_ok(main::counter('solgate_hedges_won_total', 'network="hedged"'), '>=', 1, 'metric: hedges won');
