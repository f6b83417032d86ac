# Cube Runner, part 2: blocks no cache, ledger or region holds come from
# long-term storage through the plan's fair queue, within the key's monthly
# allowance.  Long-term storage is a simulated archive node (every slot
# since genesis, 100 ms per getBlock); the ledger keeps 3000 slots.

use Test::Nginx::Socket 'no_plan';
use Solgate::Sim;
use Solgate::TestConf;
use JSON::PP;
use File::Path ();
use File::Spec;
use Time::HiRes qw(sleep time);

our $Archive = 19891;
our $Ledger = 19892;

my $tip = int((time() * 1000 - 1704067200000) / 400);
our $First = $tip - 3000;
sim_start(port => $Archive, args => ['--quiet', '--archive', '--getblock-latency-ms', 100]);
sim_start(port => $Ledger, args => ['--quiet', '--first-available-block', $First]);

our $Dir = File::Spec->catdir(Test::Nginx::Util::t_dir(), 'long-term-tmp');
File::Path::remove_tree($Dir);
File::Path::make_path($Dir);
END { File::Path::remove_tree($Dir) if $Dir }

our $HttpConfig = <<"_EOC_";
    map \$http_x_api_key \$solgate_plan {
        default ""; k1 arch; k2 arch; k3 arch; kit arch; tiny tinyarch; free free;
    }
    solgate_network mainnet {
        cluster mainnet-beta;
        upstream node http://127.0.0.1:$Ledger;
    }
    solgate_blocks mainnet {
        region us-east;
        cache $Dir/cache;
        state $Dir/state;
        long_term_storage http://127.0.0.1:$Archive/;
        api_key \$http_x_api_key;
        plan \$solgate_plan;
        plan_define arch tier=archive getblock_rate=0 retrieval_rate=20r/s queue_limit=100 monthly_allowance=1000;
        plan_define tinyarch tier=archive getblock_rate=0 retrieval_rate=20r/s queue_limit=10 monthly_allowance=2;
    }
_EOC_
our $Config = solgate_locations('mainnet')
  . "    location /solgate/ { solgate_admin; }\n"
  . "    location = /metrics { solgate_metrics; }\n";

sub get_block { my ($id, $slot) = @_;
    qq({"jsonrpc":"2.0","id":$id,"method":"getBlock","params":[$slot,{"maxSupportedTransactionVersion":0}]}) }
sub ask { my ($key, $slot, $id) = @_;
    http_post(server_port(), '/', get_block($id // 1, $slot), { 'X-Api-Key' => $key }) }
sub sans_id { my ($body) = @_; $body =~ s/"id":(?:\d+|"[^"]*"|null)//; $body }
sub archive_calls { sim_client_calls($Archive, 'getBlock') }
sub metric { my ($re) = @_;
    my $m = http_get(server_port(), '/metrics')->{body};
    return $m =~ $re ? $1 : undef }

# Asks like a client that honours Retry-After (faster: every 200 ms) until
# the block comes; returns the last response and the number of 429s.
sub fetch { my ($key, $slot, $secs) = @_;
    my ($res, $waits) = (undef, 0);
    my $end = time + ($secs // 15);
    while (time < $end) {
        $res = ask($key, $slot);
        return ($res, $waits) unless $res->{status} == 429 && $res->{body} =~ /"queuePosition"/;
        $waits++;
        sleep 0.2;
    }
    return ($res, $waits);
}

# a slot below the ledger's window that was not skipped
sub old_slot { my ($s) = @_;
    $s-- while http_post($Archive, '/', get_block(0, $s))->{body} =~ /-32009/;
    return $s }

no_root_location();
nginx_start($HttpConfig, $Config, no_root_location => 1);
# until the ledger's window is known, getBlock goes to the ledger
sub wait_window { my $wait = time + 5;
    sleep 0.1 until time > $wait
      || defined decode_json(http_get(server_port(), '/solgate/state')->{body})
           ->{networks}[0]{blocks}{first_available_block} }
wait_window();

# --- queued, then served, byte-identical ------------------------------------------
my $slot = old_slot($First - 100000);
{
    my $before = archive_calls();
    my $res = ask('k1', $slot, 7);
    is($res->{status}, 429, 'an old block on an archive plan: HTTP 429');
    like($res->{headers}{'retry-after'} // '', qr/^([1-9]|[1-5][0-9]|60)$/, 'Retry-After between 1 and 60');
    like($res->{body},
         qr/^\{"jsonrpc":"2.0","error":\{"code":-32019,"message":"Block $slot is being retrieved from long-term storage; retry in \d+ seconds","data":\{"slot":$slot,"retryAfterSecs":\d+,"queuePosition":1\}\},"id":7\}$/,
         'a -32019 error with the queue position');
    my ($got, $waits) = fetch('k1', $slot);
    is($got->{status}, 200, "repeating the request returns the block (after $waits more 429s)");
    my $direct = http_post($Archive, '/', get_block(7, $slot))->{body};
    is(sans_id($got->{body}), sans_id($direct), 'byte-identical to what a node returns');
    is(archive_calls() - $before, 2, 'one retrieval (and the direct check)');
    my $state = decode_json(http_get(server_port(), '/solgate/state')->{body})->{networks}[0]{blocks};
    my ($k1) = grep { $_->{key} eq 'k1' } @{ $state->{keys} };
    is($k1->{allowance_used}, 1, 'counted in the key\'s allowance (admin state)');
}

# --- three keys, one retrieval; then a free key from the cache --------------------
{
    my $s = old_slot($slot - 50);
    my $before = archive_calls();
    my @first = map { ask($_, $s) } qw(k1 k2 k3);
    is(join(',', map { $_->{status} } @first), '429,429,429', 'three keys queue the same block');
    my @pos = map { /"queuePosition":(\d+)/ ? $1 : '?' } map { $_->{body} } @first;
    is_deeply(\@pos, [1, 1, 1], 'all at position 1: one entry');
    my @got = map { (fetch($_, $s))[0] } qw(k1 k2 k3);
    is(join(',', map { $_->{status} } @got), '200,200,200', 'all three get it');
    is(archive_calls() - $before, 1, 'retrieved once');
    my $free = ask('free', $s);
    is($free->{status}, 200, 'a free key then gets it from the cache');
    like($free->{body}, qr/"result":\{"blockHeight"/, 'the block');
    is(archive_calls() - $before, 1, 'without another retrieval');
    like(metric(qr/^solgate_blocks_allowance_counted_total\{network="mainnet",plan="arch"\} (\d+)$/m) // '',
         qr/^4$/, 'allowance counted once per waiting key');
}

# --- the monthly allowance, kept across kill -9 ------------------------------------------
my @tiny = map { old_slot($slot - 200 - 10 * $_) } 0 .. 2;
{
    for my $s (@tiny[0, 1]) {
        my ($res) = fetch('tiny', $s);
        is($res->{status}, 200, "tiny plan: block $s retrieved");
    }
    my $res = ask('tiny', $tiny[2]);
    is($res->{status}, 429, 'the third retrieval is refused');
    like($res->{body}, qr/"data":\{"slot":$tiny[2],"retryAfterSecs":60,"reason":"allowance"\}/,
         'reason allowance');
    is(ask('tiny', $tiny[0])->{status}, 200, 'cached blocks are still served');

    my $master = Test::Nginx::Util::nginx_pid();
    my @all = ($master, split ' ', `pgrep -P $master`);
    kill 'KILL', @all;
    sleep 0.2;
    nginx_start($HttpConfig, $Config, no_root_location => 1);
    wait_window();
    $res = ask('tiny', $tiny[2]);
    like($res->{body}, qr/"reason":"allowance"/, 'after kill -9 and a restart the count is kept');
}

# --- @solana/kit, honouring Retry-After ---------------------------------------------------
SKIP: {
    my $kit = File::Spec->catfile(Test::Nginx::Util::repo_root(), 'tools', 'kit-client');
    skip 'node or tools/kit-client/node_modules missing', 2
        unless -d "$kit/node_modules/\@solana/kit" && `node --version 2>/dev/null` =~ /^v/;
    my $from = $slot - 5000;
    my $out = `node $kit/fetch-blocks.mjs --url http://127.0.0.1:@{[server_port()]}/ --api-key kit --from $from --count 50 --timeout-s 120 2>&1`;
    is($?, 0, 'the @solana/kit client fetched 50 historical blocks') or diag($out);
    my ($line) = $out =~ /^(\{.*\})\s*$/m;
    my $summary = $line ? decode_json($line) : {};
    is(($summary->{blocks} // 0) + ($summary->{skipped} // 0), 50,
       "all 50 answered ($summary->{blocks} blocks, $summary->{skipped} skipped, $summary->{retries} retries)");
}

nginx_stop();
