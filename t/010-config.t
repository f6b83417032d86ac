# Loading the module and checking nginx.conf: what nginx -t accepts and the
# messages it gives for what it rejects.

use Test::Nginx::Socket 'no_plan';
use Solgate::TestConf;

no_shuffle();
no_root_location();
run_tests();

# The shipped demo configuration passes nginx -t with the built module.
{
    my $root = "$ENV{TEST_NGINX_CONF_DIR}/..";
    my $nginx = $ENV{TEST_NGINX_BINARY} || '/usr/sbin/nginx';
    mkdir "$root/build/demo";
    my $log = "$root/build/demo/error.log";
    my $before = -s $log || 0;
    my $out = `$nginx -t -q -p $root/ -c conf/solgate-demo.conf 2>&1`;
    is($?, 0, 'nginx -t accepts conf/solgate-demo.conf') or diag($out);
    is($out, '', 'nginx -t -q prints nothing for a good configuration');
    open my $in, '<', $log or die "$log: $!";
    seek $in, $before, 0;
    my $logged = do { local $/; <$in> };
    close $in;
    like($logged, qr/\[notice\].*solgate 0\.1\.0: 1 network\(s\), 3 upstream\(s\)/,
         'the startup line, in the error log, names the networks and upstreams');
}

# In every shipped example, /metrics, the status page and the admin
# endpoints answer only the addresses the operator allows: they name every
# upstream, its state and (masked) keys, and the admin location can cordon.
for my $example (qw(solgate-demo.conf solgate-fleet.conf)) {
    open my $in, '<', "$ENV{TEST_NGINX_CONF_DIR}/$example" or die "$example: $!";
    my $conf = do { local $/; <$in> };
    close $in;
    my @private = grep { /\bsolgate_(?:metrics|admin|status)\s*;/ }
        $conf =~ /^\s*location\s+[^{]*\{([^{}]*)\}/mg;
    ok(@private >= 2, "$example has its metrics and admin locations");
    for my $body (@private) {
        my ($what) = $body =~ /\b(solgate_\w+)\s*;/;
        like($body, qr/^\s*allow\s+\S+;.*^\s*deny\s+all;/ms,
             "$example: the $what location allows some addresses, denies the rest");
    }
}

# The fleet example passes nginx -t (its paths moved into a directory of
# the test's own; nothing connects to Redis at -t).
{
    my $root = "$ENV{TEST_NGINX_CONF_DIR}/..";
    my $nginx = $ENV{TEST_NGINX_BINARY} || '/usr/sbin/nginx';
    my $dir = "$root/build/fleet-conf";
    mkdir $dir; mkdir "$dir/logs";
    open my $in, '<', "$root/conf/solgate-fleet.conf" or die $!;
    my $conf = do { local $/; <$in> };
    close $in;
    $conf =~ s{/usr/lib/nginx/modules/ngx_http_solgate_module\.so}{$ENV{TEST_NGINX_LOAD_MODULES}};
    $conf =~ s{/var/(?:cache|lib)/solgate/}{$dir/}g;
    $conf =~ s{include /etc/nginx/snippets/solgate_proxy\.conf}{include $ENV{TEST_NGINX_CONF_DIR}/solgate_proxy.conf}g;
    $conf =~ s{listen 8899}{listen 127.0.0.1:19979};
    open my $out_fh, '>', "$dir/nginx.conf" or die $!;
    print $out_fh $conf;
    close $out_fh;
    my $out = `$nginx -t -p $dir/ -c nginx.conf 2>&1`;
    is($?, 0, 'nginx -t accepts conf/solgate-fleet.conf') or diag($out);
}

__DATA__

=== TEST 1: the module loads and routes a local answer
--- http_config
    solgate_network mainnet {
        cluster mainnet-beta;
        zone 640k;
        commitment finalized;
        upstream a http://127.0.0.1:1 host=rpc.example tags=family:ledger,region:us;
    }
--- config
    location / {
        solgate_pass mainnet;
        include $TEST_NGINX_CONF_DIR/solgate_proxy.conf;
    }
    location @solgate_retry {
        solgate_pass mainnet;
        include $TEST_NGINX_CONF_DIR/solgate_proxy.conf;
    }
--- request
POST /
{"jsonrpc":"2.0","id":1,"method":"getGenesisHash"}
--- response_body chomp
{"jsonrpc":"2.0","result":"5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d","id":1}
--- no_error_log
[error]



=== TEST 2: solgate_pass naming an unknown network
--- http_config
    solgate_network mainnet { upstream a http://127.0.0.1:1; }
--- config
    location / { solgate_pass testnet; }
    location @solgate_retry { solgate_pass testnet; include $TEST_NGINX_CONF_DIR/solgate_proxy.conf; }
--- must_die
--- error_log
solgate_pass names unknown network "testnet" (no solgate_network "testnet" block)



=== TEST 3: a network defined after the location that uses it
--- config
    location / { solgate_pass later; include $TEST_NGINX_CONF_DIR/solgate_proxy.conf; }
    location @solgate_retry { solgate_pass later; include $TEST_NGINX_CONF_DIR/solgate_proxy.conf; }
--- http_config
    server {
        listen 127.0.0.1:1985;
        location / { solgate_pass later; include $TEST_NGINX_CONF_DIR/solgate_proxy.conf; }
        location @solgate_retry { solgate_pass later; include $TEST_NGINX_CONF_DIR/solgate_proxy.conf; }
    }
    solgate_network later { cluster devnet; upstream a http://127.0.0.1:1; }
--- request
POST /
{"jsonrpc":"2.0","id":"d","method":"getGenesisHash"}
--- response_body chomp
{"jsonrpc":"2.0","result":"EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG","id":"d"}



=== TEST 4: unknown directive inside solgate_network
--- http_config
    solgate_network mainnet { upstream a http://127.0.0.1:1; colour blue; }
--- config
--- must_die
--- error_log
unknown directive "colour" in "solgate_network"



=== TEST 5: invalid cluster
--- http_config
    solgate_network mainnet { cluster mainnet; upstream a http://127.0.0.1:1; }
--- config
--- must_die
--- error_log
invalid cluster "mainnet", it must be "mainnet-beta", "devnet", "testnet" or "custom"



=== TEST 6: invalid commitment
--- http_config
    solgate_network mainnet { commitment max; upstream a http://127.0.0.1:1; }
--- config
--- must_die
--- error_log
invalid commitment "max", it must be "processed", "confirmed" or "finalized"



=== TEST 7: a network without upstreams
--- http_config
    solgate_network mainnet { cluster devnet; }
--- config
--- must_die
--- error_log
solgate_network "mainnet" has no "upstream"



=== TEST 8: duplicate upstream id
--- http_config
    solgate_network mainnet { upstream a http://127.0.0.1:1; upstream a http://127.0.0.1:2; }
--- config
--- must_die
--- error_log
duplicate upstream "a" in network "mainnet"



=== TEST 9: upstream URL without a scheme
--- http_config
    solgate_network mainnet { upstream a 127.0.0.1:8899; }
--- config
--- must_die
--- error_log
invalid upstream URL "127.0.0.1:8899": must start with "http://" or "https://"



=== TEST 10: malformed tags
--- http_config
    solgate_network mainnet { upstream a http://127.0.0.1:1 tags=family; }
--- config
--- must_die
--- error_log
invalid tags "family" in upstream "a": must be a list of key:value pairs



=== TEST 11: unknown upstream parameter
--- http_config
    solgate_network mainnet { upstream a http://127.0.0.1:1 priority=2; }
--- config
--- must_die
--- error_log
invalid parameter "priority=2" in upstream "a", expected "host=", "tags=", "methods=", "ignore_methods=", "weight=", "backup", "max_fails=", "fail_timeout=", "debounce=", "ws=" or a "tls_" option



=== TEST 12: zone too small
--- http_config
    solgate_network mainnet { zone 4k; upstream a http://127.0.0.1:1; }
--- config
--- must_die
--- error_log
zone "4k" is too small



=== TEST 13: duplicate network
--- http_config
    solgate_network mainnet { upstream a http://127.0.0.1:1; }
    solgate_network mainnet { upstream b http://127.0.0.1:1; }
--- config
--- must_die
--- error_log
duplicate solgate_network "mainnet"



=== TEST 14: solgate_pass twice in one location
--- http_config
    solgate_network mainnet { upstream a http://127.0.0.1:1; }
--- config
    location / { solgate_pass mainnet; solgate_pass mainnet; }
    location @solgate_retry { solgate_pass mainnet; include $TEST_NGINX_CONF_DIR/solgate_proxy.conf; }
--- must_die
--- error_log
"solgate_pass" directive is duplicate



=== TEST 15: invalid upstream id
--- http_config
    solgate_network mainnet { upstream "a b" http://127.0.0.1:1; }
--- config
--- must_die
--- error_log
invalid upstream id "a b": may contain only letters, digits



=== TEST 16: a location without solgate_pass is left alone
--- http_config
    solgate_network mainnet { upstream a http://127.0.0.1:1; }
--- config
    location = /plain { return 200 "plain\n"; }
--- request
POST /plain
{"jsonrpc":"2.0","id":1,"method":"getGenesisHash"}
--- response_body
plain



=== TEST 17: invalid state_poller_debounce
--- http_config
    solgate_network mainnet { state_poller_debounce soon; upstream a http://127.0.0.1:1; }
--- config
--- must_die
--- error_log
"state_poller_debounce" directive invalid value



=== TEST 18: invalid max_finalized_slot_lag
--- http_config
    solgate_network mainnet { max_finalized_slot_lag -1; upstream a http://127.0.0.1:1; }
--- config
--- must_die
--- error_log
"max_finalized_slot_lag" directive invalid number



=== TEST 19: invalid enforce_block_availability
--- http_config
    solgate_network_defaults { enforce_block_availability maybe; }
    solgate_network mainnet { upstream a http://127.0.0.1:1; }
--- config
--- must_die
--- error_log
invalid value "maybe" in "enforce_block_availability" directive, it must be "on" or "off"



=== TEST 20: solgate_network_defaults takes only the settings
--- http_config
    solgate_network_defaults { cluster devnet; }
    solgate_network mainnet { upstream a http://127.0.0.1:1; }
--- config
--- must_die
--- error_log
unknown directive "cluster" in "solgate_network_defaults"



=== TEST 21: solgate_network_defaults twice
--- http_config
    solgate_network_defaults { state_poller_debounce 2s; }
    solgate_network_defaults { state_poller_debounce 1s; }
    solgate_network mainnet { upstream a http://127.0.0.1:1; }
--- config
--- must_die
--- error_log
"solgate_network_defaults" directive is duplicate



=== TEST 22: a setting twice in one network
--- http_config
    solgate_network mainnet { state_poller_debounce 1s; state_poller_debounce 2s; upstream a http://127.0.0.1:1; }
--- config
--- must_die
--- error_log
"state_poller_debounce" directive is duplicate



=== TEST 23: a malformed use_upstream_default
--- http_config
    solgate_network mainnet { use_upstream_default "a |"; upstream a http://127.0.0.1:1; }
--- config
--- must_die
--- error_log
invalid use_upstream_default "a |": missing pattern after '|' at position 3



=== TEST 24: a malformed method list
--- http_config
    solgate_network mainnet { upstream a http://127.0.0.1:1 methods=getBlock||getSlot; }
--- config
--- must_die
--- error_log
invalid method list "getBlock||getSlot" in upstream "a": has an empty method name



=== TEST 25: an upstream block whose first server is a unix socket cannot be polled
--- http_config
    upstream local_node { server unix:/tmp/solgate-node.sock; }
    solgate_network mainnet { upstream a http://local_node; }
--- config
--- must_die
--- error_log
upstream "a": server 1 of upstream block "local_node" is a unix socket, which the state poller cannot reach



=== TEST 26: solgate_blocks without its required directives
--- http_config
    solgate_network mainnet { upstream a http://127.0.0.1:1; }
    solgate_blocks mainnet { region us; cache $TEST_NGINX_SERVROOT/blocks; }
--- config
    location / { solgate_pass mainnet; }
    location @solgate_retry { solgate_pass mainnet; include $TEST_NGINX_CONF_DIR/solgate_proxy.conf; }
--- must_die
--- error_log
solgate_blocks "mainnet" needs "state"



=== TEST 27: solgate_blocks naming an unknown network
--- http_config
    solgate_network mainnet { upstream a http://127.0.0.1:1; }
    solgate_blocks devnet {
        region us; cache $TEST_NGINX_SERVROOT/blocks/c; state $TEST_NGINX_SERVROOT/blocks/s;
        api_key $http_x_api_key; plan $http_x_plan;
    }
--- config
    location / { solgate_pass mainnet; }
    location @solgate_retry { solgate_pass mainnet; include $TEST_NGINX_CONF_DIR/solgate_proxy.conf; }
--- must_die
--- error_log
solgate_blocks names unknown network "devnet" (no solgate_network "devnet" block)



=== TEST 28: a plan_define with a bad rate
--- http_config
    solgate_network mainnet { upstream a http://127.0.0.1:1; }
    solgate_blocks mainnet {
        region us; cache $TEST_NGINX_SERVROOT/blocks/c; state $TEST_NGINX_SERVROOT/blocks/s;
        api_key $http_x_api_key; plan $http_x_plan;
        plan_define gold tier=archive getblock_rate=fast;
    }
--- config
    location / { solgate_pass mainnet; }
    location @solgate_retry { solgate_pass mainnet; include $TEST_NGINX_CONF_DIR/solgate_proxy.conf; }
--- must_die
--- error_log
invalid rate "fast" in "getblock_rate"



=== TEST 29: a new plan without a tier
--- http_config
    solgate_network mainnet { upstream a http://127.0.0.1:1; }
    solgate_blocks mainnet {
        region us; cache $TEST_NGINX_SERVROOT/blocks/c; state $TEST_NGINX_SERVROOT/blocks/s;
        api_key $http_x_api_key; plan $http_x_plan;
        plan_define gold getblock_rate=5r/s;
    }
--- config
    location / { solgate_pass mainnet; }
    location @solgate_retry { solgate_pass mainnet; include $TEST_NGINX_CONF_DIR/solgate_proxy.conf; }
--- must_die
--- error_log
plan "gold" needs "tier="



=== TEST 30: an invalid max_size
--- http_config
    solgate_network mainnet { upstream a http://127.0.0.1:1; }
    solgate_blocks mainnet {
        region us; cache $TEST_NGINX_SERVROOT/blocks/c max_size=lots;
    }
--- config
    location / { solgate_pass mainnet; }
    location @solgate_retry { solgate_pass mainnet; include $TEST_NGINX_CONF_DIR/solgate_proxy.conf; }
--- must_die
--- error_log
invalid max_size "lots"



=== TEST 31: a peer with a bad URL
--- http_config
    solgate_network mainnet { upstream a http://127.0.0.1:1; }
    solgate_blocks mainnet {
        region us; peer eu 127.0.0.1:9;
    }
--- config
    location / { solgate_pass mainnet; }
    location @solgate_retry { solgate_pass mainnet; include $TEST_NGINX_CONF_DIR/solgate_proxy.conf; }
--- must_die
--- error_log
invalid peer URL "127.0.0.1:9"



=== TEST 32: unknown directive inside solgate_blocks
--- http_config
    solgate_network mainnet { upstream a http://127.0.0.1:1; }
    solgate_blocks mainnet { regoin us; }
--- config
    location / { solgate_pass mainnet; }
    location @solgate_retry { solgate_pass mainnet; include $TEST_NGINX_CONF_DIR/solgate_proxy.conf; }
--- must_die
--- error_log
unknown directive "regoin" in "solgate_blocks"



=== TEST 33: a complete solgate_blocks block is accepted
--- http_config
    map $http_x_api_key $solgate_plan { default ""; k1 free; k2 gold; }
    solgate_network mainnet { upstream a http://127.0.0.1:1; }
    solgate_blocks mainnet {
        region us-east;
        cache $TEST_NGINX_SERVROOT/blocks/cache max_size=10m;
        state $TEST_NGINX_SERVROOT/blocks/state;
        peer eu-west http://127.0.0.1:2;
        peer_token 0123456789abcdef;
        api_key $http_x_api_key;
        plan $solgate_plan;
        plan_define gold tier=archive getblock_rate=20r/s retrieval_rate=1r/s queue_limit=10 monthly_allowance=100;
        plan_define free tier=free getblock_rate=1r/s;
    }
--- config
    location / {
        solgate_pass mainnet;
        include $TEST_NGINX_CONF_DIR/solgate_proxy.conf;
    }
    location @solgate_retry {
        solgate_pass mainnet;
        include $TEST_NGINX_CONF_DIR/solgate_proxy.conf;
    }
--- request
POST /
{"jsonrpc":"2.0","id":1,"method":"getBlock","params":[5]}
--- error_code: 401
--- response_body chomp
{"jsonrpc":"2.0","error":{"code":-32003,"message":"Unauthorized: getBlock needs an API key"},"id":1}



=== TEST 34: a long_term_storage URL without a scheme
--- http_config
    solgate_network mainnet { upstream a http://127.0.0.1:1; }
    solgate_blocks mainnet {
        long_term_storage http://127.0.0.1:9/ archive.example:8899;
    }
--- config
    location / { solgate_pass mainnet; }
    location @solgate_retry { solgate_pass mainnet; include $TEST_NGINX_CONF_DIR/solgate_proxy.conf; }
--- must_die
--- error_log
invalid long_term_storage URL "archive.example:8899"



=== TEST 35: a peer without a peer_token
--- http_config
    solgate_network mainnet { upstream a http://127.0.0.1:1; }
    solgate_blocks mainnet {
        region us; cache $TEST_NGINX_SERVROOT/blocks/c; state $TEST_NGINX_SERVROOT/blocks/s;
        api_key $http_x_api_key; plan $http_x_plan;
        peer eu http://127.0.0.1:2;
    }
--- config
    location / { solgate_pass mainnet; }
    location @solgate_retry { solgate_pass mainnet; include $TEST_NGINX_CONF_DIR/solgate_proxy.conf; }
--- must_die
--- error_log
solgate_blocks "mainnet" has a "peer" but no "peer_token"



=== TEST 36: a short peer_token and a duplicate peer
--- http_config
    solgate_network mainnet { upstream a http://127.0.0.1:1; }
    solgate_blocks mainnet {
        peer_token short;
    }
--- config
    location / { solgate_pass mainnet; }
    location @solgate_retry { solgate_pass mainnet; include $TEST_NGINX_CONF_DIR/solgate_proxy.conf; }
--- must_die
--- error_log
peer_token must be at least 16 bytes



=== TEST 37: state_poller_debounce above the limit, named where it is given
--- http_config
    solgate_network mainnet { state_poller_debounce 61s; upstream a http://127.0.0.1:1; }
--- config
--- must_die
--- error_log eval
qr/"state_poller_debounce" must be at most 60s in \S+nginx\.conf:\d+/



=== TEST 38: a cluster given twice
--- http_config
    solgate_network mainnet { cluster devnet; cluster testnet; upstream a http://127.0.0.1:1; }
--- config
--- must_die
--- error_log
"cluster" directive is duplicate



=== TEST 39: an invalid network name
--- http_config
    solgate_network "main net" { upstream a http://127.0.0.1:1; }
--- config
--- must_die
--- error_log
invalid network name "main net": may contain only letters, digits, '-', '_' and '.'



=== TEST 40: solgate_blocks names the missing api_key
--- http_config
    solgate_network mainnet { upstream a http://127.0.0.1:1; }
    solgate_blocks mainnet { region us; cache $TEST_NGINX_SERVROOT/blocks; state $TEST_NGINX_SERVROOT/state; plan $http_x_plan; }
--- config
    location / { solgate_pass mainnet; }
    location @solgate_retry { solgate_pass mainnet; include $TEST_NGINX_CONF_DIR/solgate_proxy.conf; }
--- must_die
--- error_log
solgate_blocks "mainnet" needs "api_key"



=== TEST 41: a region given twice
--- http_config
    solgate_network mainnet { upstream a http://127.0.0.1:1; }
    solgate_blocks mainnet { region us; region eu; }
--- config
    location / { solgate_pass mainnet; }
    location @solgate_retry { solgate_pass mainnet; include $TEST_NGINX_CONF_DIR/solgate_proxy.conf; }
--- must_die
--- error_log
"region" directive is duplicate



=== TEST 42: state_poller_debounce above the limit in the defaults block
--- http_config
    solgate_network_defaults {
        state_poller_debounce 2m;
    }
    solgate_network mainnet { upstream a http://127.0.0.1:1; }
--- config
--- must_die
--- error_log eval
qr/"state_poller_debounce" must be at most 60s in \S+nginx\.conf:\d+/



=== TEST 43: a network named like another's Cube Runner zone gets its own zone
--- http_config
    solgate_network blocks_mainnet { upstream a http://127.0.0.1:1; }
    solgate_network mainnet { cluster mainnet-beta; upstream a http://127.0.0.1:1; }
    solgate_blocks mainnet {
        region us; cache $TEST_NGINX_SERVROOT/blocks/c; state $TEST_NGINX_SERVROOT/blocks/s;
        api_key $http_x_api_key; plan $http_x_plan;
    }
--- config
    location / {
        solgate_pass mainnet;
        include $TEST_NGINX_CONF_DIR/solgate_proxy.conf;
    }
    location @solgate_retry { solgate_pass mainnet; include $TEST_NGINX_CONF_DIR/solgate_proxy.conf; }
--- request
POST /
{"jsonrpc":"2.0","id":1,"method":"getGenesisHash"}
--- response_body chomp
{"jsonrpc":"2.0","result":"5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d","id":1}
--- no_error_log
[emerg]



=== TEST 44: routing settings and upstream options are checked
--- http_config
    solgate_network mainnet { max_slot_lag -1; upstream a http://127.0.0.1:1; }
--- config
--- must_die
--- error_log
"max_slot_lag" directive invalid number in



=== TEST 45: a weight of 0 is refused, naming the upstream
--- http_config
    solgate_network mainnet { upstream a http://127.0.0.1:1 weight=0; }
--- config
--- must_die
--- error_log
invalid "weight=" "0" in upstream "a": must be a number from 1 to 1000



=== TEST 46: the routing options and settings are accepted and shown
--- http_config
    solgate_network_defaults { max_slot_lag 50; }
    solgate_network mainnet {
        use_upstream_from_client off;
        upstream a http://127.0.0.1:1 weight=3 max_fails=2 fail_timeout=30s;
        upstream b http://127.0.0.1:2 backup debounce=2s;
    }
--- config
    location / { solgate_pass mainnet; include $TEST_NGINX_CONF_DIR/solgate_proxy.conf; }
    location /solgate/ { solgate_admin; }
    location @solgate_retry { solgate_pass mainnet; include $TEST_NGINX_CONF_DIR/solgate_proxy.conf; }
--- request
GET /solgate/state
--- response_body_like
"max_slot_lag":50,"use_upstream_from_client":false,.*"id":"a",.*"weight":3,"debounce_ms":400,"backup":false,.*"id":"b",.*"weight":1,"debounce_ms":2000,"backup":true
--- no_error_log
[emerg]



=== TEST 47: a server without the retry location is refused
Every failover would otherwise be an HTTP 500.
--- http_config
    solgate_network mainnet { upstream a http://127.0.0.1:1; }
--- config
    location / { solgate_pass mainnet; include $TEST_NGINX_CONF_DIR/solgate_proxy.conf; }
--- must_die
--- error_log eval
qr/solgate_pass in \S+nginx\.conf:\d+: its server has no "location \@solgate_retry", which failover needs \(every failed attempt would answer HTTP 500\); add one with "solgate_pass mainnet;" and the forwarding snippet \("include \/etc\/nginx\/snippets\/solgate_proxy\.conf;"\)/



=== TEST 48: a use_upstream_default that matches no upstream is refused at its own line
--- http_config
    solgate_network mainnet {
        upstream a http://127.0.0.1:1 tags=family:vendor;
        use_upstream_default "family:own";
    }
--- config
--- must_die
--- error_log eval
qr/use_upstream_default "family:own" of network "mainnet" matches no upstream \(every request would get -32602\) in \S+nginx\.conf:\d+/
--- check
my ($line) = $_[0] =~ /matches no upstream .* in \S+nginx\.conf:(\d+)/;
is($line, conf_line_of('use_upstream_default "family:own"'),
   "the error names use_upstream_default's line");



=== TEST 49: a debounce below the tick is a warning
--- http_config
    solgate_network mainnet { cluster mainnet-beta; state_poller_debounce 100ms; upstream a http://127.0.0.1:1; }
--- config
    location / { solgate_pass mainnet; include $TEST_NGINX_CONF_DIR/solgate_proxy.conf; }
    location @solgate_retry { solgate_pass mainnet; include $TEST_NGINX_CONF_DIR/solgate_proxy.conf; }
--- request
POST /
{"jsonrpc":"2.0","id":1,"method":"getGenesisHash"}
--- response_body_like: "result"
--- check
like(Test::Nginx::Util::read_startup_stderr(), qr/\[warn\] .*"state_poller_debounce" below 400ms acts as 400ms: the poller ticks every 400ms in \S+nginx\.conf:\d+/,
     'nginx warns at start, naming file and line');



=== TEST 50: an upstream host that is neither a block nor an address is refused without a resolver
nginx would resolve it per request, and fail each one ("no resolver defined").
--- http_config
    solgate_network mainnet { upstream a http://127.0.0.1:1; upstream b http://rpc.vendor.example/v1/KEY; }
--- config
    location / { solgate_pass mainnet; include $TEST_NGINX_CONF_DIR/solgate_proxy.conf; }
    location @solgate_retry { solgate_pass mainnet; include $TEST_NGINX_CONF_DIR/solgate_proxy.conf; }
--- must_die
--- error_log eval
qr/upstream "b" of network "mainnet": its host "rpc.vendor.example" is neither an upstream \{\} block nor an address, and the location of solgate_pass in \S+nginx\.conf:\d+ has no "resolver" to find it \(every request would fail\); define an upstream \{\} block named so, or set "resolver" in \S+nginx\.conf:\d+/



=== TEST 51: with a resolver, an upstream host name is accepted
--- http_config
    solgate_network mainnet { cluster mainnet-beta; upstream a http://127.0.0.1:1; upstream b http://rpc.vendor.example/v1/KEY; }
--- config
    resolver 127.0.0.1:1 valid=30s;
    location / { solgate_pass mainnet; include $TEST_NGINX_CONF_DIR/solgate_proxy.conf; }
    location @solgate_retry { solgate_pass mainnet; include $TEST_NGINX_CONF_DIR/solgate_proxy.conf; }
--- request
POST /
{"jsonrpc":"2.0","id":1,"method":"getGenesisHash"}
--- response_body_like: "result"
--- no_error_log
[emerg]



=== TEST 52: methods= names that are no Solana method are a warning naming them
--- http_config
    solgate_network mainnet { cluster mainnet-beta; upstream a http://127.0.0.1:1 methods=getBalanse|get*|getSlot ignore_methods=sendTransacton; }
--- config
    location / { solgate_pass mainnet; include $TEST_NGINX_CONF_DIR/solgate_proxy.conf; }
    location @solgate_retry { solgate_pass mainnet; include $TEST_NGINX_CONF_DIR/solgate_proxy.conf; }
--- request
POST /
{"jsonrpc":"2.0","id":1,"method":"getGenesisHash"}
--- response_body_like: "result"
--- check
like(Test::Nginx::Util::read_startup_stderr(),
     qr/\[warn\] .*upstream "a" names "getBalanse", "sendTransacton", which Solgate does not know as Solana methods \(a typo keeps every such call from the upstream\) in \S+nginx\.conf:\d+/,
     'nginx warns at start, naming the names, the file and the line');



=== TEST 53: consensus and hedge words are checked, with the file and line
--- http_config
    solgate_network mainnet { upstream a http://127.0.0.1:1; consensus getBlock participants=2 agreement=3; }
--- config
--- must_die
--- error_log eval
qr/"agreement=3" in "consensus" is more than its 2 participants in \S+nginx\.conf:\d+/



=== TEST 54: hedge never sends a write twice
--- http_config
    solgate_network_defaults { hedge getBalance|sendTransaction after=50ms; }
    solgate_network mainnet { upstream a http://127.0.0.1:1; }
--- config
--- must_die
--- error_log eval
qr/"hedge" never sends sendTransaction twice: a write is not hedged \(see "broadcast"\) in \S+nginx\.conf:\d+/



=== TEST 55: a policy given twice in one block is refused
--- http_config
    solgate_network mainnet { upstream a http://127.0.0.1:1; hedge getBalance; hedge getSlot; }
--- config
--- must_die
--- error_log eval
qr/"hedge" directive is duplicate in \S+nginx\.conf:\d+/



=== TEST 56: each policy of solgate_network_defaults reaches every network that does not set it
--- http_config
    solgate_network_defaults { consensus getBalance participants=2 agreement=2; hedge getAccountInfo after=200ms; }
    solgate_network mainnet { upstream a http://127.0.0.1:1; }
    solgate_network devnet { cluster devnet; upstream b http://127.0.0.1:2; hedge getSlot; }
--- config
    location /solgate/ { solgate_admin; }
--- request
GET /solgate/state
--- response_body_like: "consensus":\{"methods":\["getBalance"\],"participants":2,"agreement":2,"dispute":"error"\},"hedge":\{"methods":\["getAccountInfo"\],"after_ms":200,"max":1\}.*"name":"devnet".*"consensus":\{"methods":\["getBalance"\],.*"hedge":\{"methods":\["getSlot"\],"after_ms":100,"max":1\}
--- no_error_log
[emerg]



=== TEST 57: keyless_plan must name a plan
--- http_config
    solgate_network mainnet { upstream a http://127.0.0.1:1; }
    solgate_blocks mainnet {
        region us; cache $TEST_NGINX_SERVROOT/blocks/c; state $TEST_NGINX_SERVROOT/blocks/s;
        api_key $http_x_api_key; plan $http_x_plan;
        keyless_plan gold;
    }
--- config
    location / { solgate_pass mainnet; include $TEST_NGINX_CONF_DIR/solgate_proxy.conf; }
    location @solgate_retry { solgate_pass mainnet; include $TEST_NGINX_CONF_DIR/solgate_proxy.conf; }
--- must_die
--- error_log eval
qr/solgate_blocks "mainnet" keyless_plan "gold" is not a plan \(neither built in nor plan_define'd\) in \S+nginx\.conf:\d+/



=== TEST 58: cache_lock_timeout is a time up to a minute, named where it is given
--- http_config
    solgate_network mainnet { upstream a http://127.0.0.1:1; }
    solgate_blocks mainnet {
        region us; cache $TEST_NGINX_SERVROOT/blocks/c; state $TEST_NGINX_SERVROOT/blocks/s;
        api_key $http_x_api_key; plan $http_x_plan;
        cache_lock_timeout 2m;
    }
--- config
    location / { solgate_pass mainnet; include $TEST_NGINX_CONF_DIR/solgate_proxy.conf; }
    location @solgate_retry { solgate_pass mainnet; include $TEST_NGINX_CONF_DIR/solgate_proxy.conf; }
--- must_die
--- error_log eval
qr/invalid cache_lock_timeout "2m": must be a time up to 60s \(0 turns the lock off\) in \S+nginx\.conf:\d+/



=== TEST 59: a solgate_pass location that forwards nothing is refused
Without the snippet's proxy_pass every call Solgate does not answer itself
would get the static handler's 404.
--- http_config
    solgate_network mainnet { upstream a http://127.0.0.1:1; }
--- config
    location / { solgate_pass mainnet; }
    location @solgate_retry { solgate_pass mainnet; include $TEST_NGINX_CONF_DIR/solgate_proxy.conf; }
--- must_die
--- error_log eval
qr/solgate_pass in \S+nginx\.conf:\d+: its location forwards nothing \(no proxy_pass\), so every call Solgate does not answer itself would get a 404; include the forwarding snippet beside it \("include \/etc\/nginx\/snippets\/solgate_proxy\.conf;"\)/



=== TEST 60: a policy naming what is no Solana method is a warning naming it, at the policy's own line
--- http_config
    solgate_network mainnet { cluster mainnet-beta; upstream a http://127.0.0.1:1;
        broadcast sendTransacton;
        hedge getBalanse|get*; }
--- config
    location / { solgate_pass mainnet; include $TEST_NGINX_CONF_DIR/solgate_proxy.conf; }
    location @solgate_retry { solgate_pass mainnet; include $TEST_NGINX_CONF_DIR/solgate_proxy.conf; }
--- request
POST /
{"jsonrpc":"2.0","id":1,"method":"getGenesisHash"}
--- response_body_like: "result"
--- check
my $err = Test::Nginx::Util::read_startup_stderr();
my ($net) = $err =~ /"broadcast" names "sendTransacton", which Solgate does not know as Solana methods \(a typo leaves every such call out of the policy\) in \S+nginx\.conf:(\d+)/;
my ($hedge) = $err =~ /"hedge" names "getBalanse", which Solgate does not know as Solana methods \(a typo leaves every such call out of the policy\) in \S+nginx\.conf:(\d+)/;
ok(defined $net && defined $hedge, 'nginx warns of both') or diag($err);
is($hedge - $net, 1, 'each at its own line');



=== TEST 61: an upstream option given twice is refused, not the last one silently taken
--- http_config
    solgate_network mainnet { upstream a http://127.0.0.1:1 weight=2 weight=3; }
--- config
--- must_die
--- error_log eval
qr/"weight=" given twice in upstream "a" in \S+nginx\.conf:\d+/



=== TEST 62: a policy option given twice is refused
--- http_config
    solgate_network mainnet { upstream a http://127.0.0.1:1; consensus getBlock participants=3 participants=5; }
--- config
--- must_die
--- error_log eval
qr/"participants=" given twice in "consensus" in \S+nginx\.conf:\d+/



=== TEST 63: a method in both methods= and ignore_methods= is refused
--- http_config
    solgate_network mainnet { upstream a http://127.0.0.1:1 ignore_methods=getBlock methods=getBlock; }
--- config
--- must_die
--- error_log eval
qr/"getBlock" is in both "methods=" and "ignore_methods=" in upstream "a" in \S+nginx\.conf:\d+/



=== TEST 64: consensus never compares a write (it would silently do nothing)
--- http_config
    solgate_network mainnet { upstream a http://127.0.0.1:1; consensus getBalance|sendTransaction; }
--- config
--- must_die
--- error_log eval
qr/"consensus" never compares sendTransaction: a write is sent once \(see "broadcast"\) in \S+nginx\.conf:\d+/



=== TEST 65: a policy of solgate_network_defaults naming what is no Solana method is said once, not by each network that takes it
--- http_config
    solgate_network_defaults { hedge getBalanse; }
    solgate_network mainnet { cluster mainnet-beta; upstream a http://127.0.0.1:1; }
    solgate_network devnet { cluster devnet; upstream a http://127.0.0.1:1; }
--- config
    location / { solgate_pass mainnet; include $TEST_NGINX_CONF_DIR/solgate_proxy.conf; }
    location @solgate_retry { solgate_pass mainnet; include $TEST_NGINX_CONF_DIR/solgate_proxy.conf; }
--- request
POST /
{"jsonrpc":"2.0","id":1,"method":"getGenesisHash"}
--- response_body_like: "result"
--- check
my $err = Test::Nginx::Util::read_startup_stderr();
my @said = $err =~ /"hedge" names "getBalanse", which Solgate does not know as Solana methods/g;
is(scalar @said, 1, 'one warning for the two networks') or diag($err);



=== TEST 66: a ws_idle_timeout under 1s is refused at its line, in a network or in the defaults
--- http_config
    solgate_network_defaults { ws_idle_timeout 0; }
    solgate_network mainnet { upstream a http://127.0.0.1:1; }
--- config
--- must_die
--- error_log eval
qr/"ws_idle_timeout" directive must be at least 1s \(a shorter one closes every subscription before its node sends anything\) in \S+nginx\.conf:\d+/
--- check
my ($line) = $_[0] =~ /"ws_idle_timeout" directive must .* in \S+nginx\.conf:(\d+)/;
is($line, conf_line_of('ws_idle_timeout 0;'), 'at its own line');



=== TEST 67: a ws_idle_timeout of 500ms in a network is refused too
--- http_config
    solgate_network mainnet { upstream a http://127.0.0.1:1; ws_idle_timeout 500ms; }
--- config
--- must_die
--- error_log eval
qr/"ws_idle_timeout" directive must be at least 1s/



=== TEST 68: an upstream URL's port out of range is refused as such
--- http_config
    solgate_network mainnet { upstream a http://127.0.0.1:99999; }
--- config
--- must_die
--- error_log eval
qr/invalid upstream URL "http:\/\/127\.0\.0\.1:99999": has a port that is not a number from 1 to 65535 in \S+nginx\.conf:\d+/



=== TEST 69: a consensus asking more upstreams to agree than the network has is refused at its line
--- http_config
    solgate_network mainnet {
        upstream a http://127.0.0.1:1;
        upstream b http://127.0.0.1:2;
        upstream c http://127.0.0.1:3;
        consensus getBalance participants=5 agreement=4;
    }
--- config
--- must_die
--- error_log eval
qr/"consensus" asks 4 upstreams to agree \(agreement=\), but network "mainnet" has 3: every call it takes would fail with -32090 in \S+nginx\.conf:\d+/
--- check
my ($line) = $_[0] =~ /every call it takes would fail with -32090 in \S+nginx\.conf:(\d+)/;
is($line, conf_line_of('consensus getBalance participants=5'), "at the consensus' line");



=== TEST 70: ... counting each server of an upstream {} block as one; one taken from the defaults is a warning
--- http_config
    upstream pool { solgate_balancer; server 127.0.0.1:1; server 127.0.0.1:2; }
    solgate_network_defaults { consensus getBalance participants=3 agreement=3; }
    solgate_network mainnet { cluster mainnet-beta; upstream a http://pool; upstream b http://127.0.0.1:3; }
    solgate_network devnet { cluster devnet; upstream c http://127.0.0.1:4; }
--- config
    location / { solgate_pass mainnet; include $TEST_NGINX_CONF_DIR/solgate_proxy.conf; }
    location @solgate_retry { solgate_pass mainnet; include $TEST_NGINX_CONF_DIR/solgate_proxy.conf; }
--- request
POST /
{"jsonrpc":"2.0","id":1,"method":"getGenesisHash"}
--- response_body_like: "result"
--- check
my $err = Test::Nginx::Util::read_startup_stderr();
unlike($err, qr/network "mainnet" has/, 'mainnet has three nodes: no warning');
like($err, qr/\[warn\].*"consensus" asks 3 upstreams to agree \(agreement=\), but network "devnet" has 1: every call it takes would fail with -32090 \(its consensus is solgate_network_defaults'\) in \S+nginx\.conf:\d+/,
     "devnet, of one node, is warned of the consensus it takes from the defaults");




=== TEST 71: ... and more than serve a method it names (methods=, ignore_methods=)
--- http_config
    solgate_network mainnet {
        upstream a http://127.0.0.1:1;
        upstream b http://127.0.0.1:2 methods=getBlock|getTransaction;
        upstream c http://127.0.0.1:3 ignore_methods=getBal*;
        consensus getBlock|getBalance agreement=2;
    }
--- config
--- must_die
--- error_log eval
qr/"consensus" asks 2 upstreams to agree \(agreement=\), but only 1 of network "mainnet"'s upstreams serve getBalance \(methods=, ignore_methods=\): every such call would fail with -32090 in \S+nginx\.conf:\d+/
--- check
my ($line) = $_[0] =~ /every such call would fail with -32090 in \S+nginx\.conf:(\d+)/;
is($line, conf_line_of('consensus getBlock|getBalance'), "at the consensus' line");
