# Cube Runner's cache lock (cache_lock_timeout): concurrent misses for one
# block make one ledger call and are all answered from it; a getBlock
# asked again right after the first answer is a cache hit; a wait is
# bounded; a client that leaves while it waits costs nothing.
#
# Two workers share the lock through the blocks zone. The node answers
# every getBlock 400 ms late, so requests sent together overlap.

use Test::Nginx::Socket 'no_plan';
use Solgate::Sim;
use Solgate::TestConf;
use Solgate::Gateway;
use Solgate::LongTerm;
use File::Path ();
use File::Spec;
use IO::Socket::INET;
use POSIX ();
use Time::HiRes ();

our $Sim = 19886;

my $tip = int((Time::HiRes::time() * 1000 - 1704067200000) / 400);
sim_start(port => $Sim, args => ['--quiet', '--first-available-block', $tip - 3000,
                                 '--getblock-latency-ms', 400]);

our $Dir = File::Spec->catdir(Test::Nginx::Util::t_dir(), 'blocks-lock-tmp');
File::Path::remove_tree($Dir);
File::Path::make_path($Dir);
END { File::Path::remove_tree($Dir) if $Dir }

sub http_conf {
    my ($lock) = @_;
    my $lock_line = defined $lock ? "cache_lock_timeout $lock;" : '';
    return <<"_EOC_";
    solgate_network mainnet {
        cluster mainnet-beta;
        upstream node http://127.0.0.1:$Sim;
    }
    solgate_blocks mainnet {
        region us-east;
        cache $Dir/cache;
        state $Dir/state;
        api_key \$http_x_api_key;
        plan operator;
        $lock_line
    }
_EOC_
}

our $Config = solgate_locations('mainnet')
  . "    location /solgate/ { solgate_admin; }\n"
  . "    location = /metrics { solgate_metrics; }\n";
our $Bad = "[error]\n[crit]\n[alert]\n[emerg]\n";

sub calls { sim_client_calls($Sim, 'getBlock') }
sub blocks_state { network_state()->{blocks} }
sub served { blocks_state()->{served}{$_[0]} }

# A finalized slot below $below that the node did not skip.
sub block_slot {
    my ($below) = @_;
    my $s = network_state()->{tips}{finalized} - $below;
    $s-- while http_post($Sim, '/', get_block_call(0, $s))->{body} =~ /-32007/;
    return $s;
}

# All answers are 200s of the same block, each with its own id.
sub same_block {
    my ($what, @got) = @_;
    my @bad = grep { $_->[0] != 200 || $_->[1] !~ /"result":\{"blockHeight"/ } @got;
    is(scalar @bad, 0, "$what: every request got the block")
        or diag(join "\n", map { "$_->[0] " . substr($_->[1], 0, 200) } @bad);
    my %bodies = map { sans_id($_->[1]) => 1 } @got;
    is(scalar keys %bodies, 1, "$what: the same bytes but for the id");
}

# $n clients ask at once for a block $below slots under the finalized tip:
# how many calls reached the node; every client must get the block.
sub node_calls_for_crowd {
    my ($below, $key, $n) = @_;
    my $slot = block_slot($below);
    my $before = calls();
    same_block("$n at once", block_asks_at_once($Dir, map { [server_port(), $key, $slot] } 1 .. $n));
    return calls() - $before;
}

master_on();
workers(2);
no_shuffle();
no_root_location();

add_block_preprocessor(sub {
    my $block = shift;
    $block->set_value(http_config => http_conf()) unless defined $block->http_config;
    $block->set_value(config => $Config) unless defined $block->config;
    $block->set_value(wait_for => ['the ledger window and the finalized tip are known',
        sub { defined(blocks_state()->{first_available_block})
              && network_state()->{tips}{finalized} > 0 }, 10])
        unless defined $block->wait_for;
    $block->set_value(no_error_log => $Bad) unless defined $block->no_error_log;
});

run_tests();

__DATA__

=== TEST 1: eight concurrent misses for one block make one ledger call, and all eight get it
--- request eval
[step {
     is(node_calls_for_crowd(40, 'k1', 8), 1, 'the node was asked once');
     my $state = blocks_state();
     is($state->{served}{ledger}, 1, 'one answer came from the ledger');
     is($state->{served}{cache}, 7, 'seven from the cache');
     is($state->{lock_waits}, 7, 'seven waited for it');
     is($state->{lock_timeouts}, 0, 'no wait ran out');
 },
 "GET /metrics"]
--- response_body_like
solgate_blocks_lock_waits_total\{network="mainnet"\} 7\n



=== TEST 2: a getBlock asked again right after the first answer is a cache hit
--- request eval
[step {
     $main::Slot = block_slot(500);
     $main::Before = calls();
 },
 deferred { "POST /\n" . get_block_call(1, $main::Slot) },
 deferred { "POST /\n" . get_block_call(2, $main::Slot) },
 step {
     is(calls() - $main::Before, 1, 'the node was asked once');
     is(served('cache'), 1, 'the second answer came from the cache');
 }]
--- more_headers
X-Api-Key: k2
--- response_body_like eval
[qr/"result":\{"blockHeight".*"id":1\}\s*$/s, qr/"result":\{"blockHeight".*"id":2\}\s*$/s]



=== TEST 3: a wait is bounded by cache_lock_timeout: then each goes to the ledger itself
--- http_config eval
http_conf('100ms')
--- request eval
[step {
     is(node_calls_for_crowd(1000, 'k3', 3), 3, 'the node was asked by each (its answers take 400 ms)');
     is(blocks_state()->{lock_timeouts}, 2, 'two waits ran out');
 }]



=== TEST 4: cache_lock_timeout 0 turns the lock off
--- http_config eval
http_conf('0')
--- request eval
[step {
     is(node_calls_for_crowd(1500, 'k4', 3), 3, 'the node was asked by each');
     is(blocks_state()->{lock_waits}, 0, 'none waited');
 }]



=== TEST 5: a client that leaves while it waits: the fetch goes on, the worker is fine
--- request eval
[step {
     $main::Slot = block_slot(2000);
     $main::Before = calls();
     my $pid = fork() // die "fork: $!";
     if ($pid == 0) {
         block_ask(server_port(), 'k5', $main::Slot, 1);
         POSIX::_exit(0);
     }
     wait_until(sub { calls() > $main::Before }, 5, 'the first request reached the node');
     my $sock = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => server_port())
         or die "connect: $!";
     my $body = get_block_call(2, $main::Slot);
     print $sock "POST / HTTP/1.1\r\nHost: localhost\r\nX-Api-Key: k5\r\n"
         . "Content-Type: application/json\r\nContent-Length: " . length($body)
         . "\r\n\r\n$body";
     wait_until(sub { blocks_state()->{lock_waits} == 1 }, 5, 'the second waits');
     close $sock;
     waitpid($pid, 0);
     is(calls() - $main::Before, 1, 'the node was asked once');
 },
 deferred { "POST /\n" . get_block_call(3, $main::Slot) },
 step { is(calls() - $main::Before, 1, 'and the block is in the cache') }]
--- more_headers
X-Api-Key: k5
--- response_body_like
"result":\{"blockHeight".*"id":3\}
