# Failover: an upstream that is down, answers 502/503, or drops the
# connection is retried on another one, never the same one twice; when all
# fail the client gets one JSON-RPC error.  Killing a node during traffic
# loses no request.

use Test::Nginx::Socket 'no_plan';
use Solgate::Sim;
use Solgate::TestConf;
use Solgate::Gateway;
use IO::Socket::INET ();

our @Ports = (19831, 19832, 19833);
our $DeadPort = 19839;   # nothing listens here
sim_start(port => $_, args => ['--slot-ms', 50, '--quiet']) for @Ports;

our $HttpConfig =
    network_conf('mainnet', upstreams => sim_upstreams(@Ports))
  . network_conf('withdead', upstreams => [
        ['dead', "http://127.0.0.1:$DeadPort"], @{ sim_upstreams($Ports[0]) }])
  . network_conf('keyed', upstreams => [
        ['dead-vendor', "http://127.0.0.1:$DeadPort/v1/SECRETKEY"]])
  . network_conf('twelvedead', upstreams => [
        map { ["dead-$_", "http://127.0.0.1:" . (19940 + $_)] } 1 .. 12])
  . network_conf('alldead', upstreams => [
        ['dead-1', "http://127.0.0.1:$DeadPort"],
        ['dead-2', "http://127.0.0.1:" . ($DeadPort - 1)]]);

our $Config = solgate_locations('mainnet')
  . "    location /withdead { solgate_pass withdead; include \$TEST_NGINX_CONF_DIR/solgate_proxy.conf; }\n"
  . "    location /keyed { solgate_pass keyed; include \$TEST_NGINX_CONF_DIR/solgate_proxy.conf; }\n"
  . "    location /twelvedead { solgate_pass twelvedead; include \$TEST_NGINX_CONF_DIR/solgate_proxy.conf; }\n"
  . "    location /alldead { solgate_pass alldead; include \$TEST_NGINX_CONF_DIR/solgate_proxy.conf; }\n";

add_block_preprocessor(sub {
    my $block = shift;
    $block->set_value(http_config => $HttpConfig) unless defined $block->http_config;
    $block->set_value(config => $Config) unless defined $block->config;
});

# with the admin API and the metrics, for checks of the nodes' state
our $ConfigWithState = $Config
  . "    location /solgate/ { solgate_admin; }\n    location = /metrics { solgate_metrics; }\n";
sub all_polled {
    ['every node is polled',
     sub { !grep { !((upstream_state($_, 'mainnet') || {})->{processed_slot} || 0) } qw(sim-a sim-b sim-c) }, 5]
}

sub call { my ($id, $method) = @_; qq({"jsonrpc":"2.0","id":$id,"method":"$method"}) }
sub clear_faults { for my $p (@Ports) { sim_fault($p, 'clear'); sim_reset($p) } }
sub getslots { [map { "POST $_[0]\n" . call($_, 'getSlot') } 1 .. $_[1]] }
sub slot_answers { [map { qr/^\{"jsonrpc":"2.0","result":\d+,"id":$_\}$/ } 1 .. $_[0]] }

no_shuffle();
no_root_location();
run_tests();

# Every upstream fails: each is tried exactly once.
{
    clear_faults();
    sim_fault($_, 'http_status', code => 503) for @Ports;
    nginx_start($HttpConfig, $Config, no_root_location => 1);
    my $res = http_post(server_port(), '/', call(11, 'getSlot'));
    is($res->{status}, 502, 'all failing: HTTP 502');
    is($res->{body},
       '{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error: '
       . 'no upstream could serve the request (3 tried)"},"id":11}',
       'all failing: one JSON-RPC error with the id');
    is_deeply([map { sim_client_calls($_, 'getSlot') } @Ports], [1, 1, 1],
        'each upstream was tried exactly once');
    nginx_stop();
    clear_faults();
}

# A node killed in the middle of traffic: no request is lost.
{
    nginx_start($HttpConfig, $Config, no_root_location => 1,
                master => 1, workers => 2);
    my ($ok, $total) = (0, 300);
    for my $i (1 .. $total) {
        sim_kill($Ports[1]) if $i == 100;
        my $res = http_post(server_port(), '/', call($i, 'getSlot'));
        $ok++ if $res->{status} == 200
              && $res->{body} =~ /^\{"jsonrpc":"2.0","result":\d+,"id":$i\}$/;
    }
    is($ok, $total, "killing a node during traffic: $ok of $total answered");
    nginx_stop();
}

__DATA__

=== TEST 1: an upstream that refuses connections is skipped
Either a request finds it first and is retried, or the poller cordons it
first; the client never sees the failure.
--- init
clear_faults();
--- request eval
getslots('/withdead', 4)
--- response_body_like eval
slot_answers(4)
--- error_log eval
qr/solgate: upstream "dead" failed \(transport, no answer\), retrying on "sim-a"|cordoning out of rotation: network=withdead upstream=dead/
--- no_error_log
[crit]
[alert]



=== TEST 2: no log line prints the path of an upstream URL (a vendor key lives there)
nginx's own connect() error names the upstream by address only.
--- init
clear_faults();
--- request eval
["POST /keyed\n" . main::call(1, 'getSlot')]
--- error_code: 502
--- error_log eval
qr/connect\(\) failed \(111: Connection refused\) while connecting to upstream, .*upstream: "http:\/\/127\.0\.0\.1:19839"/
--- no_error_log eval
[qr/\[(?!debug)[a-z]+\].*SECRETKEY/, '[alert]']



=== TEST 3: an upstream answering 502 is retried elsewhere; the client never sees it
--- init
clear_faults();
sim_fault($Ports[1], 'http_status', code => 502);
--- request eval
getslots('/', 6)
--- response_body_like eval
slot_answers(6)
--- error_log eval
qr/solgate: upstream "sim-b" failed \(http_5xx, status 502\), retrying on|upstream=sim-b .*getHealth failed: HTTP 502/
--- no_error_log eval
['[crit]', '[alert]',
 # the line says what happened; nginx's "while sending to client" was
 # what the connection did last, not where the attempt failed
 qr/retrying on "[^"]+" while /]



=== TEST 4: 503 and a dropped connection are retried too
--- init
clear_faults();
sim_fault($Ports[0], 'http_status', code => 503);
sim_fault($Ports[2], 'close', on => 1);
--- request eval
getslots('/', 6)
--- response_body_like eval
slot_answers(6)
--- no_error_log
[crit]
[alert]



=== TEST 5: a batch whose upstreams all fail gets one error per call
--- request eval
"POST /alldead\n[" . call(1, 'getSlot') . ',' . call('"b"', 'getSlot') . ']'
--- error_code: 502
--- response_body eval
'[{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error: no upstream could serve the request (2 tried)"},"id":1},'
. '{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error: no upstream could serve the request (2 tried)"},"id":"b"}]'
--- response_headers
Content-Type: application/json; charset=utf-8
--- check
is($_[0]{reason}, 'Internal error: no upstream could serve the request (2 tried)',
   'its reason phrase says why, as a single call\'s does');
--- error_log eval
qr/solgate: all 2 upstream\(s\) of network "alldead" failed, last "[^"]+" with no answer \(transport\)/



=== TEST 5a: a batch whose upstreams all fail but that has a result answered here is a 200
A client drops the body of an HTTP error: with a 502 it would lose the
genesis hash it was given. Each call sent gets its error in its place.
--- request eval
"POST /alldead\n[" . call(1, 'getSlot') . ',' . call(2, 'getGenesisHash') . ']'
--- error_code: 200
--- response_body eval
'[{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error: no upstream could serve the request (2 tried)"},"id":1},'
. '{"jsonrpc":"2.0","result":"5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d","id":2}]'
--- error_log eval
qr/solgate: all 2 upstream\(s\) of network "alldead" failed/



=== TEST 6: nginx's 10 internal redirects bound the failovers: the client still gets the JSON-RPC answer
Twelve upstreams that refuse connections: after ten failovers Solgate
answers as if none were left, never "rewrite or internal redirection cycle".
--- request eval
"POST /twelvedead\n" . call(1, 'getSlot')
--- error_code: 502
--- response_body_like: ^\{"jsonrpc":"2.0","error":\{"code":-32603,"message":"Internal error: no upstream could serve the request \(1[01] tried\)"\},"id":1\}$
--- no_error_log
redirection cycle
[alert]



=== TEST 7: other upstream statuses pass through untouched
--- init
clear_faults();
sim_fault($_, 'http_status', code => 400) for @Ports;
--- request
POST /
{"jsonrpc":"2.0","id":1,"method":"getSlot"}
--- error_code: 400
--- no_error_log
retrying on



=== TEST 8: a node that cuts its answer short is out of rotation after it, though its 200 went on (too late to fail over)
--- init
clear_faults();
--- config eval
$::ConfigWithState
--- wait_for eval
main::all_polled()
--- request eval
[step {
     sim_fault($Ports[1], 'cut_answers', on => 1);
     my $res = http_post(server_port(), '/?use-upstream=sim-b',
         '{"jsonrpc":"2.0","id":1,"method":"getBalance","params":["83astBRguLMdt2h5U1Tpdq5tjFoJ6noeGwaY3mDLVcri"]}');
     is($res->{status}, 200, 'the cut answer began as a 200');
     unlike($res->{body} || '', qr/\}$/, 'and ended short of its JSON');
     like(metrics_text(), qr/^solgate_upstream_cut_answers_total\{network="mainnet",upstream="sim-b"\} 1$/m,
          'metric: one cut answer of sim-b');
     cmp_ok((upstream_state('sim-b', 'mainnet') || {})->{ejected_for_ms} || 0, '>', 0, 'sim-b is out of rotation');
     # counted as cut, not as the 200 the access log shows (the log phase
     # may come after the client has read what there was)
     wait_for('metric: the request is counted as cut', sub { metrics_text() =~
         /^solgate_requests_total\{network="mainnet",upstream="sim-b",method="getBalance",outcome="cut"\} 1$/m }, 5);
     unlike(metrics_text(), qr/^solgate_requests_total\{network="mainnet",upstream="sim-b",method="getBalance",outcome="ok"\}/m,
            'and not as ok');
     sim_reset($_) for @Ports;
 },
 @{ main::getslots('/', 12) }]
--- response_body_like eval
[@{ main::slot_answers(12) }]
--- check
is(sim_client_calls($Ports[1], 'getSlot'), 0, 'sim-b got none of the next 12');
for my $id (qw(sim-a sim-c)) {
    like(metrics_text(), qr/^solgate_upstream_cut_answers_total\{network="mainnet",upstream="$id"\} 0$/m,
         "${id}'s whole answers are no cut");
}
clear_faults();
--- error_log eval
qr/\[warn\] .*solgate: upstream "sim-b" of network "mainnet" out of rotation for \d+ ms after a failed attempt \(its answer was cut short\)/
--- no_error_log
[alert]
[crit]



=== TEST 9: a minContextSlot no node has reached fails over but takes no node out of rotation (a client chooses it)
--- init
clear_faults();
--- config eval
$::ConfigWithState
--- wait_for eval
main::all_polled()
--- request eval
[map { "POST /\n" . '{"jsonrpc":"2.0","id":' . $_ . ',"method":"getBalance","params":["83astBRguLMdt2h5U1Tpdq5tjFoJ6noeGwaY3mDLVcri",{"minContextSlot":999999999999}]}' } 1 .. 3]
--- error_code eval
[200, 200, 200]
--- response_body_like eval
[map { qr/^\{"jsonrpc":"2.0","error":\{"code":-32016,.*"id":$_\}$/ } 1 .. 3]
--- check
for my $id (qw(sim-a sim-b sim-c)) {
    is((upstream_state($id, 'mainnet') || {})->{ejected_for_ms} || 0, 0, "${id} is in rotation");
}
my $m = metrics_text();
like($m, qr/^solgate_failovers_total\{network="mainnet",upstream="sim-[abc]",cause="min_context_slot"\} [1-9]/m,
     'the calls were failed over (min_context_slot)');
unlike($m, qr/^solgate_failovers_total\{network="mainnet",upstream="sim-[abc]",cause="node_behind"\} [1-9]/m,
       'not as nodes behind');
my $mistakes = 0;
$mistakes += $1 while $m =~ /^solgate_requests_total\{network="mainnet",upstream="sim-[abc]",method="getBalance",outcome="client_error"\} (\d+)$/mg;
is($mistakes, 3, "the client's minContextSlot: its mistake, not the nodes' rpc_error");
--- error_log eval
qr/\[info\] .*upstream "sim-[abc]" has not reached the call's minContextSlot, asking "sim-[abc]"/
--- no_error_log eval
[qr/upstream "sim-[abc]" of network "mainnet" out of rotation/, '[alert]', qr/\[warn\] .*failed \(/]



=== TEST 10: a client that leaves before its answer (499) blames no upstream: outcome client_closed, not http_error
--- init
clear_faults();
sim_fault($_, 'latency', ms => 300) for @Ports;
--- config eval
$::ConfigWithState
--- wait_for eval
main::all_polled()
--- request eval
[step {
     my $closed = sub {
         my ($n, $m) = (0, metrics_text());
         $n += $1 while $m =~ /^solgate_requests_total\{network="mainnet",upstream="sim-[abc]",method="getBalance",outcome="client_closed"\} (\d+)$/mg;
         $n };
     my $body = main::call(1, 'getBalance');
     for (1 .. 2) {
         my $sock = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => server_port(), Timeout => 2)
             or die "connect: $!";
         print {$sock} "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                     . "Content-Length: " . length($body) . "\r\n\r\n$body";
         close $sock;   # gone before the node's answer (300 ms away)
     }
     wait_for('both counted as client_closed', sub { $closed->() >= 2 }, 5);
     unlike(metrics_text(), qr/^solgate_requests_total\{network="mainnet",upstream="sim-[abc]",method="getBalance",outcome="http_error"\} [1-9]/m,
            'not as an upstream http_error');
 }]
--- no_error_log
[alert]
