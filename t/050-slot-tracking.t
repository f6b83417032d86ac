# Slot tracking against simulated nodes: cordoning a stalled node and
# letting it back, getSlot never moving backwards, the getBlock guard, the
# operator's cordon, one poller per upstream with several workers, reloads.
# The nodes run fast (10 ms slots) so lag thresholds are crossed in seconds.

use Test::Nginx::Socket 'no_plan';
use Solgate::Sim;
use Solgate::TestConf;
use JSON::PP;
use Time::HiRes qw(sleep time);

our @Ports = (19851, 19852, 19853);
sim_start(port => $_, args => ['--slot-ms', 10, '--skip-rate', 0, '--quiet'])
    for @Ports;

our $HttpConfig = network_conf('mainnet', upstreams => sim_upstreams(@Ports));
our $Config = solgate_locations('mainnet',
        extra => 'add_header X-Solgate-Upstream $solgate_upstream always;')
  . "    location /solgate/ { solgate_admin; }\n"
  . "    location = /metrics { solgate_metrics; }\n";

sub call { my ($id, $method, $params) = @_;
    return qq({"jsonrpc":"2.0","id":$id,"method":"$method")
        . (defined $params ? qq(,"params":$params) : '') . '}' }

sub state {
    my $res = http_get(server_port(), '/solgate/state');
    return decode_json($res->{body});
}

sub upstream_state {
    my ($id) = @_;
    my ($u) = grep { $_->{id} eq $id } @{ state()->{networks}[0]{upstreams} };
    return $u;
}

# Polls the admin state until $cond->($upstream) holds; seconds waited or undef.
sub wait_for {
    my ($id, $cond, $limit) = @_;
    my $start = time;
    while (time - $start < $limit) {
        return time - $start if $cond->(upstream_state($id));
        sleep 0.1;
    }
    return undef;
}

sub clean { for my $p (@Ports) { sim_fault($p, 'clear'); sim_reset($p) } }

no_root_location();

# --- a stalled node is cordoned, gets no traffic, and comes back ----------
{
    clean();
    nginx_start($HttpConfig, $Config, no_root_location => 1);
    ok(defined wait_for('sim-b', sub { $_[0]{processed_slot} > 0 }, 3),
       'the poller has slot views');

    sim_fault($Ports[1], 'stall', on => 1);
    my $took = wait_for('sim-b', sub { $_[0]{cordon} }, 5);
    ok(defined $took, 'a node whose replay stalls is cordoned'
        . (defined $took ? sprintf(' (after %.1f s)', $took) : ''));
    my $b = upstream_state('sim-b');
    is($b->{cordon}{by}, 'poller', 'cordoned by the poller');
    like($b->{cordon}{reason}, qr/^svm state poller: shred-insert lag \d+ slots exceeds threshold 100 \(node ingests shreds but does not replay them\)$/,
         'with the lag reason');

    sim_reset($Ports[1]);
    my $ok = 0;
    for my $i (1 .. 30) {
        my $res = http_post(server_port(), '/', call($i, 'getBalance',
            '["83astBRguLMdt2h5U1Tpdq5tjFoJ6noeGwaY3mDLVcri"]'));
        $ok++ if $res->{status} == 200 && $res->{body} =~ /"context"/;
    }
    is($ok, 30, 'traffic is served while a node is cordoned');
    is(sim_client_calls($Ports[1]), 0, 'the cordoned node gets no client traffic');
    sleep 0.5;
    ok(sim_stats($Ports[1])->{poller_total} > 0, 'but it is still polled');

    sim_fault($Ports[1], 'stall', on => 0);
    ok(defined wait_for('sim-b', sub { !$_[0]{cordon} }, 5),
       'it is uncordoned after it recovers');

    nginx_stop();
    my $log = nginx_error_log();
    like($log, qr/\[warn\] .*svm upstream unhealthy; cordoning out of rotation: network=mainnet upstream=sim-b shredInsertSlot=\d+ shredInsertSlotLag=\d+ latestSlot=\d+ reason="svm state poller: shred-insert lag/,
         'the cordon WARN line');
    like($log, qr/\[info\] .*svm upstream recovered; uncordoning: network=mainnet upstream=sim-b shredInsertSlotLag=\d+ reason="svm state poller: getHealth ok and shred-insert lag back within threshold"/,
         'the uncordon INFO line');
    my @cordons = $log =~ /cordoning out of rotation: network=mainnet upstream=sim-b/g;
    is(scalar @cordons, 1, 'the cordon is edge-triggered: logged once');
    unlike($log, qr/\[(alert|crit|emerg)\]/, 'no alert in the error log');
}

# --- getSlot(processed) never moves backwards across lagging nodes --------
{
    clean();
    sim_fault($Ports[1], 'lag', slots => 40);
    sim_fault($Ports[2], 'lag', slots => 80);
    nginx_start($HttpConfig, $Config, no_root_location => 1);
    wait_for('sim-c', sub { $_[0]{processed_slot} > 0 }, 3);

    my ($last, $backwards, $answered, %raw_spread) = (0, 0, 0);
    for my $i (1 .. 200) {
        my $res = http_post(server_port(), '/', call($i, 'getSlot',
            '[{"commitment":"processed"}]'));
        next unless $res->{body} =~ /^\{"jsonrpc":"2.0","result":(\d+),"id":$i\}$/;
        $answered++;
        $backwards++ if $1 < $last;
        $last = $1 if $1 > $last;
        $raw_spread{$res->{headers}{'x-solgate-upstream'} // ''}++;
    }
    is($answered, 200, 'all 200 getSlot calls answered');
    is($backwards, 0, 'getSlot(processed) never decreased');
    is(scalar keys %raw_spread, 3, 'the calls went to all three nodes');
    nginx_stop();
    like(nginx_error_log(), qr/falling back to highest known slot: knownHighestSlot=\d+ responseSlot=\d+ upstreamId=sim-[bc]/,
         'corrections are logged at debug level');
    clean();
}

# --- getBlock far above the frontier never reaches a node -----------------
{
    clean();
    nginx_start($HttpConfig, $Config, no_root_location => 1);
    wait_for('sim-a', sub { $_[0]{shred_insert_slot} > 0 }, 3);
    sim_reset($_) for @Ports;
    my $res = http_post(server_port(), '/', call(7, 'getBlock', '[999999999999]'));
    is($res->{body}, '{"jsonrpc":"2.0","error":{"code":-32004,"message":"Block not available for slot 999999999999"},"id":7}',
       'getBlock above the frontier is answered locally with -32004');
    is_deeply([map { sim_stats($_)->{calls}{getBlock} || 0 } @Ports], [0, 0, 0],
              'no node saw a getBlock call');
    my $metrics = http_get(server_port(), '/metrics')->{body};
    like($metrics, qr/^solgate_network_guard_rejections_total\{network="mainnet"\} 1$/m,
         'the rejection is counted');
    like($metrics, qr/^solgate_upstream_poll_requests_total\{network="mainnet",upstream="sim-a",method="getHealth"\} \d+$/m,
         'poll requests are counted per method');
    nginx_stop();
}

# --- the operator's cordon survives the node's recovery --------------------
{
    clean();
    nginx_start($HttpConfig, $Config, no_root_location => 1);
    my $res = http_post(server_port(), '/solgate/cordon?upstream=sim-c&reason=disk+swap', '');
    is($res->{status}, 200, 'cordon accepted');
    sim_fault($Ports[2], 'unhealthy', on => 1);
    sleep 1;
    sim_fault($Ports[2], 'unhealthy', on => 0);
    sleep 1.2;   # several healthy ticks
    my $c = upstream_state('sim-c');
    is($c->{cordon}{by}, 'operator', 'still cordoned by the operator');
    is($c->{cordon}{reason}, 'disk swap', 'with the operator reason');
    sim_reset($Ports[2]);
    http_post(server_port(), '/', call($_, 'getSlot')) for 1 .. 9;
    is(sim_client_calls($Ports[2]), 0, 'the cordoned node gets no client traffic');
    is(http_post(server_port(), '/solgate/uncordon?upstream=sim-c', '')->{status},
       200, 'uncordon accepted');
    ok(!upstream_state('sim-c')->{cordon}, 'uncordoned');
    is(http_post(server_port(), '/solgate/cordon?upstream=nope', '')->{status},
       404, 'an unknown upstream is a 404');
    nginx_stop();
}

# --- one poller per upstream, whatever worker_processes is ----------------
sub poll_rate {
    my ($workers) = @_;
    clean();
    nginx_start($HttpConfig, $Config, no_root_location => 1,
                master => 1, workers => $workers);
    sleep 1;
    sim_reset($Ports[0]);
    my $t0 = time;
    sleep 4;
    my $calls = sim_stats($Ports[0])->{poller_calls}{getHealth} || 0;
    my $rate = $calls / (time - $t0);
    nginx_stop();
    return $rate;
}
{
    my $one = poll_rate(1);
    my $four = poll_rate(4);
    diag(sprintf('getHealth polls per second of one node: %.2f with 1 worker, %.2f with 4', $one, $four));
    ok($one > 1.5 && $one <= 2.75, 'one worker polls once per 400 ms tick');
    ok($four <= $one * 1.25 + 0.3, '4 workers poll each node as often as 1 does');
}

# --- a killed worker's leases pass to another worker -----------------------
{
    clean();
    my $master = nginx_start($HttpConfig, $Config, no_root_location => 1,
                             master => 1, workers => 2);
    my $holder;
    wait_for('sim-a', sub { $holder = $_[0]{lease} && $_[0]{lease}{pid} }, 3);
    ok($holder, "a worker holds sim-a's lease (pid $holder)");
    kill 'KILL', $holder;
    my $took = wait_for('sim-a', sub {
        my $l = $_[0]{lease};
        return $l && $l->{pid} != $holder && kill(0, $l->{pid});
    }, 5);
    ok(defined $took, sprintf("another worker took the lease over (after %.1f s)", $took // -1));
    sim_reset($Ports[0]);
    sleep 1;
    ok((sim_stats($Ports[0])->{poller_calls}{getHealth} || 0) >= 1, 'and sim-a is polled again');
    nginx_stop();
}

# --- reload under traffic leaves no thread behind --------------------------
{
    clean();
    my $master = nginx_start($HttpConfig, $Config, no_root_location => 1,
                             master => 1, workers => 2);
    my ($ok, $total) = (0, 0);
    for my $round (1 .. 3) {
        kill 'HUP', $master;
        for my $i (1 .. 40) {
            $total++;
            my $res = http_post(server_port(), '/', call($i, 'getSlot'));
            $ok++ if $res->{status} == 200;
        }
    }
    is($ok, $total, "requests during reloads answered ($ok of $total)");
    sleep 1.5;  # old workers finish and exit
    my @workers = grep { $_ != $master } map { /^(\d+)$/ ? $1 : () }
        split /\s+/, `pgrep -P $master`;
    is(scalar @workers, 2, 'two workers after the reloads');
    my @threads = map { scalar(() = glob("/proc/$_/task/*")) } @workers;
    is_deeply(\@threads, [2, 2], 'each worker has its main thread and one poller thread');
    nginx_stop();
    my $log = nginx_error_log();
    unlike($log, qr/\[(alert|crit|emerg)\]/, 'no alert in the error log');
    my @stopped = $log =~ /solgate: poller thread stopped/g;
    ok(@stopped >= 6, 'every old worker stopped its poller thread');
}

done_testing();
