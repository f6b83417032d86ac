#!/usr/bin/env perl
# WebSocket subscriptions through one nginx worker (issue 15's targets):
#   - idle subscriber connections: worker RSS with BENCH_WS_CONNECTIONS
#     open, and the memory each costs (target: 10,000 in under 100 MB of
#     worker RSS).  Each takes two descriptors in the worker (client and
#     node), so the default is what the open-files limit allows, at most
#     10,000; below 10,000 the RSS for 10,000 is projected from the cost
#     per connection measured;
#   - the notification latency the gateway adds: the same slotNotification
#     read from the node directly and through the gateway, per slot (target:
#     under 1 ms at the median), with no idle connection and with them all.
# Part of `make bench`; see tools/bench/README.md.  Loopback ports
# 19670-19672; stops what it starts.
use strict;
use warnings;

use FindBin ();
use File::Path ();
use IO::Select ();
use POSIX ();
use Time::HiRes ();

my $root = "$FindBin::Bin/../..";
use lib "$FindBin::Bin/../../t/lib";
use Solgate::WebSocket;

my $nginx = $ENV{SOLGATE_NGINX} || '/usr/sbin/nginx';
my ($fd_limit) = `sh -c 'ulimit -Hn'` =~ /(\d+)/;
$fd_limit ||= 1024;
my $n_conns = $ENV{BENCH_WS_CONNECTIONS}
    || ($fd_limit >= 20500 ? 10000 : int(($fd_limit - 500) / 2 / 1000) * 1000);
my $samples = $ENV{BENCH_WS_SAMPLES} || 60;
my ($rpc_port, $ws_port, $gw_port) = (19670, 19671, 19672);
my $work = "$root/build/bench/ws";
my @children;

sub stop_all {
    if (open my $fh, '<', "$work/nginx.pid") {
        chomp(my $pid = <$fh>);
        kill 'QUIT', $pid if $pid;
    }
    kill 'TERM', $_ for @children;
    waitpid($_, 0) for @children;
    @children = ();
}
$SIG{INT} = $SIG{TERM} = sub { stop_all(); exit 1 };
END { stop_all() }

File::Path::remove_tree($work);
File::Path::make_path($work);
# the clients hold one socket each here, two each in nginx
system("prlimit --pid $$ --nofile=$fd_limit:$fd_limit >/dev/null 2>&1");

my $sim = fork();
if ($sim == 0) {
    open STDOUT, '>', "$work/sim.log";
    open STDERR, '>&', \*STDOUT;
    exec 'prlimit', "--nofile=$fd_limit:$fd_limit", "$root/build/bin/solana-sim",
        '--port', $rpc_port, '--ws-port', $ws_port, '--slot-ms', 100,
        '--skip-rate', 0, '--quiet';
    exit 127;
}
push @children, $sim;

open my $conf, '>', "$work/nginx.conf" or die $!;
print $conf <<"CONF";
load_module $root/build/modules/ngx_http_solgate_module.so;
worker_processes 1;
worker_rlimit_nofile $fd_limit;
daemon on;
error_log $work/error.log warn;
pid $work/nginx.pid;
events { worker_connections $fd_limit; }
http {
    access_log off;
    client_body_temp_path $work/client_body_temp;
    proxy_temp_path $work/proxy_temp;
    fastcgi_temp_path $work/fastcgi_temp;
    uwsgi_temp_path $work/uwsgi_temp;
    scgi_temp_path $work/scgi_temp;
    solgate_network mainnet {
        cluster mainnet-beta;
        upstream node http://127.0.0.1:$rpc_port ws=ws://127.0.0.1:$ws_port;
    }
    server {
        listen 127.0.0.1:$gw_port backlog=4096;
        location / { solgate_pass mainnet; include $root/conf/solgate_proxy.conf; }
        location \@solgate_retry { solgate_pass mainnet; include $root/conf/solgate_proxy.conf; }
    }
}
CONF
close $conf;
system($nginx, '-p', "$work/", '-c', "$work/nginx.conf") == 0 or die "nginx did not start\n";

sub worker_pid {
    open my $fh, '<', "$work/nginx.pid" or return;
    chomp(my $master = <$fh>);
    my ($pid) = `pgrep -P $master` =~ /(\d+)/;
    return $pid;
}
sub rss_kb {
    my ($pid) = @_;
    open my $fh, '<', "/proc/$pid/status" or return 0;
    while (<$fh>) { return $1 if /^VmRSS:\s+(\d+)/ }
    return 0;
}

sub subscribe {
    my ($port) = @_;
    my $ws;
    for (1 .. 50) {
        $ws = Solgate::WebSocket->connect(port => $port) and last;
        Time::HiRes::sleep(0.1);
    }
    die "no WebSocket on $port: $Solgate::WebSocket::Error\n" unless $ws;
    $ws->send_text('{"jsonrpc":"2.0","id":1,"method":"slotSubscribe"}');
    $ws->wait_json(5, sub { defined $_[0]{id} }) or die "no subscription on $port\n";
    return $ws;
}

# Per slot, when its notification came directly and through the gateway.
sub added_latency_ms {
    my $direct = subscribe($ws_port);
    my $gateway = subscribe($gw_port);
    my (%at_direct, %at_gateway);
    my $deadline = Time::HiRes::time() + 30;
    my $sel = IO::Select->new($direct->{sock}, $gateway->{sock});
    while (Time::HiRes::time() < $deadline && keys(%at_gateway) < $samples + 5) {
        for my $fh ($sel->can_read(1)) {
            my $now = Time::HiRes::time();
            my ($ws, $seen) = $fh == $direct->{sock}
                ? ($direct, \%at_direct) : ($gateway, \%at_gateway);
            $ws->_fill($now + 1) or next;
            while (my $m = $ws->_take) {
                next unless $m->{opcode} == 1 && $m->{text} =~ /"slot":(\d+)\}/;
                $seen->{$1} //= $now;
            }
        }
    }
    $direct->close(1000);
    $gateway->close(1000);
    my @d = sort { $a <=> $b }
            map { ($at_gateway{$_} - $at_direct{$_}) * 1000 }
            grep { exists $at_direct{$_} } keys %at_gateway;
    die "too few notifications seen both ways\n" unless @d >= 10;
    return ($d[int($#d / 2)], $d[int($#d * 0.99)], scalar @d);
}

# Runs $code in a child process; returns what it returned (numbers).
sub in_child {
    my ($code) = @_;
    pipe(my $r, my $w) or die "pipe: $!\n";
    my $pid = fork() // die "fork: $!\n";
    if ($pid == 0) {
        close $r;
        my @out = eval { $code->() };
        print {$w} join(' ', @out), "\n";
        close $w;
        POSIX::_exit(@out ? 0 : 1);
    }
    close $w;
    my $line = <$r>;
    waitpid($pid, 0);
    die "the measuring child failed\n" if $? != 0 || !defined $line;
    return split ' ', $line;
}

# the gateway is up once an upgrade through it works
subscribe($gw_port)->close(1000);
my $pid = worker_pid() or die "no nginx worker\n";
my ($med_idle, $p99_idle, $n_idle) = added_latency_ms();
Time::HiRes::sleep(0.5);
my $rss_before = rss_kb($pid);

my @held;
my $t0 = Time::HiRes::time();
for my $i (1 .. $n_conns) {
    my $ws = Solgate::WebSocket->connect(port => $gw_port, timeout => 10)
        or die "connection $i: $Solgate::WebSocket::Error\n";
    push @held, $ws;
}
my $open_s = Time::HiRes::time() - $t0;
Time::HiRes::sleep(1);
my $rss_after = rss_kb($pid);
# measured by a child that holds none of the idle connections: a client
# process watching thousands of sockets is slow to wake for one
my ($med_busy, $p99_busy, $n_busy) = in_child(sub {
    POSIX::close(fileno($_->{sock})) for @held;
    return added_latency_ms();
});
$_->close(1000) for @held;

my $per_conn = ($rss_after - $rss_before) / $n_conns;
my $total_mb = $rss_after / 1024;
# below 10,000 (the open-files limit): the worker's RSS at 10,000
my $at_10k_mb = ($rss_before + $per_conn * 10000) / 1024;
my $mem_ok = $at_10k_mb < 100 ? 'met' : 'missed';
my $how = $n_conns >= 10000 ? 'measured' : "projected from $n_conns";
my $lat_ok = $med_idle < 1 && $med_busy < 1 ? 'met' : 'missed';
printf "ws_subscribers: %d idle connections opened in %.1f s; worker RSS %.1f MB -> %.1f MB, %.2f KB per connection; %.1f MB at 10,000 (%s; target < 100 MB: %s)\n",
    $n_conns, $open_s, $rss_before / 1024, $total_mb, $per_conn, $at_10k_mb, $how, $mem_ok;
printf "ws_subscribers: notification latency added by the gateway: median %.3f ms, p99 %.3f ms over %d slots with no idle connection; median %.3f ms, p99 %.3f ms over %d slots with %d open (target: median < 1 ms: %s)\n",
    $med_idle, $p99_idle, $n_idle, $med_busy, $p99_busy, $n_busy, $n_conns, $lat_ok;

File::Path::make_path("$root/build/bench/targets");
open my $t, '>', "$root/build/bench/targets/ws_subscribers.tsv" or die $!;
printf $t "%s\t%s\t%.1f MB at 10,000 (%s; %.2f KB each)\n", $mem_ok,
    '10,000 idle WebSocket subscribers in one worker: RSS < 100 MB', $at_10k_mb, $how, $per_conn;
printf $t "%s\t%s\tmedian %.3f ms idle, %.3f ms with %d open\n", $lat_ok,
    'WebSocket notification latency added by the gateway: median < 1 ms', $med_idle, $med_busy, $n_conns;
close $t;
