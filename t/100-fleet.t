# Fleet mode: two nginx gateways as two hosts of one fleet over one
# redis-server (solgate_shared_state) and the same simulated nodes. Each
# upstream is polled by one host, both serve the same tips, getSlot never
# goes back across hosts, and an operator cordon made on one host holds on
# the other and outlives a restart. Without Redis each host goes on alone.
#
# Host A is the nginx of each block (it restarts between blocks); host B
# is a second nginx that runs for the whole file.

use Test::Nginx::Socket 'no_plan';
use Solgate::Sim;
use Solgate::TestConf;
use Solgate::Gateway;
use Solgate::Redis;
use Solgate::LongTerm;
use Digest::SHA ();
use File::Path ();
use File::Spec;
use Time::HiRes ();
use POSIX ();

our @Ports = (19961, 19962);
our $Archive = 19963;
our $RedisPort = 19969;
our $BPort = 19965;
# the nodes keep 3000 slots; the archive has every one since genesis
my $tip = int((Time::HiRes::time() * 1000 - 1704067200000) / 400);
our $First = $tip - 3000;
sim_start(port => $_, args => ['--quiet', '--first-available-block', $First]) for @Ports;
sim_start(port => $Archive, args => ['--quiet', '--archive', '--getblock-latency-ms', 100]);

# with the append-only file, as the README asks of a fleet's Redis
our @RedisArgs = ('--appendonly', 'yes', '--appendfsync', 'everysec');
# in memory when the machine has /dev/shm: the other suites' disk writes
# can hold an fsync of the append-only file (and so redis-server) for
# seconds, past the hosts' timeout; kill -9 is what TEST 7 survives
our $RedisDir = -d '/dev/shm' && -w '/dev/shm'
    ? "/dev/shm/solgate-t100-redis-$$"
    : File::Spec->catdir(Test::Nginx::Util::t_dir(), 'redis-tmp');
our $Dir = File::Spec->catdir(Test::Nginx::Util::t_dir(), 'fleet-tmp');
File::Path::remove_tree($RedisDir, $Dir);
File::Path::make_path($Dir);
sub start_redis { redis_start(port => $RedisPort, dir => $RedisDir, args => [@RedisArgs]) }
start_redis();
END { File::Path::remove_tree($RedisDir, $Dir) if $RedisDir }

# Both hosts serve one region, us-east: each its own cache and key ledger,
# and the same peer list, itself included (hosts of a region serve each
# other's cache; the same file fits every host).
our $Token = 'fleet-region-token-0123456789';
# timeout=1s, the longest allowed: on a loaded 2-core CI machine a round
# trip has taken over 200 ms, which drops the connection and logs the
# "unavailable (" that TEST 5 and 6 assert never happens; TEST 9 stops
# redis-server, which refuses at once, whatever the timeout
sub host_conf {
    my ($id) = @_;
    my $a_port = server_port();
    return "    solgate_shared_state redis://127.0.0.1:$RedisPort prefix=t100: timeout=1s;\n"
         . "    solgate_host_id $id;\n"
         . network_conf('mainnet', upstreams => sim_upstreams(@Ports),
                        settings => 'max_slot_lag 0;')
         . <<"_EOC_";
    map \$http_x_api_key \$solgate_plan { default ""; k-arch arch; k-two two; k-burst two; k-slow slow; k-one one; k-fail arch; }
    solgate_blocks mainnet {
        region us-east;
        cache $Dir/$id/cache;
        state $Dir/$id/state;
        peer host-a http://127.0.0.1:$a_port/ copy=off;
        peer host-b http://127.0.0.1:$BPort/ copy=off;
        peer_token $Token;
        long_term_storage http://127.0.0.1:$Archive/;
        api_key \$http_x_api_key;
        plan \$solgate_plan;
        plan_define arch tier=archive getblock_rate=0 retrieval_rate=20r/s queue_limit=100 monthly_allowance=1000;
        plan_define two tier=archive getblock_rate=0 retrieval_rate=20r/s queue_limit=10 monthly_allowance=2;
        plan_define slow tier=free getblock_rate=2r/s;
        plan_define one tier=archive getblock_rate=0 retrieval_rate=1r/s queue_limit=20 monthly_allowance=1000;
    }
_EOC_
}
our $Config = solgate_locations('mainnet')
  . "    location /solgate/ { solgate_admin; }\n"
  . "    location = /metrics { solgate_metrics; }\n";
our $Bad = "[alert]\n[crit]\n[emerg]\n";

sub on_b { my ($body) = @_; http_post($BPort, '/', $body) }
sub state_on { my ($id, $port) = @_; upstream_state($id, 'mainnet', $port) || {} }
sub polls_on { my ($id, $port) = @_;
    my $p = state_on($id, $port)->{polls} || {};
    my $n = 0; $n += $_ for values %$p; return $n }
sub both_polled { sub {
    for my $port (undef, $BPort) {
        for my $id (qw(sim-a sim-b)) {
            return 0 unless (state_on($id, $port)->{processed_slot} || 0) > 0;
        }
    }
    return 1 } }

sub archive_calls { sim_client_calls($Archive, 'getBlock') }
# Cube Runner is ready on both hosts: the ledger's window known, and the
# fleet's store connected (until then long-term requests pause)
sub windows_known { sub {
    for my $port (undef, $BPort) {
        return 0 unless defined((network_state('mainnet', $port)->{blocks} || {})->{first_available_block});
        return 0 unless metrics_text($port) =~ /^solgate_shared_state_up\{network="mainnet"\} 1$/m;
    }
    return 1 } }
# a key's allowance used as a host's admin state shows it (its copy)
sub host_allowance {
    my ($port, $key) = @_;
    my $sha = substr(Digest::SHA::sha256_hex($key), 0, 16);
    my ($k) = grep { $_->{key_sha256} eq $sha } @{ (network_state('mainnet', $port)->{blocks} || {})->{keys} || [] };
    return $k ? $k->{allowance_used} // 0 : 0;
}
# a key's retrievals this month as the region counted them, in Redis
sub region_used {
    my ($key) = @_;
    my $month = POSIX::strftime('%Y-%m', gmtime);
    return redis_cmd($RedisPort, 'HGET', "t100:{mainnet:us-east}:allow:$month", $key) // 0;
}
our $Cached;   # a block host A's cache holds (TEST 5)
# the long-term retrievals both hosts' metrics count, plan arch
sub retrievals_counted {
    my $n = 0;
    for my $port (server_port(), $BPort) {
        $n += metric(qr/^solgate_blocks_long_term_retrievals_total\{network="mainnet",plan="arch"\} (\d+)$/m, $port) // 0;
    }
    return $n;
}

add_block_preprocessor(sub {
    my $block = shift;
    $block->set_value(http_config => host_conf('host-a')) unless defined $block->http_config;
    $block->set_value(config => $Config) unless defined $block->config;
    $block->set_value(no_error_log => $Bad)
        unless defined $block->no_error_log || defined $block->must_die;
});

no_shuffle();
no_root_location();
gateway_start('b', host_conf('host-b'), $Config, port => $BPort, no_root_location => 1);
run_tests();

__DATA__

=== TEST 1: each upstream is polled by one host of the fleet, and both hosts know every upstream's slots
--- wait_for eval
['both hosts know both upstreams', main::both_polled(), 8]
--- request eval
[step {
     # once the fleet's leases settled: over the next polls, one host polls
     # each upstream
     # host A has just started: its first ticks poll before it knows the
     # fleet's leases
     my $total = sub { my $n = 0; $n += main::polls_on($_) + main::polls_on($_, $main::BPort) for qw(sim-a sim-b); $n };
     my $start = $total->();
     wait_until(sub { $total->() >= $start + 40 }, 10, 'the leases settle');
     my %before = map { my $id = $_; ($id => [main::polls_on($id), main::polls_on($id, $main::BPort)]) } qw(sim-a sim-b);
     wait_until(sub {
         for my $id (qw(sim-a sim-b)) {
             my $d = main::polls_on($id) - $before{$id}[0] + main::polls_on($id, $main::BPort) - $before{$id}[1];
             return 0 if $d < 12;
         }
         1 }, 10, 'twelve more polls of each upstream');
     for my $id (qw(sim-a sim-b)) {
         my @d = (main::polls_on($id) - $before{$id}[0], main::polls_on($id, $main::BPort) - $before{$id}[1]);
         my ($most, $least) = sort { $b <=> $a } @d;
         cmp_ok($least, '==', 0, "$id is polled by one host (host A $d[0], host B $d[1] polls)");
     }
     my $pa = network_state('mainnet')->{tips}{processed};
     my $pb = network_state('mainnet', $main::BPort)->{tips}{processed};
     cmp_ok(abs($pa - $pb), '<=', 3, "both hosts serve the same processed tip ($pa, $pb)");
     # each host's state names the host that polls an upstream, when not itself
     for my $id (qw(sim-a sim-b)) {
         my @by = map { main::state_on($id, $_)->{polled_by} } (undef, $main::BPort);
         ok((!defined $by[0] && ($by[1] // '') eq 'host-a') || (!defined $by[1] && ($by[0] // '') eq 'host-b'),
            "$id: one host polls it, the other names it (" . join(', ', map { $_ // 'null' } @by) . ')');
     }
     is(network_state('mainnet')->{shared_state}, 'up', 'the state says the shared state is up');
 }]
--- check
my $keys = redis_cmd($RedisPort, 'KEYS', 't100:*');
ok((grep { $_ eq 't100:{mainnet}:views' } @$keys), 'the views are in Redis under the network hash tag')
    or diag(join ' ', @$keys);
cmp_ok(metric(qr/^solgate_shared_state_round_trip_seconds_count\{network="mainnet"\} (\d+)$/m) // 0, '>', 0,
       'the round trips to Redis are measured');



=== TEST 2: getSlot (processed) alternating between the two hosts never goes backwards
--- wait_for eval
['both hosts know both upstreams', main::both_polled(), 8]
--- request eval
[step {
     my ($last, $back) = (0, 0);
     for my $i (1 .. 200) {
         my $call = rpc($i, 'getSlot', '[{"commitment":"processed"}]');
         my $res = $i % 2 ? http_post(server_port(), '/', $call) : main::on_b($call);
         my ($slot) = ($res->{body} // '') =~ /"result":(\d+)/;
         if (!defined $slot) { $back++; diag("no slot: $res->{body}"); next }
         diag("$i: $slot after $last") if $slot < $last && $back < 6;
         $back++ if $slot < $last;
         $last = $slot if $slot > $last;
     }
     is($back, 0, '200 answers alternating between hosts, none lower than one before');
 }]



=== TEST 3: an operator cordon made on host A keeps host B's clients off that node
--- wait_for eval
['both hosts know both upstreams', main::both_polled(), 8]
--- request eval
["POST /solgate/cordon?upstream=sim-a&reason=maintenance",
 step {
     wait_until(sub { (main::state_on('sim-a', $main::BPort)->{cordon} || {})->{by} }, 5,
                'host B sees the cordon');
     my $c = main::state_on('sim-a', $main::BPort)->{cordon};
     is($c->{by}, 'operator', 'cordoned by the operator on host B');
     is($c->{reason}, 'maintenance', 'with the reason given on host A');
     sim_reset($main::Ports[0]);
     main::on_b(rpc($_, 'getBalance', '["83astBRguLMdt2h5U1Tpdq5tjFoJ6noeGwaY3mDLVcri"]')) for 1 .. 8;
     is(sim_client_calls($main::Ports[0]), 0, 'host B sends no client call to the cordoned node');
 }]
--- error_code: 200



=== TEST 4: the cordon survives a restart of host A, and an uncordon on host B reaches host A
--- wait_for eval
['host A knows the cordon again, after its restart', sub {
     (main::state_on('sim-a')->{cordon} || {})->{by} }, 5]
--- request eval
[step {
     is(main::state_on('sim-a')->{cordon}{reason}, 'maintenance', 'host A took the cordon from the fleet');
     my $res = http_post($main::BPort, '/solgate/uncordon?upstream=sim-a', '');
     is($res->{status}, 200, 'uncordoned on host B');
     wait_until(sub { !main::state_on('sim-a')->{cordon} }, 5, 'host A sees the uncordon');
     ok(!main::state_on('sim-a')->{cordon}, 'host A uncordoned sim-a');
 }]
--- no_error_log
[alert]
[crit]



=== TEST 5: a block asked for on both hosts is retrieved from long-term storage once
--- wait_for eval
['both hosts know their ledger window', main::windows_known(), 8]
--- request eval
[step {
     my $s = $main::Cached = unskipped_slot($main::Archive, $main::First - 100000);
     my $before = main::archive_calls();
     my $counted = main::retrievals_counted();
     is(block_ask(server_port(), 'k-arch', $s)->{status}, 429, 'queued on host A');
     is(block_ask($main::BPort, 'k-arch', $s)->{status}, 429, 'queued on host B');
     my ($ra) = block_fetch(server_port(), 'k-arch', $s, 15);
     my ($rb) = block_fetch($main::BPort, 'k-arch', $s, 20);
     is($ra->{status}, 200, 'host A serves it');
     is($rb->{status}, 200, 'host B serves it');
     is($rb->{body}, $ra->{body}, 'the same bytes on both');
     is(main::archive_calls() - $before, 1, 'long-term storage was asked once');
     is(main::region_used('k-arch'), 1, "the region counted it once for the key");
     is(main::retrievals_counted() - $counted, 1,
        'the hosts\' solgate_blocks_long_term_retrievals_total add up to one');
 }]



--- no_error_log
[alert]
[crit]
[emerg]
unavailable (



=== TEST 6: an allowance of 2 is two retrievals across both hosts, with ten requests at once on both
--- wait_for eval
['both hosts know their ledger window', main::windows_known(), 8]
--- request eval
[step {
     my @slots = map { unskipped_slot($main::Archive, $main::First - 200000 - 10 * $_) } 0 .. 9;
     my @asks = map { [$_ % 2 ? $main::BPort : server_port(), 'k-burst', $slots[$_]] } 0 .. 9;
     my $next = unskipped_slot($main::Archive, $main::First - 250000);
     my $before = main::archive_calls();
     my @got = block_asks_at_once($main::Dir, @asks);
     my @queued = grep { $got[$_][0] == 429 && $got[$_][1] =~ /"queuePosition"/ } 0 .. 9;
     cmp_ok(scalar @queued, '>=', 2, scalar(@queued) . ' of the ten queued (each host admits what its count leaves)');
     my $served = 0;
     for my $i (@queued) {
         my ($res) = block_fetch($asks[$i][0], 'k-burst', $slots[$i], 15);
         $served++ if $res->{status} == 200;
         like($res->{body}, qr/"result"|"reason":"allowance"/, "block $slots[$i]: served or refused for the allowance");
     }
     is($served, 2, 'two blocks served');
     is(main::archive_calls() - $before, 2, 'long-term storage was asked twice, never more');
     is(main::region_used('k-burst'), 2, 'the region counted two');
     # each host's copy of the count catches up within seconds, whichever
     # host counted; then a third is refused at once
     for my $port (server_port(), $main::BPort) {
         wait_until(sub { main::host_allowance($port, 'k-burst') == 2 }, 5, "port $port knows the count");
         like(block_ask($port, 'k-burst', $next)->{body}, qr/"reason":"allowance"/, "a third on port $port is refused");
     }
     is(main::archive_calls() - $before, 2, 'still two retrievals');
 }]



--- no_error_log
[alert]
[crit]
[emerg]
unavailable (



=== TEST 7: the allowance count survives kill -9 of redis-server
--- wait_for eval
['both hosts know their ledger window', main::windows_known(), 8]
--- request eval
[step {
     my $s = unskipped_slot($main::Archive, $main::First - 300000);
     my ($res) = block_fetch(server_port(), 'k-two', $s, 15);
     is($res->{status}, 200, 'one block for k-two on host A');
     is(main::region_used('k-two'), 1, 'counted once');
     redis_kill($main::RedisPort);
     main::start_redis();
     is(main::region_used('k-two'), 1, 'the count is there after kill -9 and a restart');
     wait_until(sub { metrics_text($main::BPort) =~ /^solgate_shared_state_up\{network="mainnet"\} 1$/m }, 10,
                'host B is connected again');
     # host B never served k-two: its own copy says nothing is used, so
     # it queues two; the region has one left
     my @two = map { unskipped_slot($main::Archive, $main::First - 310000 - 10 * $_) } 0 .. 1;
     my $before = main::archive_calls();
     my $served = 0;
     for my $t (@two) {
         my ($r) = block_fetch($main::BPort, 'k-two', $t, 15);
         $served++ if $r->{status} == 200;
     }
     is($served, 1, 'host B serves one more, not two');
     is(main::archive_calls() - $before, 1, 'one more retrieval');
     is(main::region_used('k-two'), 2, 'the region counted two');
 }]



=== TEST 8: a key's getBlock rate is limited region-wide, not per host
2 calls a second with a burst of 2: over 3 s the region allows about 8
(each host alone would allow about 8, 16 for the two); the sync tick
(400 ms) lets each other host add at most a burst and a tick's worth.
--- wait_for eval
['both hosts know their ledger window', main::windows_known(), 8]
--- request eval
[step {
     my $slot = network_state('mainnet')->{tips}{finalized} - 20;
     my ($allowed, $limited) = (0, 0);
     my $end = Time::HiRes::time() + 3;
     my $i = 0;
     while (Time::HiRes::time() < $end) {
         my $port = $i++ % 2 ? $main::BPort : server_port();
         my $res = block_ask($port, 'k-slow', $slot);
         if ($res->{body} =~ /"reason":"rate_limit"/) { $limited++ } else { $allowed++ }
         Time::HiRes::sleep(0.05);
     }
     cmp_ok($limited, '>', 0, "some of the $i calls were limited");
     cmp_ok($allowed, '<=', 11, "$allowed allowed over 3 s across both hosts (the region's 8, with the sync's tolerance; per host it would be about 16)");
     cmp_ok($allowed, '>=', 6, 'and about the plan\'s rate');
     my $fields = redis_cmd($main::RedisPort, 'HKEYS', 't100:{mainnet:us-east}:rate');
     ok((grep { $_ eq 'k-slow' } @$fields), 'the bucket is in Redis under the region hash tag');
 }]



=== TEST 9: with Redis stopped both hosts keep answering on their own, and converge when it is back
--- wait_for eval
['both hosts know both upstreams', main::both_polled(), 8]
--- request eval
[step {
     wait_until(sub { metrics_text() =~ /^solgate_shared_state_up\{network="mainnet"\} 1$/m }, 5,
                'metric: up');
     redis_stop($main::RedisPort);
     # each host finds out on its own: both before either is asked
     wait_until(sub { !grep { metrics_text($_) !~ /^solgate_shared_state_up\{network="mainnet"\} 0$/m }
                               (server_port(), $main::BPort) }, 5,
                'metric: down on both hosts');
     for my $i (1 .. 6) {
         my $a = http_post(server_port(), '/', rpc($i, 'getSlot'));
         my $b = main::on_b(rpc($i, 'getBalance', '["83astBRguLMdt2h5U1Tpdq5tjFoJ6noeGwaY3mDLVcri"]'));
         like($a->{body}, qr/"result":\d+,"id":$i\}/, "host A answers getSlot $i");
         like($b->{body}, qr/"value":\d+\},"id":$i\}/, "host B answers getBalance $i");
     }
     # Cube Runner: what is cached is served; long-term storage pauses
     my $cached = block_ask(server_port(), 'k-arch', $main::Cached);
     like($cached->{body}, qr/"result"/, 'host A serves a cached block');
     my $old = unskipped_slot($main::Archive, $main::First - 400000);
     for my $port (server_port(), $main::BPort) {
         my $res = block_ask($port, 'k-arch', $old);
         is($res->{status}, 429, "a long-term request on port $port: 429");
         like($res->{body}, qr/"code":-32019.*"reason":"shared_state_unavailable"/, 'shared_state_unavailable');
         is($res->{headers}{'retry-after'}, 5, 'Retry-After: 5');
     }
     # each host polls every upstream itself now
     my %before = map { ($_ => main::polls_on($_)) } qw(sim-a sim-b);
     wait_until(sub { !grep { main::polls_on($_) < $before{$_} + 4 } qw(sim-a sim-b) }, 8,
                'host A polls both upstreams itself');
     main::start_redis();
     wait_until(sub { @{ redis_cmd($main::RedisPort, 'KEYS', 't100:{mainnet}:views') } }, 10,
                'the views are in Redis again');
     wait_until(sub { metrics_text() =~ /^solgate_shared_state_up\{network="mainnet"\} 1$/m }, 5,
                'metric: up again');
     ok(1, 'converged');
 }]
--- error_log eval
[qr/solgate: shared state redis:\/\/127\.0\.0\.1:19969\/0 unavailable/,
 qr/solgate: shared state redis:\/\/127\.0\.0\.1:19969\/0 connected again/]



=== TEST 10: nginx -t refuses a shared state it cannot use, naming the file and line
--- http_config
    solgate_shared_state redis://127.0.0.1 prefix=x:;
    solgate_network mainnet { cluster mainnet-beta; upstream a http://127.0.0.1:1; }
--- must_die
--- error_log eval
qr/\[emerg\] .*the URL needs HOST:PORT in .*nginx\.conf:\d+/



=== TEST 11: a host id with a space in it is refused
--- http_config
    solgate_host_id "gw 1";
    solgate_network mainnet { cluster mainnet-beta; upstream a http://127.0.0.1:1; }
--- must_die
--- error_log
a host id takes letters, digits and . _ -



=== TEST 12: the region's long-term queue is one fair queue, whichever host is asked
Plan one retrieves one block a second. While the first block is being
retrieved, one key asks host A and host B for four older blocks in turn:
the leader's queue holds all four and hands them out newest first, as one
host's queue would (two queues would each go their own way).
--- wait_for eval
['both hosts know their ledger window', main::windows_known(), 8]
--- request eval
[step {
     my ($first, @older) = map { unskipped_slot($main::Archive, $main::First - 500000 - 10 * $_) } 0 .. 4;
     @older = sort { $a <=> $b } @older;
     my $lead;
     wait_until(sub { $lead = redis_cmd($main::RedisPort, 'GET', 't100:{mainnet:us-east}:lead:one') }, 5,
                'a host leads plan one');
     my $leader = $lead =~ m{^host-a#} ? server_port() : $main::BPort;
     my $served = sub { sim_stats($main::Archive)->{blocks_served} || [] };
     is(block_ask($leader, 'k-one', $first)->{status}, 429, 'the first block queued on the leader');
     wait_until(sub { my $b = $served->(); @$b && $b->[-1] == $first }, 5, 'and retrieved at once');
     my @hosts = (server_port(), $main::BPort);
     for my $i (0 .. 3) {
         is(block_ask($hosts[$i % 2], 'k-one', $older[$i])->{status}, 429, "block $older[$i] queued on port $hosts[$i % 2]");
     }
     for my $i (0 .. 3) {
         my ($res) = block_fetch($hosts[$i % 2], 'k-one', $older[$i], 15);
         is($res->{status}, 200, "block $older[$i] served");
     }
     my @order = @{ $served->() }[-5 .. -1];
     is_deeply(\@order, [$first, reverse @older], 'retrieved newest first across both hosts');
     is(main::region_used('k-one'), 5, 'each counted once for the key');
     is_deeply(redis_cmd($main::RedisPort, 'LRANGE', 't100:{mainnet:us-east}:intake:one', 0, -1), [],
               'nothing left in the leader\'s intake');
     # the receipts of the region: what each host served k-one, within
     # seconds
     my $received = sub {
         my ($key, $slot) = @_;
         my $hour = int(time() / 3600);
         return grep { redis_cmd($main::RedisPort, 'SISMEMBER', "t100:{mainnet:us-east}:rc:$_:$key", $slot) } $hour - 1, $hour;
     };
     wait_until(sub { !grep { !$received->('k-one', $_) } @older }, 5,
                'the region holds the receipts of the four blocks served on both hosts');
 }]



=== TEST 13: a retrieval that fails gives its count back to the region
--- wait_for eval
['both hosts know their ledger window', main::windows_known(), 8]
--- request eval
[step {
     my $s = unskipped_slot($main::Archive, $main::First - 600000);
     sim_fault($main::Archive, 'getblock_failure_rate', rate => 1);
     my $failures = sim_stats($main::Archive)->{getblock_failures};
     is(block_ask($main::BPort, 'k-fail', $s)->{status}, 429, 'queued');
     wait_until(sub { sim_stats($main::Archive)->{getblock_failures} > $failures }, 10,
                'long-term storage was asked and failed');
     wait_until(sub { !@{ redis_cmd($main::RedisPort, 'KEYS', "t100:{mainnet:us-east}:lt:*:$s*") } }, 5,
                'the claim is gone');
     is(main::region_used('k-fail'), 0, 'the count was given back');
     sim_fault($main::Archive, 'clear');
 }]
--- no_error_log
[alert]
[crit]
[emerg]



=== TEST 14: a node that is down is shown alike on both hosts: cordoned with the polling host's reason, no lag
The host that polls it publishes that its getSlot polls fail, and its
cordon with the reason and time; the other shows it the same way: slots
not current, no lag sample, the same cordon. Back, both say its slots are
current and lift the cordon.
--- wait_for eval
['both hosts know both upstreams', main::both_polled(), 8]
--- request eval
[step {
     sim_fault($main::Ports[1], 'http_status', code => 502);
     for my $port (undef, $main::BPort) {
         my $host = defined $port ? 'host B' : 'host A';
         wait_until(sub { my $s = main::state_on('sim-b', $port);
                          exists $s->{slots_current} && !$s->{slots_current} }, 8,
                    "$host: sim-b's slots are not current");
         # (the metrics are read after the state; the wait bounds a sync
         # that lands between the two reads)
         wait_until(sub { metrics_text($port) !~ /^solgate_upstream_slot_lag_slots\{network="mainnet",upstream="sim-b"\}/m }, 8,
                    "$host: no lag sample for sim-b");
         wait_until(sub { ((main::state_on('sim-b', $port)->{cordon} || {})->{reason} // '') =~ /getHealth failed: HTTP 502/ }, 8,
                    "$host: cordoned for what the polling host's poller found");
     }
     # (a host that cordoned it while it still polled it takes the
     # polling host's cordon at its next sync)
     my ($on_a, $on_b);
     wait_until(sub { ($on_a, $on_b) = map { main::state_on('sim-b', $_)->{cordon} || {} } (undef, $main::BPort);
                      defined $on_a->{since} && ($on_b->{since} // '') eq $on_a->{since} }, 8,
                'one cordon, one time on both hosts');
     unlike($on_b->{since}, qr/^1970/, 'a real time');
     sim_fault($main::Ports[1], 'clear');
     for my $port (undef, $main::BPort) {
         my $host = defined $port ? 'host B' : 'host A';
         wait_until(sub { my $s = main::state_on('sim-b', $port);
                          $s->{slots_current} && !$s->{cordon} }, 8,
                    "$host: back, sim-b's slots are current, and it is uncordoned");
     }
 }]



=== TEST 15: operator changes made on two hosts while Redis is down are ordered by when they were made
Host B uncordons, then host A cordons again: once Redis is back, both hosts
keep host A's later cordon, whichever host writes first.
--- wait_for eval
['both hosts know both upstreams', main::both_polled(), 8]
--- request eval
[step {
     my $reason = sub { my ($port) = @_; (main::state_on('sim-a', $port)->{cordon} || {})->{reason} // '' };
     is(http_post(server_port(), '/solgate/cordon?upstream=sim-a&reason=before', '')->{status}, 200,
        'cordoned on host A');
     wait_until(sub { $reason->($main::BPort) eq 'before' }, 5, 'host B has the cordon');
     redis_stop($main::RedisPort);
     wait_until(sub { !grep { metrics_text($_) !~ /^solgate_shared_state_up\{network="mainnet"\} 0$/m }
                               (server_port(), $main::BPort) }, 5,
                'both hosts know Redis is down');
     is(http_post($main::BPort, '/solgate/uncordon?upstream=sim-a', '')->{status}, 200,
        'uncordoned on host B');
     my $t = Time::HiRes::time();
     Time::HiRes::sleep(0.01) while Time::HiRes::time() - $t < 0.05;   # a later wall-clock ms
     is(http_post(server_port(), '/solgate/cordon?upstream=sim-a&reason=later-word', '')->{status}, 200,
        'cordoned again on host A, later');
     main::start_redis();
     for my $port (undef, $main::BPort) {
         wait_until(sub { $reason->($port) eq 'later-word' }, 10,
                    (defined $port ? 'host B' : 'host A') . ' keeps the later cordon');
     }
     is(http_post(server_port(), '/solgate/uncordon?upstream=sim-a', '')->{status}, 200, 'uncordoned');
     wait_until(sub { !main::state_on('sim-a', $main::BPort)->{cordon} }, 5, 'on both hosts');
 }]



=== TEST 16: after a Redis that hung resumes, no host takes the views it kept from before
redis-server is stopped (SIGSTOP) until each host polls on its own and
the nodes are some slots on, then resumed. The views it kept are of
before: a host that does not poll an upstream must not take that old
slot as the node's (a lag of it would put every upstream out of
rotation and /health at 503), but keep its own until the polling host
writes again.
--- wait_for eval
['both hosts know both upstreams', main::both_polled(), 8]
--- request eval
[step {
     my $up = sub { my ($port) = @_; metrics_text($port) =~ /^solgate_shared_state_up\{network="mainnet"\} 1$/m };
     wait_until(sub { $up->(undef) && $up->($main::BPort) }, 5, 'both hosts connected');
     # what each host takes from the other: the upstreams the other polls
     my @taken;   # [port (undef: host A), upstream, name of the pair]
     for my $port (undef, $main::BPort) {
         for my $id (qw(sim-a sim-b)) {
             push @taken, [$port, $id, "$id on " . ($port ? 'B' : 'A')]
                 if defined main::state_on($id, $port)->{polled_by};
         }
     }
     ok(@taken >= 1, 'a host takes views from the other');
     my $observed = sub { main::state_on($_[0][1], $_[0][0])->{observed_processed_slot} || 0 };
     my %before = map { ($_->[2] => $observed->($_)) } @taken;
     my ($pid) = redis_cmd($main::RedisPort, 'INFO', 'server') =~ /^process_id:(\d+)/m;
     # (kill with no pid would stop this test's own process group)
     die "no process_id in redis-server's INFO\n" unless $pid && $pid > 1;
     kill 'STOP', $pid;
     wait_until(sub { !grep { $up->($_) } (undef, $main::BPort) }, 8,
                'both hosts find the store down');
     # 8 slots on (400 ms each), each host by its own polls
     wait_until(sub { !grep { $observed->($_) < $before{$_->[2]} + 8 } @taken }, 10,
                'the nodes are 8 slots on');
     my %resumed = eval { map { ($_->[2] => $observed->($_)) } @taken };
     kill 'CONT', $pid;
     # every state read until each upstream is polled by one host again,
     # whichever won its lease, and the other takes its views, for five
     # reads in a row (400 ms apart: two seconds of views taken)
     my (@back, $settled);
     wait_until(sub {
         for my $t (@taken) {
             my $now = $observed->($t);
             push @back, "$t->[2]: $now after $resumed{$t->[2]}"
                 if $now + 3 < $resumed{$t->[2]};
         }
         my $one_polls = $up->(undef) && $up->($main::BPort) && !grep {
             my $id = $_;
             1 != grep { defined main::state_on($id, $_)->{polled_by} } (undef, $main::BPort)
         } qw(sim-a sim-b);
         $settled = $one_polls ? ($settled || 0) + 1 : 0;
         return $settled >= 5;
     }, 12, 'each upstream is polled by one host again', 0.4);
     is_deeply(\@back, [], 'no observed slot went back to the views Redis kept');
 }]
