# Cube Runner, part 2: blocks no cache, ledger or region holds come from
# long-term storage through the plan's fair queue, within the key's monthly
# allowance.  Long-term storage is a simulated archive node (every slot
# since genesis, 100 ms per getBlock); the ledger keeps 3000 slots.  The
# key ledger lives in a state directory outside the servroot: it is what
# a restart, even after kill -9, keeps.

use Test::Nginx::Socket 'no_plan';
use Digest::SHA ();
use Solgate::Sim;
use Solgate::TestConf;
use Solgate::Gateway;
use Solgate::LongTerm;
use JSON::PP;
use File::Path ();
use File::Spec;
use Time::HiRes ();
use POSIX ();

our $Archive = 19891;
our $Ledger = 19892;

my $tip = int((Time::HiRes::time() * 1000 - 1704067200000) / 400);
our $First = $tip - 3000;
sim_start(port => $Archive, args => ['--quiet', '--archive', '--getblock-latency-ms', 100]);
sim_start(port => $Ledger, args => ['--quiet', '--first-available-block', $First]);

our $Dir = File::Spec->catdir(Test::Nginx::Util::t_dir(), 'long-term-tmp');
File::Path::remove_tree($Dir);
File::Path::make_path($Dir);
END { File::Path::remove_tree($Dir) if $Dir }

our $HttpConfig = <<"_EOC_";
    map \$http_x_api_key \$solgate_plan {
        default ""; k1 arch; k2 arch; k3 arch; kit arch; tiny tinyarch; burst tinyarch; free free;
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
our $Bad = "[error]\n[crit]\n[alert]\n[emerg]\n";

sub block_req { "POST /\n" . get_block_call(@_) }
sub key { "X-Api-Key: $_[0]" }
sub ask { my ($key, $slot, $id) = @_; block_ask(server_port(), $key, $slot, $id) }
sub archive_calls { sim_client_calls($Archive, 'getBlock') }
sub blocks_state { network_state()->{blocks} }

# Asks like a client that honours Retry-After (faster: every 200 ms).
sub fetch { my ($key, $slot, $secs) = @_; block_fetch(server_port(), $key, $slot, $secs) }

# a slot below the ledger's window that was not skipped
sub old_slot { unskipped_slot($Archive, $_[0]) }

# until the ledger's window is known, getBlock goes to the ledger
our $WindowKnown = ["the ledger's window is known",
                    sub { defined blocks_state()->{first_available_block} }, 5];

our $Slot = old_slot($First - 100000);
our $Shared = old_slot($Slot - 50);
our @Tiny = map { old_slot($Slot - 200 - 10 * $_) } 0 .. 2;
our @Burst = map { old_slot($Slot - 600 - 10 * $_) } 0 .. 10;   # the last asked alone

# The answers to requests made at once, one process each: [status, body].
sub ask_at_once { my ($key, @slots) = @_;
    block_asks_at_once($Dir, map { [server_port(), $key, $_] } @slots) }

add_block_preprocessor(sub {
    my $block = shift;
    $block->set_value(http_config => $HttpConfig) unless defined $block->http_config;
    $block->set_value(config => $Config) unless defined $block->config;
    $block->set_value(wait_for => $WindowKnown) unless defined $block->wait_for;
    $block->set_value(no_error_log => $Bad) unless defined $block->no_error_log;
});

no_root_location();
run_tests();

__DATA__

=== TEST 1: queued, then served byte-identical; three keys waiting share one retrieval
An old block on an archive plan is HTTP 429 with a -32019 error and its
queue position; repeating the request returns it.  Then three keys queue
another block: one entry, retrieved once, and a free key gets it from the
cache.  The allowance is counted once per waiting key (1 + 3).
--- request eval
[step { $main::Before = archive_calls() },
 block_req(7, $Slot),
 step {
     my ($got, $waits) = fetch('k1', $Slot);
     is($got->{status}, 200, "repeating the request returns the block (after $waits more 429s)");
     my $direct = http_post($Archive, '/', get_block_call(7, $Slot))->{body};
     is(sans_id($got->{body}), sans_id($direct), 'byte-identical to what a node returns');
     is(archive_calls() - $main::Before, 2, 'one retrieval (and the direct check)');
     my ($k1) = grep { $_->{key_sha256} eq substr(Digest::SHA::sha256_hex('k1'), 0, 16) } @{ blocks_state()->{keys} };
     is($k1->{allowance_used}, 1, "counted in the key's allowance (admin state)");
     $main::Before = archive_calls();
 },
 (block_req(1, $Shared)) x 3,
 step {
     my @got = map { (fetch($_, $Shared))[0] } qw(k1 k2 k3);
     is(join(',', map { $_->{status} } @got), '200,200,200', 'all three get it');
     is(archive_calls() - $main::Before, 1, 'retrieved once');
 },
 block_req(1, $Shared)]
--- more_headers eval
[key('k1'), key('k1'), key('k2'), key('k3'), key('free')]
--- error_code eval
[429, 429, 429, 429, 200]
--- response_headers_like eval
['Retry-After: [1-9]|[1-5][0-9]|60']
--- response_body_like eval
[qr/^\{"jsonrpc":"2.0","error":\{"code":-32019,"message":"Block $Slot is being retrieved from long-term storage; retry in \d+ seconds","data":\{"slot":$Slot,"retryAfterSecs":\d+,"queuePosition":1\}\},"id":7\}$/,
 undef, undef, undef,
 qr/"result":\{"blockHeight"/]
--- check
my @pos = map { $_->{body} =~ /"queuePosition":(\d+)/ ? $1 : '?' } @_[1 .. 3];
is_deeply(\@pos, [1, 1, 1], 'all at position 1: one entry');
is(archive_calls() - $main::Before, 1, 'without another retrieval');
like(metric(qr/^solgate_blocks_allowance_counted_total\{network="mainnet",plan="arch"\} (\d+)$/m) // '',
     qr/^4$/, 'allowance counted once per waiting key');



=== TEST 2: the monthly allowance, kept across kill -9
A plan with an allowance of 2: the third retrieval is refused, cached
blocks are still served; after kill -9 of nginx and a restart the count
is kept.
--- request eval
[step {
     for my $s (@Tiny[0, 1]) {
         my ($res) = fetch('tiny', $s);
         is($res->{status}, 200, "tiny plan: block $s retrieved");
     }
 },
 block_req(1, $Tiny[2]),
 block_req(1, $Tiny[0]),
 step {
     nginx_restart(kill => 1);
     wait_until($WindowKnown->[1], 5, $WindowKnown->[0]);
 },
 block_req(1, $Tiny[2])]
--- more_headers
X-Api-Key: tiny
--- error_code eval
[429, 200, undef]
--- response_body_like eval
[qr/"data":\{"slot":$Tiny[2],"retryAfterSecs":60,"reason":"allowance"\}/,
 undef,
 qr/"reason":"allowance"/]



=== TEST 3: @solana/kit, honouring Retry-After, fetches 50 historical blocks
--- check
SKIP: {
    my $kit = File::Spec->catfile(Test::Nginx::Util::repo_root(), 'tools', 'kit-client');
    skip 'node or tools/kit-client/node_modules missing', 2
        unless -d "$kit/node_modules/\@solana/kit" && `node --version 2>/dev/null` =~ /^v/;
    my $from = $Slot - 5000;
    my $out = `node $kit/fetch-blocks.mjs --url http://127.0.0.1:@{[server_port()]}/ --api-key kit --from $from --count 50 --timeout-s 120 2>&1`;
    is($?, 0, 'the @solana/kit client fetched 50 historical blocks') or diag($out);
    my ($line) = $out =~ /^(\{.*\})\s*$/m;
    my $summary = $line ? decode_json($line) : {};
    is(($summary->{blocks} // 0) + ($summary->{skipped} // 0), 50,
       "all 50 answered ($summary->{blocks} blocks, $summary->{skipped} skipped, $summary->{retries} retries)");
}



=== TEST 4: ten requests at once for different old blocks from a key with an allowance of 2: two retrievals, never more
--- request eval
[step {
     $main::Before = archive_calls();
     my @got = ask_at_once('burst', @main::Burst[0 .. 9]);
     my @queued = grep { $_->[0] == 429 && $_->[1] =~ /"queuePosition"/ } @got;
     my @spent = grep { $_->[0] == 429 && $_->[1] =~ /"reason":"allowance"/ } @got;
     is(scalar @queued, 2, 'two blocks queued');
     is(scalar @spent, 8, 'the other eight refused for the allowance at once');
     my @mine = map { $main::Burst[$_] } grep { $got[$_][1] =~ /"queuePosition"/ } 0 .. $#got;
     for my $s (@mine) {
         my ($res) = fetch('burst', $s);
         is($res->{status}, 200, "block $s retrieved");
     }
     is(archive_calls() - $main::Before, 2, 'long-term storage was asked twice');
     my ($k) = grep { $_->{key_sha256} eq substr(Digest::SHA::sha256_hex('burst'), 0, 16) } @{ blocks_state()->{keys} };
     is($k->{allowance_used}, 2, 'allowance_used 2 (admin state)');
 },
 block_req(11, $Burst[10])]
--- more_headers
X-Api-Key: burst
--- error_code: 429
--- response_body_like: "reason":"allowance"



=== TEST 5: long_term_storage names an upstream {} block: blocks come from the block's server, the state says which
--- http_config eval
my $c = $HttpConfig;
$c =~ s{long_term_storage http://127\.0\.0\.1:$Archive/;}{long_term_storage http://archive_pool/;};
"    upstream archive_pool { server 127.0.0.1:1 down; server 127.0.0.1:$Archive; }\n" . $c
--- request eval
[step {
     my $slot = old_slot($Slot - 2000);
     my $before = archive_calls();
     my ($got) = fetch('k1', $slot);
     is($got->{status}, 200, 'the old block is served');
     cmp_ok(archive_calls() - $before, '>=', 1, 'retrieved from the archive, the block\'s server');
     is_deeply(blocks_state()->{long_term_storage}, ["http://archive_pool/ (server 127.0.0.1:$Archive)"],
               'the state names the URL and the server');
 }]
