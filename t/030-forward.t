# Forwarding to simulated Solana nodes: round-robin, variables, id echo
# through an upstream, batches, and a multi-MB getBlock streamed through.

use Test::Nginx::Socket 'no_plan';
use Solgate::Sim;
use Solgate::TestConf;
use Solgate::Gateway;
use JSON::PP;

our @Ports = (19821, 19822, 19823);
our $BigPort = 19824;
our $CutPort = 19825;   # answers clients with half of what it announces
sim_start(port => $_, args => ['--slot-ms', 50, '--quiet']) for @Ports, $CutPort;
sim_fault($CutPort, 'cut_answers', on => 1);
sim_start(port => $BigPort, args => ['--slot-ms', 50, '--block-bytes', 5000000, '--quiet']);

our $HttpConfig =
    network_conf('mainnet', upstreams => sim_upstreams(@Ports))
  . network_conf('big', upstreams => [['big', "http://big_sim"]])
  . network_conf('own', cluster => 'custom', upstreams => sim_upstreams($Ports[0]))
  . network_conf('cut', upstreams => [['cut', "http://127.0.0.1:$CutPort"]])
  . "    upstream big_sim { server 127.0.0.1:$BigPort; keepalive 4; }\n";

our $Config = solgate_locations('mainnet', extra => join "\n        ",
        'add_header X-Solgate-Upstream $solgate_upstream always;',
        'add_header X-Solgate-Method $solgate_method always;',
        'add_header X-Solgate-Host $solgate_upstream_host always;')
  . "    location /big { solgate_pass big; include \$TEST_NGINX_CONF_DIR/solgate_proxy.conf; }\n"
  . "    location /own { solgate_pass own; include \$TEST_NGINX_CONF_DIR/solgate_proxy.conf; }\n"
  . "    location /cut { solgate_pass cut; include \$TEST_NGINX_CONF_DIR/solgate_proxy.conf; }\n"
  . "    location = /metrics { solgate_metrics; }\n";

add_block_preprocessor(sub {
    my $block = shift;
    $block->set_value(http_config => $HttpConfig) unless defined $block->http_config;
    $block->set_value(config => $Config) unless defined $block->config;
    $block->set_value(no_error_log => "[error]\n[alert]\n[crit]\n")
        unless defined $block->no_error_log;
});

sub call { my ($id, $method, $params) = @_;
    return qq({"jsonrpc":"2.0","id":$id,"method":"$method")
        . (defined $params ? qq(,"params":$params) : '') . '}' }

# A finalized, non-skipped slot of the big node, found with cheap requests.
sub produced_slot {
    my $slot = sim_stats($BigPort)->{slots}{finalized};
    for my $s (reverse $slot - 50 .. $slot) {
        my $res = http_post($BigPort, '/', call(1, 'getBlock',
            qq([$s,{"transactionDetails":"none","rewards":false,"maxSupportedTransactionVersion":0}])));
        return $s if $res->{body} =~ /"result":\{/;
    }
    die "no produced slot found near $slot";
}

no_shuffle();
no_root_location();
run_tests();

# Round-robin: consecutive requests rotate over the three nodes.
nginx_start($HttpConfig, $Config, no_root_location => 1);
# Strict turns need equal costs: every node polled (a slot seen, a round
# trip measured) and its poll latency under the 5 ms floor (a sanitized
# gateway's first polls are slower).
wait_for('the three nodes are polled and cost the same',
         sub { equal_costs('mainnet', qr/./, 3) }, 15);
sim_reset($_) for @Ports;
for my $i (1 .. 9) {
    my $res = http_post(server_port(), '/', call($i, 'getSlot'));
    is($res->{status}, 200, "round-robin request $i");
}
is_deeply([map { sim_client_calls($_, 'getSlot') } @Ports], [3, 3, 3],
    'nine requests spread three to each node');

# A merged batch answer (held whole, TEST 8) says its own length: read to
# the connection's end, the body is exactly that long.
my $batch = '[' . join(',', map { call($_, 'getSlot') } 1 .. 3) . ','
    . call(4, 'getGenesisHash') . ']';
my $merged = http_post(server_port(), '/', $batch);
is($merged->{headers}{'content-length'}, length $merged->{body},
    'a merged batch answer is as long as its Content-Length says');
nginx_stop();

__DATA__

=== TEST 1: getSlot is forwarded and the variables name the upstream
--- request
POST /
{"jsonrpc":"2.0","id":1,"method":"getSlot"}
--- response_body_like: ^\{"jsonrpc":"2.0","result":\d+,"id":1\}$
--- response_headers_like
X-Solgate-Upstream: sim-[abc]
X-Solgate-Method: getSlot
X-Solgate-Host: 127\.0\.0\.1:1982[123]
Content-Type: application/json; charset=utf-8



=== TEST 2: ids are echoed through an upstream
--- request eval
[map { "POST /\n" . call($_, 'getSlot') } ('"q-1"', 'null', '1.50', '-3')]
--- response_body_like eval
[map { qr/^\{"jsonrpc":"2.0","result":\d+,"id":\Q$_\E\}$/ } ('"q-1"', 'null', '1.50', '-3')]



=== TEST 3: an envelope method carries context.slot from the node
--- request
POST /
{"jsonrpc":"2.0","id":4,"method":"getBalance","params":["83astBRguLMdt2h5U1Tpdq5tjFoJ6noeGwaY3mDLVcri",{"commitment":"confirmed"}]}
--- response_body_like: ^\{"jsonrpc":"2.0","result":\{"context":\{"apiVersion":"[^"]+","slot":\d+\},"value":\d+\},"id":4\}$



=== TEST 4: a batch of 100 calls (max_batch_size's default) is forwarded whole
--- request eval
"POST /\n[" . join(',', map { call($_, 'getSlot') } 1 .. 100) . ']'
--- response_body_like eval
qr/^\[(?:\{"jsonrpc":"2.0","result":\d+,"id":\d+\},){99}\{"jsonrpc":"2.0","result":\d+,"id":100\}\]$/
--- response_headers_like
X-Solgate-Method: batch



=== TEST 5: a 5 MB getBlock streams through without a temporary file
--- request eval
"POST /big\n" . call(7, 'getBlock', '[' . produced_slot() . ',{"maxSupportedTransactionVersion":0}]')
--- response_body_like eval
qr/^\{"jsonrpc":"2.0","result":\{"blockHeight":\d+,(?:.{50000}){100}.*\},"id":7\}$/s
--- no_error_log
buffered to a temporary file
[error]
--- timeout: 20



=== TEST 6: getGenesisHash of a custom cluster is asked of the upstream
--- request
POST /own
{"jsonrpc":"2.0","id":1,"method":"getGenesisHash"}
--- response_body chomp
{"jsonrpc":"2.0","result":"5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d","id":1}



=== TEST 7: the client's own path is not sent to the upstream
--- request
POST /some/path?key=secret
{"jsonrpc":"2.0","id":1,"method":"getSlot"}
--- response_body_like: ^\{"jsonrpc":"2.0","result":\d+,"id":1\}$
--- error_log eval
qr{^"POST / HTTP/1\.1}m
--- no_error_log eval
[qr{^"POST /some/path}m, '[error]']



=== TEST 8: a batch answer merged here goes out with its length, not in chunks
--- request eval
"POST /\n[" . join(',', map { call($_, 'getSlot') } 1 .. 3) . ',' . call(4, 'getGenesisHash') . ']'
--- response_body_like eval
qr/^\[(?:\{"jsonrpc":"2.0","result":\d+,"id":\d\},){3}\{"jsonrpc":"2.0","result":"5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d","id":4\}\]$/
--- response_headers
!Transfer-Encoding
--- response_headers_like
Content-Length: \d+



=== TEST 9: a batch answer over 16 KB streams, in chunks
--- request eval
"POST /big\n[" . call(1, 'getSlot') . ',' . call(2, 'getBlock', '[' . produced_slot() . ',{"maxSupportedTransactionVersion":0}]') . ']'
--- response_body_like eval
qr/^\[\{"jsonrpc":"2.0","result":\d+,"id":1\},\{"jsonrpc":"2.0","result":\{"blockHeight":\d+,(?:.{50000}){100}.*\},"id":2\}\]$/s
--- response_headers
Transfer-Encoding: chunked
!Content-Length
--- timeout: 20



=== TEST 10: a batch answer cut short: the local answers, and an error for each call sent
(in a batch's order of no importance: clients match answers by id)
--- request eval
"POST /cut\n[" . call(1, 'getSlot') . ',' . call(2, 'getGenesisHash') . ',' . call(3, 'getSlot') . ']'
--- response_body_like eval
qr/^\[\{"jsonrpc":"2.0","result":"5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d","id":2\},\{"jsonrpc":"2.0","error":\{"code":-32603,"message":"Internal error: the upstream's answer to the batch was cut short"\},"id":1\},\{"jsonrpc":"2.0","error":\{"code":-32603,"message":"[^"]+"\},"id":3\}\]$/
--- response_headers
!Transfer-Encoding
--- response_headers_like
Content-Length: \d+
--- error_log
upstream prematurely closed connection
--- no_error_log
[alert]
[crit]



=== TEST 11: nodes get Content-Type: application/json, whatever the client sent (curl -d sends a form's), and when it sent none
--- init
sim_reset($Ports[0]);
--- request eval
[step {
     my $res = http_post(server_port(), '/own', call(1, 'getSlot'));
     like($res->{body}, qr/^\{"jsonrpc":"2.0","result":\d+,"id":1\}$/, 'a call without a Content-Type answered');
     is(sim_stats($Ports[0])->{last_client_content_type}, 'application/json',
        'the node was sent application/json');
     sim_reset($Ports[0]);
 },
 "POST /own\n" . call(2, 'getSlot')]
--- more_headers
Content-Type: application/x-www-form-urlencoded
--- response_body_like: ^\{"jsonrpc":"2.0","result":\d+,"id":2\}$
--- check
is(sim_stats($Ports[0])->{last_client_content_type}, 'application/json',
   'the node was sent application/json');



=== TEST 12: a compressed body is refused with 415 and reaches no node (two Content-Encoding headers too: one list of codings)
--- init
sim_reset($Ports[0]);
--- request eval
[step {
     my $res = http_post(server_port(), '/own', call(1, 'getSlot'),
                         [['Content-Encoding', 'identity'], ['Content-Encoding', 'gzip']]);
     is($res->{status}, 415, 'identity, then gzip: 415');
 },
 "POST /own\n" . call(1, 'getSlot')]
--- more_headers
Content-Encoding: gzip
--- error_code: 415
--- response_body chomp
{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request: send the body uncompressed (no Content-Encoding)"},"id":null}
--- check
is(sim_client_calls($Ports[0]), 0, 'no node was asked');



=== TEST 13: two Content-Type headers are refused (a node might read the other), and reach no node
--- init
sim_reset($Ports[0]);
--- request eval
"POST /own\n" . call(1, 'getSlot')
--- more_headers
Content-Type: application/json
Content-Type: text/plain
--- error_code: 400
--- response_body chomp
{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request: more than one Content-Type header"},"id":null}
--- check
is(sim_client_calls($Ports[0]), 0, 'no node was asked');
