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
use File::Path ();
use File::Spec;

our @Ports = (19961, 19962);
our $RedisPort = 19969;
our $BPort = 19965;
sim_start(port => $_, args => ['--quiet']) for @Ports;

our $RedisDir = File::Spec->catdir(Test::Nginx::Util::t_dir(), 'redis-tmp');
File::Path::remove_tree($RedisDir);
redis_start(port => $RedisPort, dir => $RedisDir);
END { File::Path::remove_tree($RedisDir) if $RedisDir }

sub host_conf {
    my ($id) = @_;
    return "    solgate_shared_state redis://127.0.0.1:$RedisPort prefix=t100: timeout=200ms;\n"
         . "    solgate_host_id $id;\n"
         . network_conf('mainnet', upstreams => sim_upstreams(@Ports),
                        settings => 'max_slot_lag 0;');
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
 }]
--- check
my $keys = redis_cmd($RedisPort, 'KEYS', 't100:*');
ok((grep { $_ eq 't100:{mainnet}:views' } @$keys), 'the views are in Redis under the network hash tag')
    or diag(join ' ', @$keys);



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



=== TEST 5: with Redis stopped both hosts keep answering on their own, and converge when it is back
--- wait_for eval
['both hosts know both upstreams', main::both_polled(), 8]
--- request eval
[step {
     wait_until(sub { metrics_text() =~ /^solgate_shared_state_up\{network="mainnet"\} 1$/m }, 5,
                'metric: up');
     redis_stop($main::RedisPort);
     wait_until(sub { metrics_text() =~ /^solgate_shared_state_up\{network="mainnet"\} 0$/m }, 5,
                'metric: down');
     for my $i (1 .. 6) {
         my $a = http_post(server_port(), '/', rpc($i, 'getSlot'));
         my $b = main::on_b(rpc($i, 'getBalance', '["83astBRguLMdt2h5U1Tpdq5tjFoJ6noeGwaY3mDLVcri"]'));
         like($a->{body}, qr/"result":\d+,"id":$i\}/, "host A answers getSlot $i");
         like($b->{body}, qr/"value":\d+\},"id":$i\}/, "host B answers getBalance $i");
     }
     # each host polls every upstream itself now
     my %before = map { ($_ => main::polls_on($_)) } qw(sim-a sim-b);
     wait_until(sub { !grep { main::polls_on($_) < $before{$_} + 4 } qw(sim-a sim-b) }, 8,
                'host A polls both upstreams itself');
     redis_start(port => $main::RedisPort, dir => $main::RedisDir);
     wait_until(sub { @{ redis_cmd($main::RedisPort, 'KEYS', 't100:{mainnet}:views') } }, 10,
                'the views are in Redis again');
     wait_until(sub { metrics_text() =~ /^solgate_shared_state_up\{network="mainnet"\} 1$/m }, 5,
                'metric: up again');
     ok(1, 'converged');
 }]
--- error_log eval
[qr/solgate: shared state redis:\/\/127\.0\.0\.1:19969\/0 unavailable/,
 qr/solgate: shared state redis:\/\/127\.0\.0\.1:19969\/0 connected again/]



=== TEST 6: nginx -t refuses a shared state it cannot use, naming the file and line
--- http_config
    solgate_shared_state redis://127.0.0.1 prefix=x:;
    solgate_network mainnet { cluster mainnet-beta; upstream a http://127.0.0.1:1; }
--- must_die
--- error_log eval
qr/\[emerg\] .*the URL needs HOST:PORT in .*nginx\.conf:\d+/



=== TEST 7: a host id with a space in it is refused
--- http_config
    solgate_host_id "gw 1";
    solgate_network mainnet { cluster mainnet-beta; upstream a http://127.0.0.1:1; }
--- must_die
--- error_log
a host id takes letters, digits and . _ -
