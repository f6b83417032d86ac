# Use-upstream selectors and lanes against four simulated nodes in two tag
# families: "fast" nodes at the cluster tip, "slow" nodes 60 slots behind.

use Test::Nginx::Socket 'no_plan';
use Solgate::Sim;
use Solgate::TestConf;
use JSON::PP;
use Time::HiRes qw(sleep time);

our @Fast = (19871, 19872);
our @Slow = (19873, 19874);
sim_start(port => $_, args => ['--quiet']) for @Fast, @Slow;
sim_fault($_, 'lag', slots => 60) for @Slow;

our $HttpConfig = <<"_EOC_";
    solgate_network mainnet {
        cluster mainnet-beta;
        use_upstream_default "family:fast";
        upstream fast-a http://127.0.0.1:$Fast[0] tags=family:fast;
        upstream fast-b http://127.0.0.1:$Fast[1] tags=family:fast;
        upstream slow-a http://127.0.0.1:$Slow[0] tags=family:slow;
        upstream slow-b http://127.0.0.1:$Slow[1] tags=family:slow ignore_methods=getBalance;
    }
_EOC_

our $Config = solgate_locations('mainnet', extra => join "\n        ",
        'add_header X-Solgate-Upstream $solgate_upstream always;',
        'add_header X-Solgate-Lane $solgate_lane always;')
  . "    location /solgate/ { solgate_admin; }\n"
  . "    location = /metrics { solgate_metrics; }\n";

sub call { my ($id, $method, $params) = @_;
    return qq({"jsonrpc":"2.0","id":$id,"method":"$method")
        . (defined $params ? qq(,"params":$params) : '') . '}' }

sub upstreams { @{ decode_json(http_get(server_port(), '/solgate/state')->{body})
                    ->{networks}[0]{upstreams} } }

sub post { my ($uri, $body, $headers) = @_; http_post(server_port(), $uri, $body, $headers) }

no_root_location();
nginx_start($HttpConfig, $Config, no_root_location => 1);
my $start = time;
sleep 0.1 until (grep { $_->{processed_slot} > 0 } upstreams()) == 4 || time - $start > 3;

# --- pinned to one family: routed only there, with that family's tip ------
{
    my (%went, @slots, %lanes);
    for my $i (1 .. 12) {
        my $res = post('/', call($i, 'getSlot', '[{"commitment":"processed"}]'),
                       {'X-Solgate-Use-Upstream' => 'family:slow'});
        $went{$res->{headers}{'x-solgate-upstream'}}++;
        $lanes{$res->{headers}{'x-solgate-lane'}}++;
        push @slots, $res->{body} =~ /"result":(\d+)/;
    }
    is_deeply([sort keys %went], ['slow-a', 'slow-b'], 'pinned to family:slow: only slow nodes');
    is_deeply([keys %lanes], ['slow'], 'the lane is named "slow"');

    my %view = map { $_->{id} => $_->{processed_slot} } upstreams();
    my ($max_slow) = sort { $b <=> $a } @view{qw(slow-a slow-b)};
    my ($max_slot) = sort { $b <=> $a } @slots;
    ok($max_slot <= $max_slow + 2,
       "getSlot answers come from the slow family's tip ($max_slot, slow nodes at $max_slow, fast at $view{'fast-a'})");
    ok($view{'fast-a'} - $max_slot >= 50, 'and not from the fast nodes 60 slots ahead');

    my $fast = post('/', call(99, 'getSlot', '[{"commitment":"processed"}]'))->{body};
    my ($fast_slot) = $fast =~ /"result":(\d+)/;
    ok($fast_slot >= $view{'fast-a'} - 2, "the default selector gets the fast tip ($fast_slot)");
}

# --- the lane's series in /metrics -------------------------------------------
{
    my $m = http_get(server_port(), '/metrics')->{body};
    like($m, qr/^solgate_network_served_tip_slot\{network="mainnet",lane="slow",axis="processed"\} [1-9]\d*$/m,
         'served tip of lane "slow"');
    like($m, qr/^solgate_network_served_tip_slot\{network="mainnet",lane="fast",axis="finalized"\} [1-9]\d*$/m,
         'served tip of lane "fast" (the default selector)');
    like($m, qr/^solgate_network_served_tip_lag_slots\{network="mainnet",lane="slow",axis="processed"\} \d+$/m,
         'lag gauge per lane');
    like($m, qr/^solgate_network_served_tip_advance_age_seconds\{network="mainnet",lane="all",axis="processed"\} [\d.]+$/m,
         'advance-age gauge per lane');
}

# --- header beats query beats default --------------------------------------
{
    my $via = sub { post($_[0], call(1, 'getSlot'), $_[1])->{headers}{'x-solgate-upstream'} };
    is($via->('/?use-upstream=slow-b', {'X-Solgate-Use-Upstream' => 'fast-b'}), 'fast-b',
       'the header beats the query');
    is($via->('/?use-upstream=slow-b', {}), 'slow-b', 'the query beats the default');
    my %default = map { $via->('/', {}) => 1 } 1 .. 6;
    is_deeply([sort keys %default], ['fast-a', 'fast-b'], 'the default selects the fast family');
    is($via->('/', {'X-ERPC-Use-Upstream' => 'slow-a'}), 'slow-a', 'X-ERPC-Use-Upstream is accepted');
    is($via->('/?use-upstream=%21fast-%2A%26%21slow-a', {}), 'slow-b',
       'a URL-encoded query selector (!fast-*&!slow-a)');
}

# --- method subsets ---------------------------------------------------------
{
    my %went;
    for my $i (1 .. 8) {
        my $res = post('/', call($i, 'getBalance', '["83astBRguLMdt2h5U1Tpdq5tjFoJ6noeGwaY3mDLVcri"]'),
                       {'X-Solgate-Use-Upstream' => 'family:slow'});
        $went{$res->{headers}{'x-solgate-upstream'}}++;
    }
    is_deeply([keys %went], ['slow-a'], 'getBalance never goes to the upstream that ignores it');
    my $res = post('/', call(5, 'getBalance', '["x"]'), {'X-Solgate-Use-Upstream' => 'slow-b'});
    is($res->{body}, '{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found: no upstream matching use-upstream selector \"slow-b\" serves getBalance"},"id":5}',
       'a method no selected upstream serves is -32601');
}

# --- selector errors are clear JSON-RPC errors, never forwarded -------------
{
    my $res = post('/', call(7, 'getSlot'), {'X-Solgate-Use-Upstream' => '(fast-a'});
    is($res->{body}, '{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params: use-upstream selector \"(fast-a\": missing \')\' for \'(\' at position 1"},"id":7}',
       'a malformed selector is -32602 naming the problem');
    $res = post('/', call(8, 'getSlot'), {'X-Solgate-Use-Upstream' => 'archive-*'});
    like($res->{body}, qr/"code":-32602,"message":"Invalid params: use-upstream selector \\"archive-\*\\" matches no upstream of network \\"mainnet\\""/,
         'a selector that matches nothing is -32602');
}

nginx_stop();
unlike(nginx_error_log(), qr/\[(alert|crit|emerg)\]/, 'no alert in the error log');
done_testing();
