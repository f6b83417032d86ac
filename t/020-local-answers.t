# Answers Solgate gives without an upstream: getGenesisHash, errors for
# malformed input, id echo, limits.  The upstream here is a simulated node
# that must receive no client call at all (checked at the end); only the
# poller talks to it.

use Test::Nginx::Socket 'no_plan';
use Solgate::Sim;
use Solgate::TestConf;

our $SimPort = 19811;
sim_start(port => $SimPort, args => ['--slot-ms', 50, '--quiet']);
sim_reset($SimPort);

our $HttpConfig =
    network_conf('mainnet', upstreams => sim_upstreams($SimPort))
  . network_conf('dev', cluster => 'devnet', upstreams => sim_upstreams($SimPort))
  . network_conf('test', cluster => 'testnet', upstreams => sim_upstreams($SimPort));

our $Config = solgate_locations('mainnet', extra => 'client_max_body_size 64k;')
  . "    location /devnet { solgate_pass dev; include \$TEST_NGINX_CONF_DIR/solgate_proxy.conf; }\n"
  . "    location /testnet { solgate_pass test; include \$TEST_NGINX_CONF_DIR/solgate_proxy.conf; }\n"
  . "    location /spill {\n"
  . "        solgate_pass mainnet;\n"
  . "        include \$TEST_NGINX_CONF_DIR/solgate_proxy.conf;\n"
  . "        client_body_buffer_size 1k;\n"
  . "        client_max_body_size 1m;\n"
  . "    }\n";

add_block_preprocessor(sub {
    my $block = shift;
    $block->set_value(http_config => $HttpConfig) unless defined $block->http_config;
    $block->set_value(config => $Config) unless defined $block->config;
    $block->set_value(no_error_log => "[error]\n[alert]\n[crit]\n")
        unless defined $block->no_error_log;
    $block->set_value(response_headers => "Content-Type: application/json; charset=utf-8\n")
        unless defined $block->response_headers;
});

sub call { my ($id, $method, $params) = @_;
    return qq({"jsonrpc":"2.0","id":$id,"method":"$method")
        . (defined $params ? qq(,"params":$params) : '') . '}' }
sub err { my ($code, $message, $id) = @_;
    return qq({"jsonrpc":"2.0","error":{"code":$code,"message":"$message"},"id":$id}) }

our $Mainnet = '"5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d"';

no_shuffle();
no_root_location();
run_tests();

is(sim_client_calls($SimPort), 0, 'no client request of this file reached the upstream');

__DATA__

=== TEST 1: getGenesisHash on mainnet-beta, answered locally
--- request
POST /
{"jsonrpc":"2.0","id":1,"method":"getGenesisHash"}
--- response_body chomp
{"jsonrpc":"2.0","result":"5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d","id":1}



=== TEST 2: getGenesisHash on devnet and testnet
--- request eval
["POST /devnet\n" . call(2, 'getGenesisHash'), "POST /testnet\n" . call(3, 'getGenesisHash')]
--- response_body eval
[qq({"jsonrpc":"2.0","result":"EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG","id":2}),
 qq({"jsonrpc":"2.0","result":"4uhcVJyU9pJkvQyS88uRDiswHXSCkY3zQawwpjk2NsNY","id":3})]



=== TEST 3: ids are echoed byte for byte: numbers, strings, null
--- request eval
[map { "POST /\n" . call($_, 'getGenesisHash') }
    ('0', '-7', '1.50', '2e3', '123456789012345678901234567890', '"abc"',
     '"a\\"b\\\\c\\u00e9"', '""', 'null')]
--- response_body eval
[map { qq({"jsonrpc":"2.0","result":$::Mainnet,"id":$_}) }
    ('0', '-7', '1.50', '2e3', '123456789012345678901234567890', '"abc"',
     '"a\\"b\\\\c\\u00e9"', '""', 'null')]



=== TEST 4: a valid call without an id is a notification: no answer (an empty 200, as from a node), even when it is answered here, alone or in a batch; an invalid one without an id gets its error with a null id
--- request eval
["POST /\n" . '{"jsonrpc":"2.0","method":"getGenesisHash"}',
 "POST /\n" . '{"jsonrpc":"2.0","method":"getBlock","params":["x"]}',
 "POST /\n" . '{"jsonrpc":"2.0","method":"getBalance","params":["x",{"commitment":"bogus"}]}',
 "POST /\n" . '[{"jsonrpc":"2.0","method":"getGenesisHash"},{"jsonrpc":"2.0","id":3,"method":"getGenesisHash"}]',
 "POST /\n" . '[{"jsonrpc":"2.0","method":"getGenesisHash"},{"jsonrpc":"2.0","method":"getGenesisHash"}]',
 "POST /\n" . '{"jsonrpc":"2.0","params":[]}']
--- error_code eval
[200, 200, 200, 200, 200, 200]
--- response_body eval
['', '', '',
 '[{"jsonrpc":"2.0","result":"5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d","id":3}]',
 '',
 '{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request: missing \\"method\\""},"id":null}']



=== TEST 5: invalid JSON is -32700 with a null id
--- request eval
["POST /\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":", "POST /\nnot json", "POST /\n",
 "POST /\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"getSlot\"} trailing",
 "POST /\n{\"a\":\"\xff\xfe\"}"]
--- response_body eval
err(-32700, 'Parse error', 'null')



=== TEST 6: a body that is not a request object or array is -32600
--- request eval
["POST /\n42", "POST /\n\"getSlot\"", "POST /\nnull", "POST /\ntrue"]
--- response_body eval
err(-32600, 'Invalid request', 'null')



=== TEST 7: an empty batch is -32600
--- request
POST /
[]
--- response_body eval
err(-32600, 'Invalid request: empty batch', 'null')



=== TEST 8: wrong types in the request object echo the id when readable
--- request eval
["POST /\n" . '{"jsonrpc":"2.0","id":5,"method":7}',
 "POST /\n" . '{"jsonrpc":"2.0","id":"s"}',
 "POST /\n" . '{"id":6,"method":"getSlot"}',
 "POST /\n" . '{"jsonrpc":"2.0","id":{"x":1},"method":"getSlot"}']
--- response_body eval
[err(-32600, 'Invalid request: \"method\" must be a string', 5),
 err(-32600, 'Invalid request: missing \"method\"', '"s"'),
 err(-32600, 'Invalid request: \"jsonrpc\" must be \"2.0\"', 6),
 err(-32600, 'Invalid request: \"id\" must be a number, a string or null', 'null')]



=== TEST 9: wrong params for methods Solgate inspects are -32602
--- request eval
["POST /\n" . call(1, 'getSlot', '"x"'),
 "POST /\n" . call(2, 'getSlot', '[{"commitment":"max"}]'),
 "POST /\n" . call(3, 'getBalance', '["Addr",{"minContextSlot":-1}]'),
 "POST /\n" . call(4, 'getBlock', '["abc"]'),
 "POST /\n" . call(5, 'getBlock')]
--- response_body_like eval
[qr/^\{"jsonrpc":"2.0","error":\{"code":-32602,"message":"Invalid params: \\"params\\" must be an array"\},"id":1\}$/,
 qr/^\{"jsonrpc":"2.0","error":\{"code":-32602,"message":"Invalid params: unknown commitment[^}]+\},"id":2\}$/,
 qr/^\{"jsonrpc":"2.0","error":\{"code":-32602,"message":"Invalid params: \\"minContextSlot\\"[^}]+\},"id":3\}$/,
 qr/^\{"jsonrpc":"2.0","error":\{"code":-32602,"message":"Invalid params: getBlock expects a slot[^}]+\},"id":4\}$/,
 qr/^\{"jsonrpc":"2.0","error":\{"code":-32602,[^}]+\},"id":5\}$/]



=== TEST 10: deep nesting is refused, not recursed into
--- request eval
"POST /\n" . ('[' x 60000)
--- response_body eval
err(-32600, 'Invalid request: nesting deeper than 64 levels', 'null')



=== TEST 11: a body over client_max_body_size is 413 with a JSON-RPC error, its message the reason phrase too
--- request eval
"POST /\n" . call(1, 'getBalance', '["' . ('A' x 70000) . '"]')
--- error_code: 413
--- response_body eval
err(-32600, 'Invalid request: body larger than client_max_body_size', 'null')
--- response_headers eval
"Content-Length: " . length(err(-32600, 'Invalid request: body larger than client_max_body_size', 'null'))
--- check
is($_[0]{reason}, 'Invalid request: body larger than client_max_body_size', 'the reason phrase is the message');
--- no_error_log
[alert]
[crit]



=== TEST 12: a body nginx spilled to a temporary file is read back
--- request eval
"POST /spill\n" . call('"big"', 'getGenesisHash', '["' . ('x' x 20000) . '"]')
--- response_body eval
qq({"jsonrpc":"2.0","result":$::Mainnet,"id":"big"})
--- error_log
a client request body is buffered to a temporary file



=== TEST 13: a batch answered locally keeps order and ids
--- request eval
"POST /\n[" . call(1, 'getGenesisHash') . ',' . call('"two"', 'getGenesisHash') . ']'
--- response_body eval
qq([{"jsonrpc":"2.0","result":$::Mainnet,"id":1},{"jsonrpc":"2.0","result":$::Mainnet,"id":"two"}])



=== TEST 14: a batch of invalid and local calls is answered here, call by call
(A batch with calls that go upstream: t/047.)
--- request eval
"POST /\n[" . call(1, 'getGenesisHash') . ',{"jsonrpc":"2.0","id":2},' . '7]'
--- response_body eval
'[' . qq({"jsonrpc":"2.0","result":$::Mainnet,"id":1})
. ',' . err(-32600, 'Invalid request: missing \"method\"', 2)
. ',' . err(-32600, 'Invalid request', 'null') . ']'



=== TEST 15: a batch of 100 local calls (max_batch_size's default)
--- request eval
"POST /\n[" . join(',', map { call($_, 'getGenesisHash') } 1 .. 100) . ']'
--- response_body eval
'[' . join(',', map { qq({"jsonrpc":"2.0","result":$::Mainnet,"id":$_}) } 1 .. 100) . ']'



=== TEST 16: GET is refused with 405, Allow: POST and a JSON-RPC error
--- request
GET /
--- error_code: 405
--- response_headers
Allow: POST
--- response_body eval
err(-32600, 'Invalid request: JSON-RPC requests must be sent with POST', 'null')



=== TEST 17: a chunked request body
--- raw_request eval
my $body = call(9, 'getGenesisHash');
"POST / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n"
. sprintf("%x\r\n%s\r\n0\r\n\r\n", length($body), $body)
--- response_body eval
qq({"jsonrpc":"2.0","result":$::Mainnet,"id":9})



=== TEST 18: a call with a duplicate member Solgate reads is refused, whichever duplicate an upstream would keep
--- request eval
["POST /\n" . '{"jsonrpc":"2.0","id":1,"method":"getBlock","method":"getBalance","params":[5]}',
 "POST /\n" . '{"jsonrpc":"2.0","id":2,"method":"getBlock","params":[5,{"encoding":"json"}],"params":[6]}',
 "POST /\n" . '{"jsonrpc":"2.0","id":3,"method":"getBalance","params":["x",{"commitment":"processed","commitment":"finalized"}]}']
--- response_body eval
[err(-32600, 'Invalid request: duplicate \"method\"', 1),
 err(-32600, 'Invalid request: duplicate \"params\"', 2),
 err(-32602, 'Invalid params: duplicate \"commitment\"', 3)]



=== TEST 19: a method name with a NUL or another control character is invalid
--- request eval
["POST /\n" . '{"jsonrpc":"2.0","id":1,"method":"getBlock\u0000","params":[5]}',
 "POST /\n" . '{"jsonrpc":"2.0","id":2,"method":"getSlot\t"}']
--- response_body eval
[err(-32600, 'Invalid request: \"method\" holds a control character', 1),
 err(-32600, 'Invalid request: \"method\" holds a control character', 2)]



=== TEST 20: strings that are no strict UTF-8 (a surrogate, a stray byte), and a vertical tab or form feed between tokens (yajl reads them as space, JSON does not), are parse errors
--- request eval
["POST /\n" . qq({"jsonrpc":"2.0","id":"\xed\xa0\x80","method":"getSlot"}),
 "POST /\n" . qq({"jsonrpc":"2.0","id":1,"method":"getSlot","params":["\xff"]}),
 "POST /\n" . qq({"jsonrpc":"2.0","id"\f:"z","method":"getSlot"}),
 "POST /\n" . qq({"jsonrpc":"2.0","id":1,\x0b"method":"getSlot"})]
--- response_body eval
[(err(-32700, 'Parse error', 'null')) x 4]



=== TEST 21: a selector byte that is no UTF-8 is never echoed raw into the JSON error
--- request eval
"POST /\n" . call(4, 'getSlot')
--- more_headers eval
"X-Solgate-Use-Upstream: a\xffb("
--- response_body_like: ^\{"jsonrpc":"2.0","error":\{"code":-32602,"message":"Invalid params: use-upstream selector \\"a\\ufffdb\(\\": [^\x80-\xff]*"\},"id":4\}$
