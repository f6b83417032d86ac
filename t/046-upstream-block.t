# Every server of an upstream {} block is a node: "pool.1", "pool.2", ...
# each polled, cordoned, scored and chosen on its own, while nginx reaches
# it over the block's keepalive connections (solgate_balancer pins each
# attempt to its server; keepalive reuses a connection to that address).
# Nodes run 10 ms slots, so a stall is seen within a second.

use Test::Nginx::Socket 'no_plan';
use Solgate::Sim;
use Solgate::TestConf;
use List::Util qw(sum);
use Solgate::Gateway;

our @Ports = (19901, 19902, 19903, 19904);
sim_start(port => $_, args => ['--slot-ms', 10, '--skip-rate', 0, '--quiet'])
    for @Ports;

our $HttpConfig = <<"EOC"
    upstream own_pool {
        solgate_balancer;
        server 127.0.0.1:$Ports[0];
        server 127.0.0.1:$Ports[1];
        server 127.0.0.1:$Ports[2];
        server 127.0.0.1:$Ports[3] backup;
        server 127.0.0.1:1 down;
        keepalive 8;
    }
EOC
  . network_conf('mainnet', upstreams => [['pool', 'http://own_pool', 'tags=family:own']]);

our $Config = solgate_locations('mainnet')
  . "    location /solgate/ { solgate_admin; }\n"
  . "    location = /metrics { solgate_metrics; }\n";

our $Account = '"83astBRguLMdt2h5U1Tpdq5tjFoJ6noeGwaY3mDLVcri"';
our $Bad = "[error]\n[alert]\n[crit]\n[emerg]\n";

sub clean { for my $p (@Ports) { sim_fault($p, 'clear'); sim_reset($p) } }
sub balances { rpc_requests($_[0], map { [$_, 'getBalance', "[$Account]"] } 1 .. $_[1]) }
sub balance_answers { [map { qr/^\{"jsonrpc":"2.0","result":\{"context":\{.*"slot":\d+\}.*"id":$_\}$/ } 1 .. $_[0]] }
sub state_of { upstream_state($_[0], 'mainnet') || {} }
sub polled { my @ids = @_; sub { !grep { !(state_of($_)->{processed_slot} || 0) } @ids } }

run_solgate_blocks(http_config => $HttpConfig, config => $Config, setup => 'clean();',
                   no_error_log => $Bad);

__DATA__

=== TEST 1: each server not marked down is a node, polled on its own; the block's backup is a backup
--- wait_for eval
['every node is polled', main::polled('pool.1', 'pool.2', 'pool.3', 'pool.4'), 5]
--- request eval
[@{ balances('/', 30) }]
--- response_body_like eval
balance_answers(30)
--- check
my @ids = map { $_->{id} } upstreams('mainnet');
is("@ids", 'pool.1 pool.2 pool.3 pool.4', 'the nodes, named by place in the block (the down server is none)');
is(state_of('pool.4')->{backup}, JSON::PP::true, 'the backup server is a backup node');
# each primary takes calls; their shares follow the latency scores, which
# a slow run (ASan) can tilt far from a third each (one had 4 of 30)
for my $p (@Ports[0 .. 2]) {
    cmp_ok(sim_client_calls($p), '>=', 1, "server $p served calls");
}
cmp_ok(sum(map { sim_client_calls($_) } @Ports[0 .. 2]), '>=', 30, 'the primaries served every call');
is(sim_client_calls($Ports[3]), 0, 'the backup served nothing while the primaries are healthy');
like(Test::Nginx::Util::read_error_log(),
     qr/\[notice\] .*solgate: upstream "pool" of network "mainnet" is 4 node\(s\), one per server of upstream block "own_pool" not marked down/,
     'the error log says how many nodes the upstream became');
unlike(Test::Nginx::Util::read_startup_stderr(), qr/solgate/,
       'nothing of it on the terminal that started nginx');



=== TEST 2: a stalled server of the block gets no client request once detected; the other two share the load over keepalive
--- wait_for eval
['every node is polled', main::polled('pool.1', 'pool.2', 'pool.3'), 5]
--- request eval
[step {
     sim_fault($Ports[1], 'stall', on => 1);
     wait_for('pool.2 is out of rotation',
              sub { my $s = state_of('pool.2'); $s->{lagging} || $s->{cordon} }, 10);
     sim_reset($_) for @Ports;
 },
 @{ balances('/', 60) }]
--- response_body_like eval
[@{ balance_answers(60) }]
--- check
is(sim_client_calls($Ports[1]), 0, 'the stalled server got no client request');
my ($one, $three) = map { sim_client_calls($_) } @Ports[0, 2];
is($one + $three, 60, 'the other two served all 60');
cmp_ok($one, '>=', 15, "pool.1 served $one");
cmp_ok($three, '>=', 15, "pool.3 served $three");
my $connections = 0;
$connections += sim_stats($_)->{client_connections} for @Ports[0, 2];
cmp_ok($connections, '<=', 4, "60 requests took $connections new connections: the block's keepalive is used");
--- no_error_log
[alert]
[crit]
[emerg]



=== TEST 3: a selector naming the upstream picks its nodes; naming a node picks that one
--- wait_for eval
['every node is polled', main::polled('pool.1', 'pool.2', 'pool.3'), 5]
--- request eval
[step {
     for my $i (1 .. 6) {
         my $res = http_post(server_port(), '/?use-upstream=pool.3', rpc($i, 'getBalance', "[$Account]"));
         is($res->{status}, 200, "pinned request $i answered");
     }
     is(sim_client_calls($Ports[2]), 6, 'pool.3 served every request that named it');
     sim_reset($_) for @Ports;
     for my $i (1 .. 6) {
         my $res = http_post(server_port(), '/?use-upstream=pool', rpc($i, 'getBalance', "[$Account]"));
         is($res->{status}, 200, "request $i for the group answered");
     }
 }]
--- check
my $served = 0;
$served += sim_client_calls($_) for @Ports[0 .. 2];
is($served, 6, 'the primaries of the group served the requests that named it');



=== TEST 4: several servers without solgate_balancer are refused, naming both places
--- http_config
    upstream two { server 127.0.0.1:1; server 127.0.0.1:2; keepalive 4; }
    solgate_network mainnet { upstream pool http://two; }
--- config
--- must_die
--- error_log eval
qr/upstream "pool" of network "mainnet" names upstream block "two", which has 2 servers: put "solgate_balancer;" in that block, before "keepalive", so that each server is a node in \S+nginx\.conf:\d+/



=== TEST 5: solgate_balancer after keepalive is refused
--- http_config
    upstream two { server 127.0.0.1:1; keepalive 4; solgate_balancer; }
--- config
--- must_die
--- error_log eval
qr/"solgate_balancer" must come before "keepalive" in upstream "two", and replaces hash, ip_hash, least_conn and random in \S+nginx\.conf:\d+/



=== TEST 6: a block used by plain proxy_pass keeps round robin over its servers
--- http_config eval
$::HttpConfig
--- config eval
$::Config . "    location /plain { proxy_pass http://own_pool/; proxy_http_version 1.1; proxy_set_header Connection \"\"; }\n"
--- request eval
balances('/plain', 9)
--- response_body_like eval
[map { qr/"result"/ } 1 .. 9]
--- check
for my $p (@Ports[0 .. 2]) {
    is(sim_client_calls($p), 3, "round robin gave server $p three");
}



=== TEST 7: a server of the block answering 429 is failed over to another server; the backup server is reached when named
--- wait_for eval
['every node is polled', main::polled('pool.1', 'pool.2', 'pool.3', 'pool.4'), 5]
--- request eval
[step { sim_fault($Ports[0], 'http_status', code => 429) },
 @{ balances('/', 12) },
 @{ balances('/?use-upstream=pool.4', 3) }]
--- response_body_like eval
[@{ balance_answers(12) }, @{ balance_answers(3) }]
--- check
is(scalar(grep { $_->{status} != 200 } @_), 0, 'every answer 200 with a result');
is(sim_client_calls($Ports[1]) + sim_client_calls($Ports[2]), 12,
   'the other two servers answered all 12');
is(sim_client_calls($Ports[3]), 3, 'the backup server answered the 3 that named it');
--- error_log eval
qr/solgate: upstream "pool\.1" failed \(http_429, status 429\), retrying on "pool\.[23]"/
--- no_error_log
[alert]
[crit]
[emerg]
