# Cube Runner, part 1: getBlock from the region cache, the region's ledger
# and another region, with plans, tiers and the getBlock rate limit.
#
# Two real gateways act as two regions: "us-east" (the nginx of this test,
# ledger window of 3000 slots) and "eu-west" (a second nginx, ledger window
# of 300000 slots). Each has its own simulated node.

use Test::Nginx::Socket 'no_plan';
use Solgate::Sim;
use Solgate::TestConf;
use JSON::PP;
use File::Path ();
use File::Spec;
use Time::HiRes qw(sleep time);

our $UsSim = 19881;
our $EuSim = 19882;
our $EuPort = 19885;

# The sims' slot clock: 400 ms slots since 2024-01-01 (see tools/solana-sim).
my $tip = int((time() * 1000 - 1704067200000) / 400);
our $UsFirst = $tip - 3000;
our $EuFirst = $tip - 300000;
sim_start(port => $UsSim, args => ['--quiet', '--first-available-block', $UsFirst]);
sim_start(port => $EuSim, args => ['--quiet', '--first-available-block', $EuFirst]);

our $Token = 'test-region-token-0123456789';
our $Dir = File::Spec->catdir(Test::Nginx::Util::t_dir(), 'blocks-tmp');
File::Path::remove_tree($Dir);
File::Path::make_path($Dir);
END { File::Path::remove_tree($Dir) if $Dir }

sub region_conf {
    my ($name, $region, $sim, $peer) = @_;
    my $peer_line = $peer ? "peer $peer;" : '';
    return <<"_EOC_";
    map \$http_x_api_key \$solgate_plan {
        default     "";
        key-free    free;
        key-op      operator;
        key-arch    blade_runner;
        key-tiny    tiny;
        key-bulk    bulk;
    }
    solgate_network $name {
        cluster mainnet-beta;
        upstream node http://127.0.0.1:$sim;
    }
    solgate_blocks $name {
        region $region;
        cache $Dir/$region/cache max_size=50m;
        state $Dir/$region/state;
        $peer_line
        peer_token $Token;
        api_key \$http_x_api_key;
        plan \$solgate_plan;
        plan_define tiny tier=free getblock_rate=2r/s;
        plan_define bulk tier=operator getblock_rate=0;
    }
_EOC_
}

# us-east asks eu-west for blocks (copy=off keeps its background copy out
# of the on-demand checks); eu-west copies what us-east holds.
our $UsHttp = region_conf('mainnet', 'us-east', $UsSim, "eu-west http://127.0.0.1:$EuPort copy=off");
our $EuHttp = region_conf('mainnet', 'eu-west', $EuSim, 'us-east http://127.0.0.1:' . server_port());
our $Config = solgate_locations('mainnet')
  . "    location /solgate/ { solgate_admin; }\n"
  . "    location = /metrics { solgate_metrics; }\n";

# What a current client sends: a block with version-0 transactions is
# refused (-32015) without maxSupportedTransactionVersion.
sub get_block { my ($id, $slot, $opts) = @_;
    $opts //= '{"maxSupportedTransactionVersion":0}';
    return qq({"jsonrpc":"2.0","id":$id,"method":"getBlock","params":[$slot,$opts]}) }

sub post_to { my ($port, $body, $key, %h) = @_;
    http_post($port, '/', $body, { (defined $key ? ('X-Api-Key' => $key) : ()), %h }) }
sub us { post_to(server_port(), @_) }
sub eu { post_to($EuPort, @_) }

# The answer without its id: what must be identical whichever source served it.
sub sans_id { my ($body) = @_; $body =~ s/"id":(?:\d+|"[^"]*"|null)//; $body }

sub calls { sim_client_calls($_[0], 'getBlock') }

sub state_of { my ($port) = @_;
    decode_json(http_get($port, '/solgate/state')->{body})->{networks}[0] }

sub metric { my ($port, $re) = @_;
    my $m = http_get($port, '/metrics')->{body};
    return $m =~ $re ? $1 : undef }

sub wait_until { my ($cond, $secs) = @_;
    my $end = time + $secs;
    until ($cond->()) { return 0 if time > $end; sleep 0.05 }
    return 1 }

# Answers are stored by the poller thread just after they were sent:
# runs the request, then waits until the gateway stored one more entry.
sub stored { state_of($_[0])->{blocks}{cache}{stored} }
sub then_stored { my ($port, $request) = @_;
    my $before = stored($port);
    my $res = $request->();
    wait_until(sub { stored($port) > $before }, 3);
    return $res }

no_root_location();
gateway_start('eu', $EuHttp, $Config, port => $EuPort, no_root_location => 1);
nginx_start($UsHttp, $Config, no_root_location => 1);

# the pollers learn each node's ledger window and finalized slot
for my $port (server_port(), $EuPort) {
    ok(wait_until(sub { my $b = state_of($port)->{blocks};
                        defined $b->{first_available_block} }, 5),
       "gateway on $port knows its ledger window");
}
my $finalized = state_of(server_port())->{tips}{finalized};
ok($finalized > $UsFirst, "finalized tip known ($finalized)");

# --- keys and plans ------------------------------------------------------------
{
    my $before = calls($UsSim);
    my $res = us(get_block(1, $finalized - 10), undef);
    is($res->{status}, 401, 'no API key: HTTP 401');
    like($res->{body}, qr/^\{"jsonrpc":"2.0","error":\{"code":-32003,"message":"Unauthorized: getBlock needs an API key"\},"id":1\}$/,
         'no API key: a JSON-RPC error');
    $res = us(get_block(2, $finalized - 10), 'key-nobody');
    is($res->{status}, 401, 'a key without a plan: HTTP 401');
    like($res->{body}, qr/"message":"Unauthorized: the API key has no valid plan"/,
         'the message names no other key');
    is(calls($UsSim), $before, 'refused calls never reach the node');

    $res = us('{"jsonrpc":"2.0","id":3,"method":"getSlot"}', undef);
    is($res->{status}, 200, 'methods other than getBlock need no key');

    $res = us(get_block(4, $finalized - 10), undef, 'X-Solgate-Peer' => 'guess');
    is($res->{status}, 401, 'a wrong peer token is an ordinary client');
    $res = us('[{"jsonrpc":"2.0","id":5,"method":"getSlot"},' . get_block(6, $finalized - 10) . ']', 'key-op');
    is($res->{body},
       '[{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request: getBlock, getConfirmedBlock and getFirstAvailableBlock must be sent alone, not in a batch"},"id":5},'
       . '{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request: getBlock, getConfirmedBlock and getFirstAvailableBlock must be sent alone, not in a batch"},"id":6}]',
       'a batch with getBlock is refused, call by call');
    is(calls($UsSim), $before, 'refused calls never reach the node');
}

# --- ledger, then the region cache, byte-identical ---------------------------
# a slot that was not skipped, asked of the node directly
our $FirstBody;
my $slot = $finalized - 20;
$slot-- while http_post($UsSim, '/', get_block(0, $slot))->{body} =~ /-32007/;
{
    my $before = calls($UsSim);
    my $first = then_stored(server_port(), sub { us(get_block(11, $slot), 'key-op') });
    $FirstBody = $first->{body};
    is($first->{status}, 200, 'first getBlock: HTTP 200');
    like($first->{body}, qr/"result":\{"blockHeight"/, 'a block');
    is(calls($UsSim), $before + 1, 'served by the ledger');

    my $second = us(get_block('"second"', $slot), 'key-free');
    is(calls($UsSim), $before + 1, 'the second request makes no upstream call');
    like($second->{body}, qr/,"id":"second"\}\s*$/, 'with the client\'s own id');
    is(sans_id($second->{body}), sans_id($first->{body}),
       'byte-identical to the ledger\'s answer but for the id');
    is($second->{headers}{'content-length'}, length $second->{body}, 'Content-Length is right');

    my $other = then_stored(server_port(), sub { us(get_block(12, $slot, '{"encoding":"base64","maxSupportedTransactionVersion":0}'), 'key-op') });
    is(calls($UsSim), $before + 2, 'another encoding is another entry');
    my $again = us(get_block(13, $slot, '{"maxSupportedTransactionVersion":0,"encoding":"base64","commitment":"finalized"}'), 'key-op');
    is(calls($UsSim), $before + 2, 'commitment does not split the entry');
    is(sans_id($again->{body}), sans_id($other->{body}), 'and it is the same bytes');

    like(metric(server_port(), qr/^solgate_blocks_served_total\{network="mainnet",source="cache"\} (\d+)$/m) // '',
         qr/^[2-9]$/, 'served_total counts the cache');
    like(metric(server_port(), qr/^solgate_blocks_cache_entries\{network="mainnet"\} (\d+)$/m) // '',
         qr/^2$/, 'two entries in the cache');
}

# --- a block above the finalized slot is served but not cached -----------------
{
    my $recent = state_of(server_port())->{tips}{processed} - 1;
    my $before = calls($UsSim);
    us(get_block(21, $recent), 'key-op');
    us(get_block(22, $recent), 'key-op');
    is(calls($UsSim), $before + 2, 'unfinalized blocks always go to the ledger');
}

# --- skipped slots are answers, cached once final --------------------------------
{
    my ($skipped, $body);
    for my $s ($slot - 400 .. $slot - 100) {
        my $res = then_stored(server_port(), sub { us(get_block(30, $s), 'key-bulk') });
        if ($res->{body} =~ /-3200[79]/) { ($skipped, $body) = ($s, $res->{body}); last }
    }
    ok($skipped, "found a skipped slot ($skipped)");
    my $before = calls($UsSim);
    my $res = us(get_block(31, $skipped), 'key-free');
    is(calls($UsSim), $before, 'a skipped slot is answered from the cache');
    is(sans_id($res->{body}), sans_id($body), 'with the same error');
}

# --- tiers: history no source holds ----------------------------------------------
my $old = $UsFirst - 50000;
{
    my $res = us('{"jsonrpc":"2.0","id":40,"method":"getFirstAvailableBlock"}', 'key-free');
    my ($first) = $res->{body} =~ /"result":(\d+)/;
    is($first, $UsFirst, 'getFirstAvailableBlock is the region\'s (the ledger window)');

    my $before = calls($UsSim);
    for my $key (qw(key-free key-op)) {
        $res = us(get_block(41, $old), $key);
        is($res->{status}, 200, "$key, old block: HTTP 200");
        is($res->{body},
           qq({"jsonrpc":"2.0","error":{"code":-32001,"message":"Block $old not available on this tier. First available block: $UsFirst","data":{"slot":$old,"firstAvailableBlock":$UsFirst,"reason":"tier"}},"id":41}),
           "$key, old block: -32001 with the first available block");
    }
    is(calls($UsSim), $before, 'the ledger is not asked for a block outside its window');
}

# --- another region ------------------------------------------------------------------
{
    # eu-west's ledger holds $old; its cache keeps it once asked (a slot
    # that was not skipped, so the answer is a block)
    my $eu_answer;
    for (1 .. 20) {
        $eu_answer = then_stored($EuPort, sub { eu(get_block(50, $old), 'key-op') });
        last if $eu_answer->{body} =~ /"result"/;
        $old--;
    }
    like($eu_answer->{body}, qr/"result":\{"blockHeight"/, 'eu-west serves the old block from its ledger');
    my $eu_calls = calls($EuSim);

    ok(wait_until(sub {
        my $s = eval { decode_json(post_to($EuPort,
            '{"jsonrpc":"2.0","id":1,"method":"solgateBlockSummary"}', undef,
            'X-Solgate-Peer' => $Token)->{body})->{result} };
        $s && ($s->{variants}{'getBlock/json/full/r1/v0'} // '') =~ /\b$old\b/ }, 5),
       'eu-west publishes the block in its summary');

    my $res;
    my $us_calls = calls($UsSim);
    my $served;
    my $stored_before = stored(server_port());
    ok(wait_until(sub {
        $served = us(get_block(52, $old), 'key-free');
        $served->{body} =~ /"result"/ }, 10),
       'us-east serves the old block once the summary says eu-west holds it');
    wait_until(sub { stored(server_port()) > $stored_before }, 3);
    is(calls($UsSim), $us_calls, 'without asking its own ledger');
    is(calls($EuSim), $eu_calls, 'and eu-west answered from its cache');
    is(sans_id($served->{body}), sans_id($eu_answer->{body}),
       'byte-identical to what the eu-west ledger returned');
    like(metric(server_port(), qr/^solgate_blocks_served_total\{network="mainnet",source="region"\} (\d+)$/m) // '',
         qr/^[1-9]/, 'counted as served by a region');

    my $cached = us(get_block(53, $old), 'key-op');
    is(sans_id($cached->{body}), sans_id($eu_answer->{body}), 'then us-east has it in its own cache');
    my $peer_fetches = metric(server_port(), qr/^solgate_blocks_peer_fetches_total\{network="mainnet",peer="eu-west"\} (\d+)$/m);
    is($peer_fetches, 1, 'one fetch from eu-west');

    # background copy: eu-west copies what us-east holds, newest first
    # ($slot, in two encodings, is the newest)
    ok(wait_until(sub {
        (metric($EuPort, qr/^solgate_blocks_peer_copies_total\{network="mainnet",peer="us-east"\} (\d+)$/m) // 0) >= 2 }, 15),
       'eu-west copies what us-east holds in the background');
    my $eu_calls_before = calls($EuSim);
    my $copied = eu(get_block(55, $slot), 'key-free');
    is(sans_id($copied->{body}), sans_id($FirstBody), 'the copy is byte-identical');
    is(calls($EuSim), $eu_calls_before, 'and eu-west served it from its cache');
    is(metric(server_port(), qr/^solgate_blocks_peer_copies_total\{network="mainnet",peer="eu-west"\} (\d+)$/m),
       0, 'us-east copies nothing from a copy=off peer');

    # a region that is down is skipped, never waited on
    gateway_stop($EuPort);
    my $t0 = time;
    $res = us(get_block(56, $old - 3), 'key-free');
    like($res->{body}, qr/-32001/, 'with eu-west down, history is -32001 again');
    ok(time - $t0 < 2, 'at once');
}

# --- the plan's getBlock rate ----------------------------------------------------------
{
    my @status = map { us(get_block(60 + $_, $slot), 'key-tiny') } 1 .. 3;
    is(join(',', map { $_->{status} } @status), '200,200,429', 'a 2 r/s plan: the third call at once is refused');
    my $limited = $status[2];
    like($limited->{headers}{'retry-after'} // '', qr/^[1-9]\d*$/, 'with Retry-After');
    like($limited->{body}, qr/"code":-32019,.*"data":\{"slot":$slot,"retryAfterSecs":\d+,"reason":"rate_limit"\}/,
         'and a JSON-RPC error with reason rate_limit');
    like(metric(server_port(), qr/^solgate_blocks_rate_limited_total\{network="mainnet",plan="tiny"\} (\d+)$/m) // '',
         qr/^1$/, 'counted per plan');
    my $state = state_of(server_port());
    my ($tiny) = grep { $_->{key} eq 'key-tiny' } @{ $state->{blocks}{keys} };
    is($tiny->{rate_limited}, 1, 'per-key figures in the admin state');
    unlike(http_get(server_port(), '/metrics')->{body}, qr/key-tiny/, 'never as a metric label');
}

# --- a restart keeps the cache and its index ---------------------------------------------
{
    my @bad = grep { /\[(error|crit|alert|emerg)\]/ } split /\n/, nginx_error_log();
    is(scalar(@bad), 0, 'no error in the log of us-east') or diag(join "\n", @bad[0 .. ($#bad < 4 ? $#bad : 4)]);
    nginx_stop();
    nginx_start($UsHttp, $Config, no_root_location => 1);
    my $before = calls($UsSim);
    my $res = us(get_block(70, $slot), 'key-free');
    like($res->{body}, qr/"result":\{"blockHeight"/, 'after a restart the block is served');
    is(calls($UsSim), $before, 'from the cache kept on disk');
    is(state_of(server_port())->{blocks}{cache}{entries} >= 3, 1, 'the index survived');
}

# --- a cache whose index is lost is cleared, never served wrong ----------------------------
{
    nginx_stop();
    File::Path::remove_tree("$Dir/us-east/state");
    nginx_start($UsHttp, $Config, no_root_location => 1);
    # only finalized blocks are cached: wait until the poller knows the tip
    wait_until(sub { state_of(server_port())->{tips}{finalized} > $slot }, 5);
    my $before = calls($UsSim);
    my $res = then_stored(server_port(), sub { us(get_block(71, $slot), 'key-free') });
    like($res->{body}, qr/"result":\{"blockHeight"/, 'with a new index the block is still served');
    is(calls($UsSim), $before + 1, 'by the ledger: the files without an index were not trusted');
    my @left = glob("$Dir/us-east/cache/v/*/*/*");
    is(scalar(@left), 1, "the old files were removed; only the new answer is cached") or diag(join "\n", @left);
}

nginx_stop();
