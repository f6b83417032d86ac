# Cube Runner, part 1: getBlock from the region cache, the region's ledger
# and another region, with plans, tiers and the getBlock rate limit.
#
# Two real gateways act as two regions: "us-east" (the nginx of each
# block, ledger window of 3000 slots) and "eu-west" (a second nginx that
# runs for the whole file until TEST 9 stops it, ledger window of 300000
# slots). Each has its own simulated node. The cache and state
# directories are outside the servroot, so every block's us-east starts
# on what the blocks before it left: the blocks run in file order, and the
# slots they use ($Slot, $Old) are found by the blocks before them.
# How fast a request is answered with the other region down is measured
# by tools/bench/region_down.pl, not here.

use Test::Nginx::Socket 'no_plan';
use Digest::SHA ();
use Solgate::Sim;
use Solgate::TestConf;
use Solgate::Gateway;
use JSON::PP;
use File::Path ();
use File::Spec;
use Time::HiRes ();

our $UsSim = 19881;
our $EuSim = 19882;
our $EuPort = 19885;

# The sims' slot clock: 400 ms slots since 2024-01-01 (see tools/solana-sim).
my $tip = int((Time::HiRes::time() * 1000 - 1704067200000) / 400);
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
our $Bad = "[error]\n[crit]\n[alert]\n[emerg]\n";

# Found by the blocks: the finalized tip us-east knows, a slot below it
# that was not skipped (TEST 1), a block only eu-west's ledger holds.
our ($Finalized, $Slot, $FirstBody);
our $Old = $UsFirst - 50000;
our $TierAnswer = qq({"jsonrpc":"2.0","error":{"code":-32001,"message":"Block $Old not available on this tier. First available block: $UsFirst","data":{"slot":$Old,"firstAvailableBlock":$UsFirst,"reason":"tier"}},"id":41});

# a getBlock request of a request section (what a current client sends)
sub block_req { "POST /\n" . get_block_call(@_) }
sub key { "X-Api-Key: $_[0]" }

sub post_to { my ($port, $body, $key, %h) = @_;
    http_post($port, '/', $body, { (defined $key ? ('X-Api-Key' => $key) : ()), %h }) }
sub us { post_to(server_port(), @_) }
sub eu { post_to($EuPort, @_) }

sub calls { sim_client_calls($_[0], 'getBlock') }
sub blocks_state { network_state(undef, $_[0])->{blocks} }

sub window_known { my ($port) = @_;
    my $name = defined $port ? "gateway on $port" : 'us-east';
    return ["$name knows its ledger window",
            sub { defined blocks_state($port)->{first_available_block} }, 5] }

# Answers are stored by the poller thread just after they were sent:
# then_stored($request) is the request between two steps that wait
# (bounded) until the gateway stored one more entry; post_then_stored is
# the same for a request made in Perl.
sub stored { blocks_state($_[0])->{cache}{stored} }
sub wait_stored { my ($port, $before) = @_;
    wait_until(sub { stored($port) > $before }, 3, 'the answer is stored') }
sub then_stored { my ($request) = @_;
    my $before;
    return (step { $before = stored() }, $request, step { wait_stored(undef, $before) }) }
sub post_then_stored { my ($port, $request) = @_;
    my $before = stored($port);
    my $res = $request->();
    wait_stored($port, $before);
    return $res }

# requests of us-east's Cube Runner (summaries, and fetches) in eu-west's
# access log
sub eu_asked_by_us {
    my $log = File::Spec->catfile(Test::Nginx::Util::t_dir(), 'servroot-eu', 'logs', 'access.log');
    open my $fh, '<', $log or return 0;
    my $n = grep { m{"POST / HTTP/1\.1" 200 .* "solgate-blocks/} } <$fh>;
    close $fh;
    return $n;
}

# An old block eu-west's ledger holds (the first slot from $slot down
# that was not skipped), asked of eu-west so that its cache keeps it:
# that slot and eu-west's answer.
sub eu_holds_old_block { my ($id, $slot) = @_;
    my $answer;
    for (1 .. 20) {
        $answer = post_then_stored($EuPort, sub { eu(get_block_call($id, $slot), 'key-op') });
        last if $answer->{body} =~ /"result"/;
        $slot--;
    }
    return ($slot, $answer) }
# ... until eu-west's summary (what us-east's poller reads) lists it
sub wait_eu_publishes { my ($slot) = @_;
    wait_for('eu-west publishes the block in its summary', sub {
        my $s = eval { decode_json(post_to($EuPort, rpc(1, 'solgateBlockSummary'), undef,
            'X-Solgate-Peer' => $Token)->{body})->{result} };
        $s && ($s->{variants}{'getBlock/json/full/r1/v0'} // '') =~ /\b$slot\b/ }, 5, 0.05) }

add_block_preprocessor(sub {
    my $block = shift;
    $block->set_value(http_config => $UsHttp) unless defined $block->http_config;
    $block->set_value(config => $Config) unless defined $block->config;
    $block->set_value(wait_for => window_known()) unless defined $block->wait_for;
    $block->set_value(no_error_log => $Bad) unless defined $block->no_error_log;
});

no_root_location();
gateway_start('eu', $EuHttp, $Config, port => $EuPort, no_root_location => 1);
run_tests();

__DATA__

=== TEST 1: the pollers learn each node's ledger window and the finalized slot
--- wait_for eval
[window_known(server_port()), window_known($EuPort)]
--- check
$Finalized = network_state()->{tips}{finalized};
ok($Finalized > $UsFirst, "finalized tip known ($Finalized)");
# a slot that was not skipped, asked of the node directly
$Slot = $Finalized - 20;
$Slot-- while http_post($UsSim, '/', get_block_call(0, $Slot))->{body} =~ /-32007/;



=== TEST 2: keys and plans: getBlock needs a key with a plan (in a batch too: that call gets its error, the others are answered)
--- request eval
[step { $main::Before = calls($UsSim) },
 block_req(1, $Finalized - 10),
 block_req(2, $Finalized - 10),
 step { is(calls($UsSim), $main::Before, 'refused calls never reach the node') },
 "POST /\n" . rpc(3, 'getSlot'),
 block_req(4, $Finalized - 10),
 "POST /\n[" . rpc(5, 'getSlot') . ',' . get_block_call(6, $Finalized - 10) . ']',
 "POST /\n" . rpc(7, 'getBlock', '["abc"]')]
--- more_headers eval
['', key('key-nobody'), '', 'X-Solgate-Peer: guess', '', '']
--- error_code eval
[401, 401, 200, 401, undef, 200]
--- response_body_like eval
[qr/^\{"jsonrpc":"2.0","error":\{"code":-32003,"message":"Unauthorized: getBlock needs an API key"\},"id":1\}$/,
 qr/"message":"Unauthorized: the API key has no valid plan"/,
 (undef) x 2,
 qr/^\[\{"jsonrpc":"2.0","result":\d+,"id":5\},\{"jsonrpc":"2.0","error":\{"code":-32003,"message":"Unauthorized: getBlock needs an API key"\},"id":6\}\]$/,
 # a call that is invalid whoever sends it is told so, not to get a key
 qr/^\{"jsonrpc":"2.0","error":\{"code":-32602,"message":"[^"]+"\},"id":7\}$/]
--- check
is(calls($UsSim), $main::Before, 'refused calls never reach the node');



=== TEST 3: the ledger, then the region cache, byte-identical
--- request eval
[step { $main::Before = calls($UsSim) },
 then_stored(block_req(11, $Slot)),
 step { is(calls($UsSim), $main::Before + 1, 'served by the ledger') },
 block_req('"second"', $Slot),
 step { is(calls($UsSim), $main::Before + 1, 'the second request makes no upstream call') },
 then_stored(block_req(12, $Slot, '{"encoding":"base64","maxSupportedTransactionVersion":0}')),
 step { is(calls($UsSim), $main::Before + 2, 'another encoding is another entry') },
 block_req(13, $Slot, '{"maxSupportedTransactionVersion":0,"encoding":"base64","commitment":"finalized"}'),
 step { is(calls($UsSim), $main::Before + 2, 'commitment does not split the entry') }]
--- more_headers eval
[key('key-op'), key('key-free'), key('key-op'), key('key-op')]
--- response_body_like eval
[qr/"result":\{"blockHeight"/, qr/,"id":"second"\}\s*$/]
--- check
$FirstBody = $_[0]{body};
is(sans_id($_[1]{body}), sans_id($_[0]{body}),
   "byte-identical to the ledger's answer but for the id");
is($_[1]{headers}{'content-length'}, length $_[1]{body}, 'Content-Length is right');
is(sans_id($_[3]{body}), sans_id($_[2]{body}), 'and it is the same bytes');
like(metric(qr/^solgate_blocks_served_total\{network="mainnet",source="cache"\} (\d+)$/m) // '',
     qr/^[2-9]$/, 'served_total counts the cache');
like(metric(qr/^solgate_blocks_cache_entries\{network="mainnet"\} (\d+)$/m) // '',
     qr/^2$/, 'two entries in the cache');



=== TEST 4: a block above the finalized slot is served but not cached
--- request eval
[step { $main::Recent = network_state()->{tips}{processed} - 1;
        $main::Before = calls($UsSim) },
 deferred { block_req(21, $main::Recent) },
 deferred { block_req(22, $main::Recent) }]
--- more_headers
X-Api-Key: key-op
--- check
is(calls($UsSim), $main::Before + 2, 'unfinalized blocks always go to the ledger');



=== TEST 5: skipped slots are answers, cached once final
--- request eval
[step {
     for my $s ($Slot - 400 .. $Slot - 100) {
         my $res = post_then_stored(undef, sub { us(get_block_call(30, $s), 'key-bulk') });
         if ($res->{body} =~ /-3200[79]/) {
             ($main::Skipped, $main::SkippedBody) = ($s, $res->{body});
             last;
         }
     }
     ok($main::Skipped, "found a skipped slot ($main::Skipped)");
     $main::Before = calls($UsSim);
 },
 deferred { block_req(31, $main::Skipped) }]
--- more_headers
X-Api-Key: key-free
--- check
is(calls($UsSim), $main::Before, 'a skipped slot is answered from the cache');
is(sans_id($_[0]{body}), sans_id($main::SkippedBody), 'with the same error');



=== TEST 6: tiers: history no source holds is -32001 with the first available block
getFirstAvailableBlock is the region's (the ledger window); the ledger is
not asked for a block outside its window.
--- request eval
["POST /\n" . rpc(40, 'getFirstAvailableBlock'),
 step { $main::Before = calls($UsSim) },
 block_req(41, $Old),
 block_req(41, $Old)]
--- more_headers eval
[key('key-free'), key('key-free'), key('key-op')]
--- response_body eval
[undef, $TierAnswer, $TierAnswer]
--- check
my ($first) = $_[0]{body} =~ /"result":(\d+)/;
is($first, $UsFirst, "getFirstAvailableBlock is the region's (the ledger window)");
is(calls($UsSim), $main::Before, 'the ledger is not asked for a block outside its window');



=== TEST 7: another region serves history the ledger does not hold
eu-west's ledger holds $Old and its cache keeps it once asked (a slot that
was not skipped, so the answer is a block); us-east serves it once
eu-west's summary says so, then from its own cache.
--- request eval
[step {
     my $eu_answer;
     ($Old, $eu_answer) = eu_holds_old_block(50, $Old);
     $main::EuAnswer = $eu_answer->{body};
     like($main::EuAnswer, qr/"result":\{"blockHeight"/, 'eu-west serves the old block from its ledger');
     $main::EuCalls = calls($EuSim);
     wait_eu_publishes($Old);
     $main::UsCalls = calls($UsSim);
     my $stored_before = stored();
     wait_for('us-east serves the old block once the summary says eu-west holds it', sub {
         $main::Served = us(get_block_call(52, $Old), 'key-free');
         $main::Served->{body} =~ /"result"/ }, 10, 0.05);
     wait_stored(undef, $stored_before);
     is(calls($UsSim), $main::UsCalls, 'without asking its own ledger');
     is(calls($EuSim), $main::EuCalls, 'and eu-west answered from its cache');
     is(sans_id($main::Served->{body}), sans_id($main::EuAnswer),
        'byte-identical to what the eu-west ledger returned');
     like(metric(qr/^solgate_blocks_served_total\{network="mainnet",source="region"\} (\d+)$/m) // '',
          qr/^[1-9]/, 'counted as served by a region');
 },
 deferred { block_req(53, $Old) }]
--- more_headers
X-Api-Key: key-op
--- check
is(sans_id($_[0]{body}), sans_id($main::EuAnswer), 'then us-east has it in its own cache');
is(metric(qr/^solgate_blocks_peer_fetches_total\{network="mainnet",peer="eu-west"\} (\d+)$/m),
   1, 'one fetch from eu-west');



=== TEST 8: eu-west copies what us-east holds in the background, newest first
($Slot, in two encodings, is the newest.)
--- wait_for eval
[window_known(),
 ['eu-west copies what us-east holds in the background', sub {
     (metric(qr/^solgate_blocks_peer_copies_total\{network="mainnet",peer="us-east"\} (\d+)$/m, $EuPort) // 0) >= 2 }, 15],
 # the copy the check asks for, not just any two: its summary lists it.
 # us-east restarts between blocks; a copy attempt that fell into such a
 # gap is tried again after 60 s (kCopyRetryMs), then needs a summary (5 s)
 # and an upkeep tick (1 s)
 ['eu-west holds the json copy of the newest block', sub {
     my $s = eval { decode_json(post_to($EuPort, rpc(1, 'solgateBlockSummary'), undef,
         'X-Solgate-Peer' => $Token)->{body})->{result} };
     $s && ($s->{variants}{'getBlock/json/full/r1/v0'} // '') =~ /\b$Slot\b/ }, 75, 0.05]]
--- check
my $before = calls($EuSim);
my $copied = eu(get_block_call(55, $Slot), 'key-free');
is(sans_id($copied->{body}), sans_id($FirstBody), 'the copy is byte-identical');
is(calls($EuSim), $before, 'and eu-west served it from its cache');
is(metric(qr/^solgate_blocks_peer_copies_total\{network="mainnet",peer="eu-west"\} (\d+)$/m),
   0, 'us-east copies nothing from a copy=off peer');



=== TEST 9: a region that is down is skipped
us-east has asked eu-west (up) for its summary, then eu-west stops.
--- setup
$main::EuAsked = eu_asked_by_us();
--- wait_for eval
[window_known(),
 ['us-east asked eu-west for its summary', sub { eu_asked_by_us() > $main::EuAsked }, 10]]
--- request eval
[step { gateway_stop($EuPort) },
 block_req(56, $Old - 3)]
--- more_headers
X-Api-Key: key-free
--- response_body_like: -32001



=== TEST 10: the plan's getBlock rate: a 2 r/s plan refuses the third call at once
--- request eval
[map { block_req(60 + $_, $Slot) } 1 .. 3]
--- more_headers
X-Api-Key: key-tiny
--- error_code eval
[200, 200, 429]
--- response_headers_like eval
[undef, undef, 'Retry-After: [1-9]\d*']
--- response_body_like eval
[undef, undef, qr/"code":-32019,.*"data":\{"slot":$Slot,"retryAfterSecs":\d+,"reason":"rate_limit"\}/]
--- check
like(metric(qr/^solgate_blocks_rate_limited_total\{network="mainnet",plan="tiny"\} (\d+)$/m) // '',
     qr/^1$/, 'counted per plan');
my ($tiny) = grep { $_->{key_sha256} eq substr(Digest::SHA::sha256_hex('key-tiny'), 0, 16) } @{ blocks_state()->{keys} };
is($tiny->{key}, 'ke...ny', 'a short key is never shown whole');
is($tiny->{rate_limited}, 1, 'per-key figures in the admin state');
unlike(metrics_text(), qr/key-tiny/, 'never as a metric label');



=== TEST 11: a restart keeps the cache and its index
The gateway of the blocks before this one has stopped; this one starts on
the same cache and state.
--- request eval
[step { $main::Before = calls($UsSim) },
 block_req(70, $Slot)]
--- more_headers
X-Api-Key: key-free
--- response_body_like: "result":\{"blockHeight"
--- check
is(calls($UsSim), $main::Before, 'from the cache kept on disk');
is(blocks_state()->{cache}{entries} >= 3, 1, 'the index survived');



=== TEST 12: a cache whose index is lost is cleared, never served wrong
--- setup
File::Path::remove_tree("$Dir/us-east/state");
--- wait_for eval
[window_known(),
 # only finalized blocks are cached: wait until the poller knows the tip
 ['the poller knows a finalized tip above the block',
  sub { network_state()->{tips}{finalized} > $Slot }, 5]]
--- request eval
[step { $main::Before = calls($UsSim) },
 then_stored(block_req(71, $Slot))]
--- more_headers
X-Api-Key: key-free
--- response_body_like: "result":\{"blockHeight"
--- check
is(calls($UsSim), $main::Before + 1, 'by the ledger: the files without an index were not trusted');
my @left = glob("$Dir/us-east/cache/v/*/*/*");
is(scalar(@left), 1, "the old files were removed; only the new answer is cached") or diag(join "\n", @left);



=== TEST 13: inside a batch, each getBlock is Cube Runner's with the request's key: served from the cache, rate limited call by call
key-tiny's plan allows 2 getBlock calls a second: of three in one batch,
the third is refused in its place.
--- request eval
"POST /\n[" . join(',', get_block_call(1, $Slot), rpc(2, 'getSlot'), get_block_call(3, $Slot), get_block_call(4, $Slot)) . ']'
--- more_headers
X-Api-Key: key-tiny
--- response_body_like eval
qr/^\[\{"jsonrpc":"2.0","result":\{"blockHeight".*"id":1\}\s*,\{"jsonrpc":"2.0","result":\d+,"id":2\},\{"jsonrpc":"2.0","result":\{"blockHeight".*"id":3\}\s*,\{"jsonrpc":"2.0","error":\{"code":-32019,.*"reason":"rate_limit"\}\},"id":4\}\]$/s
--- check
my $canonical = JSON::PP->new->canonical;
my $answers = decode_json($_[0]{body});
is($canonical->encode($answers->[0]{result}), $canonical->encode(decode_json($main::FirstBody)->{result}),
   'the cached block, as the ledger answered it');
like(metric(qr/^solgate_blocks_rate_limited_total\{network="mainnet",plan="tiny"\} (\d+)$/m) // '',
     qr/^[1-9]\d*$/, 'the refused call is counted');



=== TEST 14: a peer names an upstream {} block: proxy_pass uses the block, the poller asks its server for the summaries
eu-west, stopped by TEST 9, runs again.
--- setup
gateway_start('eu', $EuHttp, $Config, port => $EuPort, no_root_location => 1);
--- http_config eval
"    upstream eu_gw { server 127.0.0.1:$EuPort; }\n"
  . region_conf('mainnet', 'us-east', $UsSim, 'eu-west http://eu_gw copy=off')
--- request eval
[step {
     my ($peer) = @{ blocks_state()->{peers} };
     is($peer->{url}, 'http://eu_gw/', 'the peer as written');
     is($peer->{server}, "127.0.0.1:$EuPort", "polled at the block's server");
     my $before = eu_asked_by_us();
     wait_for("eu-west is asked for its summary", sub { eu_asked_by_us() > $before }, 10);
     gateway_stop($EuPort);
 }]



=== TEST 15: an error answer's status line carries its JSON-RPC message, which @solana/kit shows ("HTTP error (401): ...")
--- request eval
[step {
     my $res = us(get_block_call(60, $Old));
     is($res->{status}, 401, 'no key: 401');
     is($res->{reason}, 'Unauthorized: getBlock needs an API key', 'the reason phrase is the message');
     like($res->{body}, qr/"message":"Unauthorized: getBlock needs an API key"/, 'as in the body');
     my $ok = us(get_block_call(61, $Old), 'key-op');
     is($ok->{reason}, 'OK', 'answers that are no error keep nginx\'s');
 }]



=== TEST 16: keyless_plan: a call without a key is served on that plan, each client address with a budget of its own
--- http_config eval
my $c = region_conf('mainnet', 'us-east', $UsSim, '');
$c =~ s/(\n\s*plan_define tiny )/\n        keyless_plan tiny;$1/;
$c
--- request eval
[step {
     my @status = map { us(get_block_call(70 + $_, $Old))->{status} } 1 .. 3;
     is("@status", '200 200 429', "tiny's 2 r/s for this address, without a key");
     my $keyed = us(get_block_call(74, $Old), 'key-bulk');
     is($keyed->{status}, 200, 'a key keeps its own plan');
     like(us(get_block_call(75, $Old))->{body}, qr/"reason":"rate_limit"/, 'the keyless one is limited');
 }]



=== TEST 17: through solgate_dispatch.conf, Cube Runner's request to another region carries the peer token (the dispatcher adds it) and is served
eu-west, stopped by TEST 14, runs again; without the token it would
answer us-east's request 401.
--- setup
gateway_start('eu', $EuHttp, $Config, port => $EuPort, no_root_location => 1);
--- http_config eval
"    upstream solgate { solgate_dispatch; }\n" . $UsHttp
--- config eval
solgate_locations('mainnet', snippet => 'solgate_dispatch.conf')
  . "    location /solgate/ { solgate_admin; }\n"
  . "    location = /metrics { solgate_metrics; }\n"
--- request eval
[step {
     my ($slot, $eu_answer) = eu_holds_old_block(80, $Old - 1000);
     like($eu_answer->{body}, qr/"result":\{"blockHeight"/, 'eu-west serves an old block from its ledger');
     wait_eu_publishes($slot);
     my $us_calls = calls($UsSim);
     my $peer_requests = blocks_state($EuPort)->{peer_requests};
     my $served;
     wait_for('us-east serves the old block from eu-west', sub {
         $served = us(get_block_call(81, $slot), 'key-free');
         $served->{body} =~ /"result"/ }, 10, 0.05);
     is(calls($UsSim), $us_calls, 'without asking its own ledger');
     is(sans_id($served->{body}), sans_id($eu_answer->{body}),
        'byte-identical to what the eu-west ledger returned');
     is(metric(qr/^solgate_blocks_peer_fetches_total\{network="mainnet",peer="eu-west"\} (\d+)$/m),
        1, 'one fetch from eu-west');
     is(blocks_state($EuPort)->{peer_requests}, $peer_requests + 1,
        'eu-west answered it as a peer\'s request: the token came with it');
     gateway_stop($EuPort);
 }]



=== TEST 18: a cached file truncated or deleted behind the index's back is dropped, and the block fetched again
The worker never serves it, never loops on it: it logs the file, drops the
entry and asks the ledger; the next request finds the block stored again.
--- wait_for eval
[window_known(),
 ['the poller knows a finalized tip above the block',
  sub { network_state()->{tips}{finalized} > $Slot }, 5]]
--- request eval
[block_req(90, $Slot),
 step {
     my $cached = sub { glob("$Dir/us-east/cache/v/getBlock_2Fjson_2Ffull_2Fr1_2Fv0/*/$Slot") };
     wait_for('the block is cached', sub { scalar(my @f = $cached->()) }, 3);
     my @files = $cached->();
     truncate($files[0], 100) or die "truncate: $!";
     $main::Before = calls($UsSim);
 },
 then_stored(block_req(91, $Slot)),
 step {
     is(calls($UsSim), $main::Before + 1, 'asked the ledger again');
     my @files = glob("$Dir/us-east/cache/v/getBlock_2Fjson_2Ffull_2Fr1_2Fv0/*/$Slot");
     unlink @files;
     $main::Before = calls($UsSim);
 },
 block_req(92, $Slot),
 step { is(calls($UsSim), $main::Before + 1, 'a deleted file: the ledger again') }]
--- more_headers eval
[key('key-free'), key('key-free'), key('key-free')]
--- response_body_like eval
[qr/"result":\{"blockHeight".*"id":90\}\s*$/, qr/"result":\{"blockHeight".*"id":91\}\s*$/,
 qr/"result":\{"blockHeight".*"id":92\}\s*$/]
--- error_log eval
[qr/solgate: cached block "[^"]*\/$main::Slot" is not the file its index describes; dropped from the cache, asking the next source/,
 qr/solgate: cached block "[^"]*\/$main::Slot" vanished; dropped from the cache, asking the next source/]



=== TEST 19: at start the cache is checked against its index, and the log says what was removed
A file no entry describes (a stray copied in by hand) is deleted when the
gateway starts; the entries kept are counted.
--- setup
my $dir = "$Dir/us-east/cache/v/getBlock_2Fjson_2Ffull_2Fr1_2Fv0/0";
File::Path::make_path($dir);
open(my $f, '>', "$dir/7") or die "$dir/7: $!";
print {$f} "not a block";
close $f;
--- request eval
block_req(93, $Slot)
--- more_headers
X-Api-Key: key-free
--- response_body_like: "result":\{"blockHeight"
--- check
ok(!-e "$Dir/us-east/cache/v/getBlock_2Fjson_2Ffull_2Fr1_2Fv0/0/7", 'the stray file is gone');
--- error_log eval
qr/\[warn\] .*solgate_blocks "mainnet": cache "[^"]*\/us-east\/cache" checked against its index: [1-9]\d* cached block\(s\) kept, 0 entr\(ies\) dropped \(file missing or not the file indexed\), 1 stray or mismatched item\(s\) removed from it/



=== TEST 20: an index that cannot be read is moved aside and the cache emptied, and the log says so
--- setup
my $data = "$Dir/us-east/state/blocks/data.mdb";
open(my $f, '+<', $data) or die "$data: $!";
print {$f} "\xff" x 65536;
close $f;
--- request eval
block_req(94, $Slot)
--- more_headers
X-Api-Key: key-free
--- response_body_like: "result":\{"blockHeight"
--- check
ok(-e "$Dir/us-east/state/blocks.corrupt/data.mdb", 'the damaged index is kept aside');
--- no_error_log
[error]
[crit]
[emerg]
cannot open the cache
checked against its index
--- error_log eval
qr/\[alert\] .*solgate_blocks "mainnet": the block index in "[^"]*\/us-east\/state\/blocks" could not be read \([^)]*MDB_INVALID[^)]*\); it was moved to "[^"]*\/us-east\/state\/blocks.corrupt" and the cache "[^"]*\/us-east\/cache" emptied/
