# Failsafe: a call one upstream cannot answer for lack of data is asked of
# another that may hold it (retry_missing_data); a skipped slot is asked of
# each upstream once; the client gets the first real answer, or the best
# error an upstream gave.

use Test::Nginx::Socket 'no_plan';
use Solgate::Sim;
use Solgate::TestConf;
use Solgate::Gateway;
use Time::HiRes ();

our @Ports = (19911, 19912, 19913);
# The sims' slot clock: 400 ms slots since 2024-01-01 (see tools/solana-sim).
my $tip = int((Time::HiRes::time() * 1000 - 1704067200000) / 400);
our $PrunedFirst = $tip - 1000;   # sim-a's ledger keeps only the last 1000 slots
# full blocks of 70 KB, more than a subrequest's proxy buffers (TEST 16)
sim_start(port => $Ports[0], args => ['--quiet', '--block-bytes', 70000, '--first-available-block', $PrunedFirst]);
sim_start(port => $_, args => ['--quiet', '--block-bytes', 70000]) for @Ports[1, 2];

our $HttpConfig =
    network_conf('mainnet', upstreams => sim_upstreams(@Ports))
  . network_conf('noretry', upstreams => sim_upstreams(@Ports),
                 settings => 'retry_missing_data off;')
  . network_conf('lagging', upstreams => sim_upstreams(@Ports),
                 settings => 'max_slot_lag 0;')
  . network_conf('small', upstreams => sim_upstreams(@Ports),
                 settings => 'max_batch_size 3;')
  . network_conf('unlimited', upstreams => sim_upstreams(@Ports),
                 settings => 'max_batch_size 0;')
  . network_conf('bcast', upstreams => sim_upstreams(@Ports),
                 settings => 'broadcast sendTransaction|requestAirdrop;');

our $Config = solgate_locations('mainnet')
  . "    location /bcast { solgate_pass bcast; include \$TEST_NGINX_CONF_DIR/solgate_proxy.conf; }\n"
  . "    location /small { solgate_pass small; include \$TEST_NGINX_CONF_DIR/solgate_proxy.conf; }\n"
  . "    location /unlimited { solgate_pass unlimited; include \$TEST_NGINX_CONF_DIR/solgate_proxy.conf; }\n"
  . "    location /lagging { solgate_pass lagging; include \$TEST_NGINX_CONF_DIR/solgate_proxy.conf; }\n"
  . "    location /noretry { solgate_pass noretry; include \$TEST_NGINX_CONF_DIR/solgate_proxy.conf; }\n"
  . "    location /solgate/ { solgate_admin; }\n"
  . "    location = /metrics { solgate_metrics; }\n";

our $Bad = "[error]\n[alert]\n[crit]\n[emerg]\n";

sub clean { for my $p (@Ports) { sim_fault($p, 'clear'); sim_reset($p) } }
sub state_of { my ($id, $net) = @_; upstream_state($id, $net) || {} }
sub block_call { my ($id, $slot) = @_;
    rpc($id, 'getBlock', qq([$slot,{"transactionDetails":"none","rewards":false,"maxSupportedTransactionVersion":0}])) }
# sim-a's fault "lag" (80 slots) seen by the poller of network "lagging".
sub sim_a_behind {
    ['sim-a is seen behind', sub {
         my ($a, $b) = map { state_of($_, 'lagging')->{processed_slot} || 0 } qw(sim-a sim-b);
         $a > 0 && $b > $a + 60 }, 10] }
sub polled { sub { !grep { !(state_of($_)->{processed_slot} || 0) } qw(sim-a sim-b sim-c) } }

# Slots as sim-b answers them: produced or skipped, in [from, to].
sub find_slot {
    my ($from, $to, $want) = @_;
    for my $s (reverse $from .. $to) {
        my $body = http_post($Ports[1], '/', block_call(1, $s))->{body};
        return $s if $body =~ $want;
    }
    die "no slot in $from .. $to answers $want";
}
# produced, and skipped, before sim-a's ledger starts; skipped inside it
our $Produced = find_slot($PrunedFirst - 400, $PrunedFirst - 100, qr/"result":\{/);
our $SkippedOld = find_slot($PrunedFirst - 400, $PrunedFirst - 100, qr/"code":-32007/);
our $Skipped = find_slot($PrunedFirst + 100, $PrunedFirst + 600, qr/"code":-32007/);

run_solgate_blocks(http_config => $HttpConfig, config => $Config, setup => 'clean();',
                   no_error_log => $Bad);

__DATA__

=== TEST 1: a block one node has pruned (-32001) reaches the client from a node that holds it
Every call whose first attempt lands on sim-a is asked again elsewhere.
--- wait_for eval
['the nodes are polled', main::polled(), 5]
--- request eval
[map { "POST /\n" . main::block_call($_, $main::Produced) } 1 .. 6]
--- response_body_like eval
[map { qr/^\{"jsonrpc":"2.0","result":\{.*"id":$_\}$/ } 1 .. 6]
--- check
cmp_ok(sim_client_calls($Ports[0], 'getBlock'), '>=', 1, 'sim-a was asked and said it lacks the block');
like(metrics_text(), qr/^solgate_retries_total\{network="mainnet",reason="missing_data"\} [1-9]\d*$/m,
     'metric: retries by reason missing_data');
--- error_log eval
qr/\[info\] .*solgate: upstream "sim-a" lacks the data \(missing_data\), asking "sim-[bc]"/



=== TEST 2: with retry_missing_data off, the pruned node's answer is the client's
--- wait_for eval
['the nodes are polled', sub { (state_of('sim-a', 'noretry')->{processed_slot} || 0) > 0 }, 5]
--- request eval
[map { "POST /noretry\n" . main::block_call($_, $main::Produced) } 1 .. 6]
--- check
my @pruned = grep { $_->{body} =~ /"code":-32001/ } @_;
cmp_ok(scalar(@pruned), '>=', 1, 'a call sim-a answered got its -32001');
is(scalar(@pruned), sim_client_calls($Ports[0], 'getBlock'), 'one per call sim-a answered');



=== TEST 3: a slot skipped everywhere answers -32007 after one sweep
--- wait_for eval
['the nodes are polled', main::polled(), 5]
--- request eval
["POST /\n" . main::block_call(7, $main::Skipped)]
--- response_body_like: ^\{"jsonrpc":"2.0","error":\{"code":-32007,"message":"Slot \d+ was skipped, or missing due to ledger jump to recent snapshot"\},"id":7\}$
--- check
my $asked = 0;
$asked += sim_client_calls($_, 'getBlock') for @Ports;
is($asked, 3, 'each node was asked once: one sweep, no re-sweep');
--- error_log eval
qr/\[info\] .*solgate: none of 3 upstream\(s\) of network "mainnet" holds the data; answering the best error they gave/



=== TEST 4: a mix of missing data and skipped-slot answers gives the missing-data answer
sim-a pruned the slot (-32001), the others say it was skipped (-32007).
--- wait_for eval
['the nodes are polled', main::polled(), 5]
--- request eval
["POST /\n" . main::block_call(8, $main::SkippedOld)]
--- response_body_like: ^\{"jsonrpc":"2.0","error":\{"code":-32001,"message":"Block \d+ cleaned up, does not exist on node. First available block: \d+"\},"id":8\}$
--- check
my $asked = 0;
$asked += sim_client_calls($_, 'getBlock') for @Ports;
is($asked, 3, 'each node was asked once');
--- error_log eval
qr/\[info\] .*solgate: none of 3 upstream\(s\) of network "mainnet" holds the data; answering the best error they gave/



=== TEST 5: a recent block one node has not indexed yet (-32004) reaches the client from a node that has
sim-a runs 80 slots behind (max_slot_lag 0 keeps it in rotation); the block
is finalized on the others.
--- setup
clean();
sim_fault($Ports[0], 'lag', slots => 80);
--- wait_for eval
['sim-a is seen behind', sub {
     my ($a, $b) = map { state_of($_, 'lagging')->{shred_insert_slot} || 0 } qw(sim-a sim-b);
     $a > 0 && $b > $a + 60 }, 10]
--- request eval
[step {
     my $finalized = sim_stats($Ports[1])->{slots}{finalized};
     my $a_shred = sim_stats($Ports[0])->{slots}{shred};
     $main::Recent = main::find_slot($a_shred + 5, $finalized, qr/"result":\{/);
     sim_reset($_) for @Ports;
     for my $i (1 .. 6) {
         my $res = http_post(server_port(), '/lagging', main::block_call($i, $main::Recent));
         like($res->{body}, qr/^\{"jsonrpc":"2.0","result":\{.*"id":$i\}$/, "call $i got the block");
     }
 }]
--- check
cmp_ok(sim_client_calls($Ports[0], 'getBlock'), '>=', 1, 'sim-a was asked and answered -32004');
--- error_log eval
qr/solgate: upstream "sim-a" lacks the data \(missing_data\), asking "sim-[bc]"/



=== TEST 6: retry_missing_data is checked by nginx -t
--- http_config
    solgate_network mainnet { retry_missing_data on attempts=0; upstream a http://127.0.0.1:1; }
--- config
--- must_die
--- error_log eval
qr/invalid "attempts=" "0" in "retry_missing_data": must be a number from 1 to 10 in \S+nginx\.conf:\d+/



=== TEST 7: a batch of more than max_batch_size calls is refused here, with no upstream call
--- request eval
["POST /small\n[" . join(',', map { main::rpc($_, 'getSlot') } 1 .. 3) . "]",
 "POST /small\n[" . join(',', map { main::rpc($_, 'getSlot') } 1 .. 4) . "]",
 "POST /\n[" . join(',', map { main::rpc($_, 'getSlot') } 1 .. 101) . "]"]
--- response_body_like eval
[qr/^\[\{"jsonrpc":"2.0","result":\d+,"id":1\},/,
 qr/^\{"jsonrpc":"2.0","error":\{"code":-32600,"message":"Invalid request: a batch of 4 calls is more than max_batch_size 3"\},"id":null\}$/,
 qr/^\{"jsonrpc":"2.0","error":\{"code":-32600,"message":"Invalid request: a batch of 101 calls is more than max_batch_size 100"\},"id":null\}$/]
--- check
my $calls = 0;
$calls += sim_client_calls($_, 'getSlot') for @Ports;
is($calls, 3, 'only the batch within the limit reached an upstream');



=== TEST 8: a batch is answered call by call: local answers in their places, the rest from an upstream
--- wait_for eval
['the nodes are polled', main::polled(), 5]
--- request eval
["POST /\n[" . join(',',
    main::rpc(1, 'getGenesisHash'),
    main::rpc(2, 'getSlot'),
    main::rpc(3, 'getBlock', '[999999999999,{"maxSupportedTransactionVersion":0}]'),
    main::rpc(4, 'getBalance', '["83astBRguLMdt2h5U1Tpdq5tjFoJ6noeGwaY3mDLVcri"]')) . "]"]
--- response_body_like eval
qr/^\[\{"jsonrpc":"2.0","result":"5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d","id":1\},\{"jsonrpc":"2.0","result":\d+,"id":2\},\{"jsonrpc":"2.0","error":\{"code":-32004,"message":"Block not available for slot 999999999999"\},"id":3\},\{"jsonrpc":"2.0","result":\{"context":\{.*"slot":\d+\},"value":\d+\},"id":4\}\]$/
--- check
my ($slot, $balance, $block, $genesis) = (0, 0, 0, 0);
for my $p (@Ports) {
    $slot += sim_client_calls($p, 'getSlot');
    $balance += sim_client_calls($p, 'getBalance');
    $block += sim_client_calls($p, 'getBlock');
    $genesis += sim_client_calls($p, 'getGenesisHash');
}
is("$slot $balance $block $genesis", '1 1 0 0', 'only getSlot and getBalance went upstream');
is(scalar(grep { sim_client_calls($_) > 0 } @Ports), 1, 'as one batch, to one upstream');



=== TEST 9: a batch with an invalid call answers the others
--- request eval
["POST /\n[" . join(',', main::rpc(1, 'getSlot'), '{"jsonrpc":"2.0","id":2}', '{"jsonrpc":"2.0","id":"n","method":"getSlot","params":{"x":1}}', main::rpc(3, 'getSlot')) . "]"]
--- response_body_like eval
qr/^\[\{"jsonrpc":"2.0","result":\d+,"id":1\},\{"jsonrpc":"2.0","error":\{"code":-32600,"message":"Invalid request: missing \\"method\\""\},"id":2\},\{"jsonrpc":"2.0","error":\{"code":-32602,"message":"Invalid params: \\"params\\" must be an array"\},"id":"n"\},\{"jsonrpc":"2.0","result":\d+,"id":3\}\]$/
--- check
my $calls = 0;
$calls += sim_client_calls($_, 'getSlot') for @Ports;
is($calls, 2, 'the two valid calls went upstream (params by name is no Solana call)');



=== TEST 10: a getSlot inside a batch is corrected as a single one is, whether the batch is sent whole or in part
sim-a runs 80 slots behind (max_slot_lag 0 keeps it in rotation): its
processed getSlot answers are raised to the network's processed tip.
--- setup
clean();
sim_fault($Ports[0], 'lag', slots => 80);
--- wait_for eval
main::sim_a_behind()
--- request eval
[step {
     my $tip = network_state('lagging')->{tips}{processed};
     for my $i (1 .. 12) {
         # odd: sent in part (the genesis hash is answered here); even: whole
         my $first = $i % 2 ? main::rpc(1, 'getGenesisHash') : main::rpc(1, 'getHealth');
         my $res = http_post(server_port(), '/lagging', "[$first,"
             . main::rpc(2, 'getSlot', '[{"commitment":"processed"}]') . ']');
         my ($slot) = $res->{body} =~ /"result":(\d+),"id":2\}/;
         ok(defined $slot && $slot >= $tip, "batch $i: getSlot " . ($slot // 'none') . " is at or past the tip $tip");
     }
 }]
--- check
cmp_ok(sim_client_calls($Ports[0], 'getSlot'), '>=', 1, 'sim-a answered some of them');



=== TEST 11: broadcast sendTransaction reaches every node once and answers once
--- wait_for eval
['the nodes are polled', sub { (state_of('sim-c', 'bcast')->{processed_slot} || 0) > 0 }, 5]
--- request eval
["POST /bcast\n" . main::rpc(5, 'sendTransaction', '["AQABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4fICEiIyQlJicoKSorLC0uLzAxMjM0NTY3ODk6Ozw9Pj8BAAEC",{"encoding":"base64"}]')]
--- response_body: {"jsonrpc":"2.0","result":"1GMkH3brNXiNNs1tiFZHu4yZSRrzJwxi5wB9bHFtMinfCXNnR1adh8Vo8NTheK4evneedH4qmvjeqcBBNAefgS","id":5}
--- check
is(join(' ', map { sim_client_calls($_, 'sendTransaction') } @Ports), '1 1 1',
   'each node got the transaction once');
my ($ok, $text) = (0, metrics_text());
$ok += $1 while $text =~ /^solgate_broadcast_attempts_total\{network="bcast",upstream="sim-[abc]",outcome="ok"\} (\d+)$/mg;
is($ok, 3, 'metric: three broadcast attempts answered a result');



=== TEST 12: a broadcast answers a success when one node succeeds, an error only when all fail
--- setup
clean();
sim_fault($_, 'http_status', code => 500) for @Ports[0, 1];
--- wait_for eval
['the nodes are polled', sub { (state_of('sim-c', 'bcast')->{processed_slot} || 0) > 0 }, 5]
--- request eval
["POST /bcast\n" . main::rpc(6, 'sendTransaction', '["AQABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4fICEiIyQlJicoKSorLC0uLzAxMjM0NTY3ODk6Ozw9Pj8BAAEC",{"encoding":"base64"}]'),
 step { sim_fault($Ports[2], 'http_status', code => 500) },
 "POST /bcast\n" . main::rpc(7, 'sendTransaction', '["AQABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4fICEiIyQlJicoKSorLC0uLzAxMjM0NTY3ODk6Ozw9Pj8BAAEC",{"encoding":"base64"}]')]
--- error_code eval
[200, 502]
--- response_body_like eval
[qr/^\{"jsonrpc":"2.0","result":"1GMk[^"]*","id":6\}$/,
 qr/^\{"jsonrpc":"2.0","error":\{"code":-32603,"message":"Internal error: no upstream could serve the request \([123] tried\)"\},"id":7\}$/]
--- no_error_log
[alert]
[crit]



=== TEST 13: a getBlock inside a batch goes alone: one node's -32001 is retried, and the batch is answered in order
Each batch's getBlock is its own subrequest; those whose first attempt
lands on sim-a (pruned) are asked again elsewhere.  The calls between it
and the guard's answer go upstream as one run.
--- wait_for eval
['the nodes are polled', main::polled(), 5]
--- request eval
[map { "POST /\n[" . join(',',
    main::rpc(1, 'getGenesisHash'),
    main::block_call(2, $main::Produced),
    main::rpc(3, 'getBalance', '["83astBRguLMdt2h5U1Tpdq5tjFoJ6noeGwaY3mDLVcri"]'),
    main::rpc(4, 'getSlot'),
    main::rpc(5, 'getBlock', '[999999999999,{"maxSupportedTransactionVersion":0}]')) . "]" } 1 .. 6]
--- response_body_like eval
[map { qr/^\[\{"jsonrpc":"2.0","result":"5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d","id":1\},\{"jsonrpc":"2.0","result":\{"blockHeight".*"id":2\}\s*,\{"jsonrpc":"2.0","result":\{"context":\{.*"value":\d+\},"id":3\},\{"jsonrpc":"2.0","result":\d+,"id":4\},\{"jsonrpc":"2.0","error":\{"code":-32004,"message":"Block not available for slot 999999999999"\},"id":5\}\]$/s } 1 .. 6]
--- check
my ($block, $balance, $slot) = (0, 0, 0);
for my $p (@Ports) {
    $block += sim_client_calls($p, 'getBlock');
    $balance += sim_client_calls($p, 'getBalance');
    $slot += sim_client_calls($p, 'getSlot');
}
is("$balance $slot", '6 6', 'getBalance and getSlot went upstream once per batch');
cmp_ok($block, '>', 6, 'getBlocks that landed on the pruned node were asked again');
cmp_ok(sim_client_calls($Ports[0], 'getBlock'), '>=', 1, 'sim-a was asked some of them');
my $text = metrics_text();
like($text, qr/^solgate_retries_total\{network="mainnet",reason="missing_data"\} [1-9]/m,
     'metric: the retries are counted');



=== TEST 14: with retry_missing_data off, a batch goes whole to one upstream as before
--- wait_for eval
['the nodes are polled', sub { (state_of('sim-c', 'noretry')->{processed_slot} || 0) > 0 }, 5]
--- request eval
["POST /noretry\n[" . join(',', main::block_call(1, $main::Produced), main::rpc(2, 'getBalance', '["83astBRguLMdt2h5U1Tpdq5tjFoJ6noeGwaY3mDLVcri"]')) . "]"]
--- response_body_like eval
qr/^\[\{"jsonrpc":"2.0",.*"id":1\},\{"jsonrpc":"2.0","result":\{"context".*"id":2\}\]\s*$/s
--- check
is(scalar(grep { sim_client_calls($_) > 0 } @Ports), 1, 'one upstream got the batch');



=== TEST 15: a skipped slot inside a batch answers -32007 after one sweep, the other calls as usual
--- wait_for eval
['the nodes are polled', main::polled(), 5]
--- request eval
["POST /\n[" . join(',', main::block_call(7, $main::Skipped), main::rpc(8, 'getSlot')) . "]"]
--- response_body_like eval
qr/^\[\{"jsonrpc":"2.0","error":\{"code":-32007,.*"id":7\}\s*,\{"jsonrpc":"2.0","result":\d+,"id":8\}\]$/s
--- check
is(join(' ', map { sim_client_calls($_, 'getBlock') } @Ports), '1 1 1',
   'each node was asked for the skipped slot once');



=== TEST 16: large answers of calls that went alone reach the client whole and in order, whichever ends first
sim-a answers getBlock 300 ms late (and has pruned the block: those
calls are asked again elsewhere); each answer is a full block.
--- setup
clean();
sim_fault($Ports[0], 'method_latency', method => 'getBlock', ms => 300);
--- wait_for eval
['the nodes are polled', main::polled(), 5]
--- request eval
[step {
     # the one slot known to be produced (a skipped one would get sim-a's
     # -32001, rightly: it outranks -32007)
     my $calls = join(',', map { get_block_call($_ + 1, $main::Produced, '{"maxSupportedTransactionVersion":0,"transactionDetails":"full"}') } 0 .. 5);
     for my $round (1 .. 4) {
         my $res = http_post(server_port(), '/', "[$calls]");
         my $answers = eval { JSON::PP::decode_json($res->{body}) };
         ok(ref $answers eq 'ARRAY' && @$answers == 6, "round $round: one array of six answers ("
            . length($res->{body}) . " bytes)") or diag(substr($res->{body} // '', 0, 300));
         is(join(',', map { $_->{id} } @{ $answers || [] }), '1,2,3,4,5,6', "round $round: in order");
         is(scalar(grep { ref $_->{result} eq 'HASH' && @{ $_->{result}{transactions} } > 0 } @{ $answers || [] }), 6,
            "round $round: each a full block")
             or diag(join "\n", map { substr(JSON::PP::encode_json($_), 0, 200) } grep { ref $_->{result} ne 'HASH' } @{ $answers || [] });
     }
 }]
--- check
my $calls = 0;
$calls += sim_client_calls($_, 'getBlock') for @Ports;
cmp_ok($calls, '>=', 24, 'each call went upstream on its own');
cmp_ok(sim_client_calls($Ports[0], 'getBlock'), '>=', 1, 'the slow node answered some');



=== TEST 17: a batch of 300 calls that may lack data: 256 go alone, the rest as one run, all answered in order
--- wait_for eval
['the nodes are polled', sub { (state_of('sim-c', 'unlimited')->{processed_slot} || 0) > 0 }, 5]
--- request eval
[step {
     my $sig = '"5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW"';
     my $body = '[' . join(',', map { main::rpc($_, 'getTransaction', "[$sig]") } 1 .. 300) . ']';
     my $res = http_post(server_port(), '/unlimited', $body);
     my $answers = eval { JSON::PP::decode_json($res->{body}) };
     ok(ref $answers eq 'ARRAY' && @$answers == 300, 'one array of 300 answers')
         or diag(substr($res->{body} // '', 0, 300));
     is(join(',', map { $_->{id} } @{ $answers || [] }), join(',', 1 .. 300), 'in order');
 }]
--- check
my $calls = 0;
$calls += sim_client_calls($_, 'getTransaction') for @Ports;
cmp_ok($calls, '>=', 300, 'every call reached an upstream');



=== TEST 18: a client that leaves while a batch's calls run: the calls end, nothing breaks
sim-a..c answer getBlock after 1 s; the client gives up after 0.3 s.
--- setup
clean();
sim_fault($_, 'method_latency', method => 'getBlock', ms => 1000) for @Ports;
--- wait_for eval
['the nodes are polled', main::polled(), 5]
--- request eval
"POST /\n[" . join(',', main::block_call(1, $main::Produced), main::rpc(2, 'getSlot'), main::block_call(3, $main::Produced)) . "]"
--- timeout: 0.3
--- abort
--- ignore_response
--- check
wait_for('the batch is over', sub {
    metric(qr/^solgate_requests_total\{network="mainnet",[^}]*method="batch"[^}]*\} (\d+)$/m) }, 5);
my $res = http_post(server_port(), '/', main::rpc(4, 'getSlot'));
like($res->{body}, qr/"result":\d+,"id":4\}$/, 'the gateway answers the next request');
--- no_error_log
[alert]
[crit]
[emerg]



=== TEST 19: a piece whose upstream answers an HTTP error no failover takes gets JSON-RPC errors in its places
Every node answers 403: the batch's calls that went alone and its run
each get their own error, in one valid array.
--- setup
clean();
sim_fault($_, 'http_status', code => 403) for @Ports;
--- request eval
"POST /\n[" . join(',', main::rpc(1, 'getTransaction', '["s"]'), main::rpc(2, 'getBalance', '["83astBRguLMdt2h5U1Tpdq5tjFoJ6noeGwaY3mDLVcri"]'), main::rpc(3, 'getSlot'), main::rpc(4, 'getGenesisHash')) . "]"
--- response_body_like eval
qr/^\[\{"jsonrpc":"2.0","error":\{"code":-32603,"message":"Internal error: the call ended with HTTP status 403"\},"id":1\},\{"jsonrpc":"2.0","error":\{"code":-32603,"message":"Internal error: the call ended with HTTP status 403"\},"id":2\},\{"jsonrpc":"2.0","error":\{"code":-32603,"message":"Internal error: the call ended with HTTP status 403"\},"id":3\},\{"jsonrpc":"2.0","result":"5eykt[^"]+","id":4\}\]$/
--- check
my $text = metrics_text();
like($text, qr/^solgate_requests_total\{network="mainnet",upstream="",method="batch",outcome="ok"\} 1$/m,
     'the batch counts as a batch its pieces answered');
like($text, qr/^solgate_requests_total\{network="mainnet",upstream="sim-[abc]",method="getTransaction",outcome="http_error"\} 1$/m,
     'the call that went alone counts under its method');



=== TEST 20: a batch of 100,000 calls: refused whole past max_batch_size, answered here in order without it, the worker's memory given back
A 100,000-call batch is 5.5 MB; the parse and the local answer are linear
and live in the request's pool, so the worker ends where it began.  The
8 MB answer is more than the socket takes at once: nginx's writer sends the
rest (it used to stall there until the client gave up).
--- workers: 1
--- request eval
[step {
     my $rss = sub { my $kb = 0; for my $pid (nginx_workers()) {
         open my $fh, '<', "/proc/$pid/status" or next;
         while (<$fh>) { $kb += $1 if /^VmRSS:\s+(\d+)/ } } $kb };
     my $warm = '[' . join(',', map { main::rpc($_, 'getGenesisHash') } 1 .. 1000) . ']';
     http_post(server_port(), '/unlimited', $warm);
     my $before = $rss->();
     cmp_ok($before, '>', 0, "the worker's RSS is read ($before kB)");
     my $reads = '[' . join(',', map { main::rpc($_, 'getSlot') } 1 .. 100_000) . ']';
     my $res = http_post(server_port(), '/', $reads, undef, 60);
     is($res->{body}, '{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request: a batch of 100000 calls is more than max_batch_size 100"},"id":null}',
        'past max_batch_size: one -32600');
     my $local = '[' . join(',', map { main::rpc($_, 'getGenesisHash') } 1 .. 100_000) . ']';
     my ($hash) = http_post(server_port(), '/unlimited', main::rpc(1, 'getGenesisHash'))->{body}
                  =~ /"result":"(\w+)"/;
     my $want = '[' . join(',', map { qq({"jsonrpc":"2.0","result":"$hash","id":$_}) } 1 .. 100_000) . ']';
     for my $round (1 .. 3) {
         $res = http_post(server_port(), '/unlimited', $local, undef, 60);
         ok($res->{body} eq $want, "round $round: 100,000 local answers, in order ("
                                   . length($res->{body}) . " bytes)");
     }
     my $grown = $rss->() - $before;
     SKIP: {
         # ASan keeps freed memory in quarantine (256 MB by default) and
         # does not give it back: RSS measures nothing there
         skip('the worker runs under ASan (make test SANITIZE=1)', 1)
             if ($ENV{TEST_NGINX_BINARY} // '') =~ /asan-nginx\.sh$/;
         cmp_ok($grown, '<', 32 * 1024, "the worker's RSS grew by $grown kB over three rounds");
     }
 }]
--- check
my $calls = 0;
$calls += sim_client_calls($_) for @Ports;
is($calls, 0, 'no call reached an upstream');



=== TEST 21: a broadcast sendTransaction without id (a notification) reaches every node and is answered nothing: an empty 200, not an error
--- setup
clean();
--- wait_for eval
['the nodes are polled', sub { (state_of('sim-c', 'bcast')->{processed_slot} || 0) > 0 }, 5]
--- request eval
"POST /bcast\n" . '{"jsonrpc":"2.0","method":"sendTransaction","params":["AQABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4fICEiIyQlJicoKSorLC0uLzAxMjM0NTY3ODk6Ozw9Pj8BAAEC",{"encoding":"base64"}]}'
--- error_code: 200
--- response_body:
--- check
is(join(' ', map { sim_client_calls($_, 'sendTransaction') } @Ports), '1 1 1',
   'each node got the transaction once');



=== TEST 22: a batch with a getSlot whose id the node writes anew (an escape, a long id) gets one answer per call, at or past the tip
The node writes "a\/b" back as "a/b": the answer is still that call's.
--- setup
clean();
sim_fault($Ports[0], 'lag', slots => 80);
--- wait_for eval
main::sim_a_behind()
--- request eval
[step {
     my $tip = network_state('lagging')->{tips}{processed};
     my $long = '"' . ('L' x 300) . '"';
     for my $id ('"a\\/b"', '"caf\\u00e9"', $long) {
         my $res = http_post(server_port(), '/lagging', '['
             . main::rpc(1, 'getGenesisHash') . ','
             . qq({"jsonrpc":"2.0","id":$id,"method":"getSlot","params":[{"commitment":"processed"}]}) . ']');
         my @ids = $res->{body} =~ /"id":("(?:[^"\\]|\\.)*"|\d+|null)\}/g;
         is(scalar(@ids), 2, "id " . substr($id, 0, 12) . ": two answers for two calls") or diag($res->{body});
         unlike($res->{body}, qr/-32603/, 'no made-up missing answer');
         my ($slot) = $res->{body} =~ /"result":(\d+),"id":"/;
         ok(defined $slot && $slot >= $tip, 'its getSlot is at or past the tip: ' . ($slot // 'none'));
     }
 }]
