# Browsers: a preflight OPTIONS is answered as a Solana node answers it
# (any origin, POST, the headers the page asks for), and every answer to a
# call with an Origin carries one Access-Control-Allow-Origin (two would
# read "*, *" here), whether a node wrote it (the "acao" node, behind a
# proxy that adds it), Solgate (local answers, errors, merged batches) or
# neither (the sim's answers). solgate_cors off leaves both to the
# operator.

use Test::Nginx::Socket 'no_plan';
use Solgate::Sim;
use Solgate::TestConf;
use Solgate::Gateway;
use Solgate::Browser;
use File::Path ();
use File::Spec;

our $SimPort = 19815;
our $AcaoPort = 19816;   # the sim behind a proxy that adds the header
our $PagePort = 19817;   # serves the browser's page: another origin
our $FlakyPort = 19818;  # the sim to the poller, a 502 to every client call
our $Dir = File::Spec->catdir(Test::Nginx::Util::t_dir(), 'cors-tmp');
File::Path::remove_tree($Dir);
END { File::Path::remove_tree($Dir) if $Dir }
sim_start(port => $SimPort, args => ['--slot-ms', 50, '--quiet']);

our $HttpConfig =
    network_conf('mainnet', upstreams => sim_upstreams($SimPort))
  . network_conf('acao', upstreams => [['acao', "http://127.0.0.1:$AcaoPort"]])
  . network_conf('flaky', upstreams => [['flaky', "http://127.0.0.1:$FlakyPort"],
                                        @{ sim_upstreams($SimPort) }])
  . "    server {\n"
  . "        listen 127.0.0.1:$AcaoPort;\n"
  . "        location / {\n"
  . "            proxy_pass http://127.0.0.1:$SimPort;\n"
  . "            add_header Access-Control-Allow-Origin \"*\" always;\n"
  . "        }\n"
  . "    }\n"
  . "    server {\n"
  . "        listen 127.0.0.1:$FlakyPort;\n"
  . "        location / {\n"
  . "            if (\$http_user_agent !~ ^solgate-poller) { return 502; }\n"
  . "            proxy_pass http://127.0.0.1:$SimPort;\n"
  . "        }\n"
  . "    }\n"
  . "    server {\n"
  . "        listen 127.0.0.1:$PagePort;\n"
  . "        location / { root \$TEST_NGINX_HTML_DIR; log_not_found off; }\n"
  . "    }\n";

# A page of another origin that calls the gateway as @solana/web3.js does
# (a JSON body and a solana-client header: the browser preflights each
# call) at each path, and shows what each call gave.
sub page {
    my (@paths) = @_;
    my $gateway = 'http://127.0.0.1:' . server_port();
    my $calls = join ',', map { "'$_'" } @paths;
    return <<"_HTML_";
<!doctype html>
<html><body><pre id="out">pending</pre>
<script>
const call = (path, method) => fetch('$gateway' + path, {
    method: 'POST',
    headers: {'Content-Type': 'application/json', 'solana-client': 'js/1.0.0-test'},
    body: JSON.stringify({jsonrpc: '2.0', id: 1, method: method}),
}).then(async r => path + ' ' + method + ' ' + r.status + ' '
                   + ('result' in await r.json() ? 'result' : 'error'))
  .catch(e => path + ' ' + method + ' blocked: ' + e.name);
Promise.all([$calls].flatMap(p => [call(p, 'getGenesisHash'), call(p, 'getSlot')]))
    .then(lines => { document.getElementById('out').textContent = lines.join('\\n') + '\\ndone'; });
</script></body></html>
_HTML_
}

our $Config = solgate_locations('mainnet', extra => 'client_max_body_size 1k;')
  . "    location /acao { solgate_pass acao; include \$TEST_NGINX_CONF_DIR/solgate_proxy.conf; }\n"
  . "    location /flaky { solgate_pass flaky; include \$TEST_NGINX_CONF_DIR/solgate_proxy.conf; }\n"
  . "    location /example {\n"
  . "        solgate_pass mainnet;\n"
  . "        solgate_cors off;\n"
  . "        include \$TEST_NGINX_CONF_DIR/solgate_proxy.conf;\n"
  . "        # README's solgate_cors example, as written there\n"
  . "        if (\$request_method = OPTIONS) {\n"
  . "            add_header Access-Control-Allow-Origin https://app.example;\n"
  . "            add_header Access-Control-Allow-Methods \"POST, OPTIONS\";\n"
  . "            add_header Access-Control-Allow-Headers \$http_access_control_request_headers;\n"
  . "            add_header Access-Control-Max-Age 86400;\n"
  . "            return 204;\n"
  . "        }\n"
  . "        proxy_hide_header Access-Control-Allow-Origin;\n"
  . "        add_header Access-Control-Allow-Origin https://app.example always;\n"
  . "    }\n"
  . "    location /off {\n"
  . "        solgate_pass mainnet;\n"
  . "        solgate_cors off;\n"
  . "        include \$TEST_NGINX_CONF_DIR/solgate_proxy.conf;\n"
  . "    }\n";

run_solgate_blocks(http_config => $HttpConfig, config => $Config,
                   no_error_log => "[error]\n[alert]\n[crit]\n");

is(sim_client_calls($SimPort) > 0, 1, 'the forwarding tests reached the node');

__DATA__

=== TEST 1: a preflight is answered here: 204, any origin, POST, the headers asked for, a day's max age
--- request
OPTIONS /
--- more_headers
Origin: https://app.example
Access-Control-Request-Method: POST
Access-Control-Request-Headers: content-type,solana-client
--- error_code: 204
--- response_headers
Access-Control-Allow-Origin: *
Access-Control-Allow-Methods: POST, OPTIONS
Access-Control-Allow-Headers: content-type,solana-client
Access-Control-Max-Age: 86400
Allow: POST, OPTIONS
!Content-Type
!Content-Length
--- response_body



=== TEST 2: an OPTIONS without Origin says what the endpoint takes, and no more
--- request
OPTIONS /
--- error_code: 204
--- response_headers
Allow: POST, OPTIONS
!Access-Control-Allow-Methods
!Access-Control-Allow-Origin



=== TEST 3: a local answer to a call with an Origin allows it; one without carries no CORS header
--- request eval
["POST /\n" . rpc(1, 'getGenesisHash'), "POST /\n" . rpc(2, 'getGenesisHash')]
--- more_headers eval
["Origin: https://app.example", ""]
--- error_code eval
[200, 200]
--- response_headers eval
["Access-Control-Allow-Origin: *", "!Access-Control-Allow-Origin"]



=== TEST 4: an error Solgate writes (a parse error, a body over client_max_body_size) allows the origin
--- request eval
["POST /\n{oops", "POST /\n" . rpc(3, 'getBalance', '["' . ('x' x 2000) . '"]')]
--- more_headers
Origin: https://app.example
--- error_code eval
[200, 413]
--- response_headers
Access-Control-Allow-Origin: *
--- no_error_log
[alert]
[crit]



=== TEST 5: a node's answer that has no CORS header of its own gets one; one that has it keeps its own, once
--- request eval
["POST /\n" . rpc(4, 'getSlot'), "POST /acao\n" . rpc(5, 'getSlot'),
 "POST /acao\n" . rpc(6, 'getBalance', '["11111111111111111111111111111111"]')]
--- more_headers
Origin: https://app.example
--- error_code eval
[200, 200, 200]
--- response_headers
Access-Control-Allow-Origin: *



=== TEST 6: a batch answered in part here and in part by the node allows the origin once
--- request eval
"POST /acao\n[" . rpc(7, 'getGenesisHash') . ',' . rpc(8, 'getSlot') . ']'
--- more_headers
Origin: https://app.example
--- error_code: 200
--- response_body_like: ^\[\{"jsonrpc":"2.0","result":"5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d","id":7\},\{"jsonrpc":"2.0","result":\d+,"id":8\}\]$
--- response_headers
Access-Control-Allow-Origin: *



=== TEST 7: solgate_cors off: OPTIONS is refused as before, and answers carry no CORS header of Solgate's
--- request eval
["OPTIONS /off", "POST /off\n" . rpc(9, 'getGenesisHash')]
--- more_headers
Origin: https://app.example
Access-Control-Request-Method: POST
--- error_code eval
[405, 200]
--- response_headers eval
["Allow: POST\n!Access-Control-Allow-Origin", "!Access-Control-Allow-Origin"]



=== TEST 8: an answer given after a failover (the first node answers clients 502) allows the origin once; so does a 405 for a GET
--- request eval
["POST /flaky\n" . rpc(10, 'getSlot'), "POST /flaky\n" . rpc(11, 'getSlot'), "GET /"]
--- more_headers
Origin: https://app.example
--- error_code eval
[200, 200, 405]
--- response_headers
Access-Control-Allow-Origin: *
--- error_log eval
qr/solgate: upstream "flaky" failed \(http_5xx, status 502\), retrying on "sim-a"/
--- no_error_log
[alert]
[crit]



=== TEST 9: README's example with solgate_cors off allows one origin: the preflight, a local answer, a node's answer
--- request eval
["OPTIONS /example", "POST /example\n" . rpc(12, 'getGenesisHash'), "POST /example\n" . rpc(13, 'getSlot')]
--- more_headers
Origin: https://app.example
Access-Control-Request-Method: POST
Access-Control-Request-Headers: content-type,solana-client
--- error_code eval
[204, 200, 200]
--- response_headers eval
["Access-Control-Allow-Origin: https://app.example\nAccess-Control-Allow-Headers: content-type,solana-client",
 "Access-Control-Allow-Origin: https://app.example", "Access-Control-Allow-Origin: https://app.example"]



=== TEST 10: solgate_cors takes on or off only, at its own line
--- config
    location / {
        solgate_pass mainnet;
        solgate_cors maybe;
        include $TEST_NGINX_CONF_DIR/solgate_proxy.conf;
    }
--- must_die
--- error_log eval
qr/invalid value "maybe" in "solgate_cors" directive, it must be "on" or "off" in .*nginx\.conf:\d+/



=== TEST 11: a real browser (headless Chromium) on a page of another origin calls the gateway: answered with solgate_cors on, blocked with it off
--- user_files eval
[['cors.html', main::page('/', '/acao', '/off')]]
--- request
GET /
--- error_code: 405
--- check
SKIP: {
    skip 'chromium is not installed (Debian package chromium, `make deps`): no browser check', 1
        unless chromium_binary();
    my $dom = chromium("http://127.0.0.1:$::PagePort/cors.html", $::Dir,
                       '--dump-dom', '--virtual-time-budget=10000');
    my ($out) = $dom =~ m{<pre id="out">(.*?)</pre>}s;
    is($out // $dom, join("\n",
        '/ getGenesisHash 200 result', '/ getSlot 200 result',
        '/acao getGenesisHash 200 result', '/acao getSlot 200 result',
        '/off getGenesisHash blocked: TypeError', '/off getSlot blocked: TypeError',
        'done'), 'each call answered, or blocked by the browser with solgate_cors off');
}
