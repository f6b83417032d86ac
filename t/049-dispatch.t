# solgate_dispatch.conf: `proxy_pass http://solgate;` to an upstream {}
# block with solgate_dispatch, which hands each attempt to the upstream
# Solgate chose: a node's own block (single server, or one server of a
# solgate_balancer block, over their keepalive connections), or an address;
# a WebSocket to the node's ws= address.  The node gets "/", never the
# client's path or arguments, as with solgate_proxy.conf.  nginx -t refuses
# a network it cannot serve and a dispatcher block with anything else in it.

use Test::Nginx::Socket 'no_plan';
use Solgate::Sim;
use Solgate::TestConf;
use Solgate::Gateway;
use Solgate::WebSocket;

# own_a (a block of one), an address with ws=, and a balanced pool of two
our ($A, $B, $BWs, $P1, $P2) = (19905, 19906, 19908, 19907, 19909);
sim_start(port => $_, args => ['--skip-rate', 0, '--quiet']) for $A, $P1, $P2;
sim_start(port => $B, args => ['--skip-rate', 0, '--quiet', '--ws-port', $BWs]);
our @Sims = ($A, $B, $P1, $P2);

our $Dispatcher = "    upstream solgate { solgate_dispatch; }\n";

our $HttpConfig = $Dispatcher . <<"EOC"
    upstream own_a { server 127.0.0.1:$A; keepalive 8; }
    upstream own_pool {
        solgate_balancer;
        server 127.0.0.1:$P1;
        server 127.0.0.1:$P2;
        keepalive 8;
    }
EOC
  . network_conf('mainnet', upstreams => [
        ['a', 'http://own_a'],
        ['b', "http://127.0.0.1:$B", "ws=ws://127.0.0.1:$BWs"],
        ['pool', 'http://own_pool']]);

sub dispatch_locations {
    my ($network, $extra, $path) = @_;
    $extra ||= '';
    $path ||= '/';
    return <<"_EOC_";
    location $path {
        solgate_pass $network;
        include \$TEST_NGINX_CONF_DIR/solgate_dispatch.conf;
    }
    location \@solgate_retry {
        solgate_pass $network;
        include \$TEST_NGINX_CONF_DIR/solgate_dispatch.conf;
    }
$extra
_EOC_
}

# A location written before the dispatcher added the upgrade itself: it
# still sets the headers with the variables, as solgate_proxy.conf does.
our $OldSnippet = <<'_EOC_';
    location /old/ {
        solgate_pass mainnet;
        proxy_pass http://solgate;
        proxy_set_header Host $solgate_upstream_host;
        proxy_set_header X-Solgate-Peer $solgate_peer_token;
        proxy_http_version 1.1;
        proxy_set_header Connection $solgate_connection;
        proxy_set_header Upgrade $solgate_upgrade;
    }
_EOC_

our $Config = dispatch_locations('mainnet',
      "    location /solgate/ { solgate_admin; }\n"
    . "    location = /metrics { solgate_metrics; }\n");

our $Account = '"83astBRguLMdt2h5U1Tpdq5tjFoJ6noeGwaY3mDLVcri"';
our $Bad = "[error]\n[alert]\n[crit]\n[emerg]\n";

# a network whose getBalance is broadcast: a batch with one goes call by call
our $FanConfig = $Dispatcher . network_conf('fan', settings => 'broadcast getBalance;', upstreams => [
    ['a', "http://127.0.0.1:$A"],
    ['b', "http://127.0.0.1:$B"]]);

sub clean { for my $p (@Sims) { sim_fault($p, 'clear'); sim_reset($p) } }
sub fan_polled { !grep { !((upstream_state($_, 'fan') || {})->{processed_slot} || 0) } qw(a b) }
sub client_calls_of {
    my ($port, $method) = @_;
    my $stats = sim_stats($port);
    return ($stats->{calls}{$method} || 0) - ($stats->{poller_calls}{$method} || 0);
}
sub state_of { upstream_state($_[0], 'mainnet') || {} }
sub polled { my @ids = @_; sub { !grep { !(state_of($_)->{processed_slot} || 0) } @ids } }
sub balance { rpc($_[0], 'getBalance', "[$Account]") }
sub balance_like { qr/^\{"jsonrpc":"2.0","result":\{"context":\{.*"slot":\d+\}.*"id":$_[0]\}$/ }
sub served { map { sim_client_calls($_) } @_ }
# a batch with a broadcast call, so it goes call by call, and its answer
sub pinned_batch { '[' . balance($_[0]) . ',{"jsonrpc":"2.0","id":2,"method":"getSlot"},{"jsonrpc":"2.0","id":3,"method":"getSlot"}]' }
sub pinned_batch_like { qr/^\[\{"jsonrpc":"2.0","result":\{"context".*"id":$_[0]\},\{"jsonrpc":"2.0","result":\d+,"id":2\},\{"jsonrpc":"2.0","result":\d+,"id":3\}\]$/ }

run_solgate_blocks(http_config => $HttpConfig, config => $Config, setup => 'clean();',
                   no_error_log => $Bad);

__DATA__

=== TEST 1: every kind of upstream is reached through the dispatcher; each gets "/", never the client's path and arguments
--- wait_for eval
['every node is polled', main::polled('a', 'b', 'pool.1', 'pool.2'), 5]
--- request eval
[step {
     for my $i (1 .. 60) {
         my $res = http_post(server_port(), '/v1/client-key?api-key=secret', balance($i));
         like($res->{body}, balance_like($i), "call $i answered") or last;
     }
 },
 "POST /\n" . '{"jsonrpc":"2.0","id":1,"method":"getGenesisHash"}']
--- response_body chomp
{"jsonrpc":"2.0","result":"5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d","id":1}
--- check
my @served = served(@Sims);
is($served[0] + $served[1] + $served[2] + $served[3], 60, "the nodes served the 60 calls (@served)");
for my $i (0 .. $#Sims) {
    cmp_ok($served[$i], '>=', 1, "node on $Sims[$i] served some");
    is(sim_stats($Sims[$i])->{last_client_target}, '/', "node on $Sims[$i] was sent \"/\"");
}
for my $p ($A, $P1, $P2) {
    my $calls = sim_client_calls($p);
    cmp_ok(sim_stats($p)->{client_connections}, '<', $calls,
           "node on $p: its block's keepalive connections carried its $calls calls");
}



=== TEST 2: a selector in the arguments still pins the attempt (read before the URI becomes "/")
--- wait_for eval
['every node is polled', main::polled('a', 'b', 'pool.1', 'pool.2'), 5]
--- request eval
[step {
     for my $i (1 .. 6) {
         my $res = http_post(server_port(), '/?use-upstream=pool.2', balance($i));
         like($res->{body}, balance_like($i), "pinned call $i answered");
     }
     is(sim_client_calls($P2), 6, 'pool.2 served every call that named it');
     is(sim_stats($P2)->{last_client_target}, '/', 'and was sent "/"');
 },
 "POST /\n" . '{"jsonrpc":"2.0","id":1,"method":"getGenesisHash"}']
--- response_body chomp
{"jsonrpc":"2.0","result":"5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d","id":1}



=== TEST 3: a node that answers 502 is failed over through @solgate_retry, which dispatches too, and sends "/" again
--- wait_for eval
['every node is polled', main::polled('a', 'b', 'pool.1', 'pool.2'), 5]
--- request eval
[step { sim_fault($A, 'http_status', code => 502) },
 map { "POST /client/path?key=secret\n" . main::balance($_) } 1 .. 20]
--- response_body_like eval
[map { main::balance_like($_) } 1 .. 20]
--- check
my ($a, @rest) = served(@Sims);
my $others = 0;
$others += $_ for @rest;
is($others, 20, 'the other nodes answered all 20');
cmp_ok($a, '>=', 1, 'a was tried (and answered 502)');
is(sim_stats($_)->{last_client_target}, '/', "the node on $_ was sent \"/\"") for @Sims;
is(sim_stats($_)->{last_client_content_type}, 'application/json',
   "the node on $_ was sent application/json, which the client did not send") for @Sims;
cmp_ok(metric(qr/^solgate_failovers_total\{network="mainnet",upstream="a",cause="http_5xx"\} (\d+)$/m) || 0,
       '>=', 1, 'the failure of a is counted as a failover');
--- no_error_log
[alert]
[crit]
[emerg]



=== TEST 4: a WebSocket goes to the node's ws= address
--- wait_for eval
['b is polled', main::polled('b'), 5]
--- request eval
[step {
     my $ws = Solgate::WebSocket->connect(port => server_port(), path => '/ws-path?key=x');
     ok($ws, 'the upgrade is answered 101') or diag($Solgate::WebSocket::Error);
     $ws->send_text('{"jsonrpc":"2.0","id":1,"method":"slotSubscribe"}');
     my $ack = $ws->wait_json(5, sub { defined $_[0]{id} && $_[0]{id} == 1 });
     like($ack && $ack->{result}, qr/^\d+$/, 'slotSubscribe answered with a subscription id');
     is(sim_stats($B)->{ws_sessions}, 1, "b's pubsub port holds the connection");
     is(sim_stats($B)->{last_ws_connection}, 'upgrade', 'the dispatcher sent Connection: upgrade, once');
     is(sim_stats($B)->{last_ws_upgrade}, 'websocket', 'and Upgrade: websocket, once');
     $ws->close(1000);
     wait_for('b sees it closed', sub { sim_stats($B)->{ws_sessions} == 0 }, 5);
 },
 "POST /\n" . '{"jsonrpc":"2.0","id":1,"method":"getGenesisHash"}']
--- response_body chomp
{"jsonrpc":"2.0","result":"5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d","id":1}



=== TEST 5: a location without solgate_pass that proxies to the dispatcher gets 500, and the log says why
--- config eval
$::Config . "    location /plain { proxy_pass http://solgate; }\n"
--- request
POST /plain
{"jsonrpc":"2.0","id":1,"method":"getSlot"}
--- error_code: 500
--- error_log
upstream "solgate" has solgate_dispatch: only a location with solgate_pass may proxy to it
--- no_error_log
[alert]
[crit]



=== TEST 6: nginx -t refuses a dispatched network with an https:// upstream, naming it and both places
--- http_config eval
$::Dispatcher . main::network_conf('mixed', upstreams => [
    ['own', "http://127.0.0.1:$::A"],
    ['vendor', 'https://127.0.0.1:1']])
--- config eval
main::dispatch_locations('mixed')
--- must_die
--- error_log eval
qr/upstream "vendor" of network "mixed" cannot be reached through solgate_dispatch, to which the location of solgate_pass in \S+nginx.conf:\d+ proxies: its URL is not http:\/\/ \(a fixed proxy_pass sends every attempt in one scheme\); proxy there with solgate_proxy.conf instead in \S+nginx.conf:\d+/



=== TEST 7: nginx -t refuses a dispatched network with an upstream URL that has a path
--- http_config eval
$::Dispatcher . main::network_conf('mixed', upstreams => [
    ['own', "http://127.0.0.1:$::A/v1/key"]])
--- config eval
main::dispatch_locations('mixed')
--- must_die
--- error_log
upstream "own" of network "mixed" cannot be reached through solgate_dispatch, to which the location of solgate_pass in



=== TEST 8: ... or a ws= whose host is neither a block nor an address
--- http_config eval
$::Dispatcher . main::network_conf('mixed', upstreams => [
    ['own', "http://127.0.0.1:$::A", 'ws=ws://pubsub.invalid:8900']])
--- config eval
main::dispatch_locations('mixed') . "    resolver 127.0.0.1;\n"
--- must_die
--- error_log
proxies: ws=: its host is neither an upstream {} block nor an address (name it in an upstream {} block)



=== TEST 9: the same network through solgate_proxy.conf is not checked for the dispatcher
--- http_config eval
$::Dispatcher . main::network_conf('mixed', upstreams => [
    ['own', "http://127.0.0.1:$::A/v1/key"]])
--- config eval
main::solgate_locations('mixed')
--- request
POST /
{"jsonrpc":"2.0","id":1,"method":"getGenesisHash"}
--- response_body chomp
{"jsonrpc":"2.0","result":"5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d","id":1}



=== TEST 10: the dispatcher block takes nothing else: keepalive after it
--- http_config eval
"    upstream solgate { solgate_dispatch; keepalive 8; }\n"
  . main::network_conf('mainnet', upstreams => [['a', "http://127.0.0.1:$::A"]])
--- config eval
main::dispatch_locations('mainnet')
--- must_die
--- error_log eval
qr/upstream "solgate" has solgate_dispatch, which takes the block of its own: no "server", "keepalive", "zone" or balancer in it \(they go in the nodes' blocks\) in \S+nginx.conf:\d+/



=== TEST 11: ... or a server before it
--- http_config eval
"    upstream solgate { server 127.0.0.1:$::A; solgate_dispatch; }\n"
  . main::network_conf('mainnet', upstreams => [['a', "http://127.0.0.1:$::A"]])
--- config eval
main::dispatch_locations('mainnet')
--- must_die
--- error_log
"solgate_dispatch" directive takes the block of its own: no "server", "keepalive", "zone" or balancer in it (they go in the nodes' blocks)



=== TEST 12: a batch that goes call by call (a broadcast call, then a run of the others) in a location other than / dispatches each subrequest, and every node gets "/"
--- http_config eval
$::FanConfig
--- config eval
main::dispatch_locations('fan', "    location /solgate/ { solgate_admin; }\n    location / { return 418; }\n", '/rpc')
--- wait_for eval
['both nodes are polled', \&main::fan_polled, 5]
--- request eval
"POST /rpc/client?key=secret\n"
  . '[' . main::balance(1) . ',{"jsonrpc":"2.0","id":2,"method":"getGenesisHash"},{"jsonrpc":"2.0","id":3,"method":"getSlot"}]'
--- response_body_like chomp
^\[\{"jsonrpc":"2.0","result":\{"context":\{.*"slot":\d+\}.*"id":1\},\{"jsonrpc":"2.0","result":"5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d","id":2\},\{"jsonrpc":"2.0","result":\d+,"id":3\}\]$
--- check
for my $p ($A, $B) {
    cmp_ok(main::client_calls_of($p, 'getBalance'), '>=', 1, "the broadcast reached the node on $p");
    is(sim_stats($p)->{last_client_target}, '/', "the node on $p was sent \"/\"");
    is(sim_stats($p)->{last_client_content_type}, 'application/json',
       "the node on $p was sent application/json");
}
is(main::client_calls_of($A, 'getSlot') + main::client_calls_of($B, 'getSlot'), 1, 'the getSlot went to one node');



=== TEST 13: a selector in the arguments or in a header (read once, before the calls are split) pins the calls of a batch that goes call by call
--- http_config eval
$::FanConfig
--- config eval
main::dispatch_locations('fan', "    location /solgate/ { solgate_admin; }\n")
--- wait_for eval
['both nodes are polled', \&main::fan_polled, 5]
--- request eval
[step {
     for my $i (4 .. 6) {
         my $res = http_post(server_port(), '/', main::pinned_batch($i), {'X-Solgate-Use-Upstream' => 'b'});
         like($res->{body}, main::pinned_batch_like($i), "batch $i, pinned by its header, answered");
     }
 },
 map { "POST /?use-upstream=b\n" . main::pinned_batch($_) } 1 .. 3]
--- response_body_like eval
[map { main::pinned_batch_like($_) } 1 .. 3]
--- check
is(main::client_calls_of($A, 'getSlot'), 0, 'no getSlot of the pinned batches went to a');
is(main::client_calls_of($B, 'getSlot'), 12, 'b served all twelve');



=== TEST 14: the dispatcher block takes no zone
--- http_config eval
"    upstream solgate { solgate_dispatch; zone dispatch 64k; }\n"
  . main::network_conf('mainnet', upstreams => [['a', "http://127.0.0.1:$::A"]])
--- config eval
main::dispatch_locations('mainnet')
--- must_die
--- error_log
upstream "solgate" has solgate_dispatch, which takes the block of its own: no "server", "keepalive", "zone" or balancer in it



=== TEST 15: a client's own X-Solgate-Peer never reaches a node; a location that still sets the upgrade with the variables sends each header once
--- config eval
main::dispatch_locations('mainnet', "    location /solgate/ { solgate_admin; }\n" . $::OldSnippet)
--- wait_for eval
['every node is polled', main::polled('a', 'b', 'pool.1', 'pool.2'), 5]
--- request eval
[step {
     for my $i (1 .. 8) {
         my $res = http_post(server_port(), '/', main::balance($i), {'X-Solgate-Peer' => 'forged-token'});
         like($res->{body}, main::balance_like($i), "call $i answered") or last;
     }
     for my $p (@Sims) {
         next unless sim_client_calls($p);
         is(sim_stats($p)->{last_client_peer}, '', "the node on $p got no X-Solgate-Peer");
     }
     my $ws = Solgate::WebSocket->connect(port => server_port(), path => '/old/ws');
     ok($ws, 'the upgrade through the old location is answered 101') or diag($Solgate::WebSocket::Error);
     is(sim_stats($B)->{last_ws_connection}, 'upgrade', 'Connection: upgrade sent once');
     is(sim_stats($B)->{last_ws_upgrade}, 'websocket', 'Upgrade: websocket sent once');
     $ws->close(1000) if $ws;
     wait_for('b sees it closed', sub { sim_stats($B)->{ws_sessions} == 0 }, 5);
 },
 "POST /\n" . '{"jsonrpc":"2.0","id":1,"method":"getGenesisHash"}']
--- response_body chomp
{"jsonrpc":"2.0","result":"5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d","id":1}



=== TEST 16: a dispatched location's server without @solgate_retry is told to include the dispatch snippet there
--- http_config eval
$::Dispatcher . main::network_conf('mainnet', upstreams => [['a', "http://127.0.0.1:$::A"]])
--- config
    location / {
        solgate_pass mainnet;
        include $TEST_NGINX_CONF_DIR/solgate_dispatch.conf;
    }
--- must_die
--- error_log eval
qr/solgate_pass in \S+nginx\.conf:\d+: its server has no "location \@solgate_retry", which failover needs \(every failed attempt would answer HTTP 500\); add one with "solgate_pass mainnet;" and the forwarding snippet \("include \/etc\/nginx\/snippets\/solgate_dispatch\.conf;"\)/
