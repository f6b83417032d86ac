#!/usr/bin/perl
# `make soak SOAK_SECONDS=N`: mixed traffic through a gateway (a master and
# two workers over three simulated nodes and an archive) while it is
# reloaded, its workers are killed, and its nodes stall, crash, answer
# 502 or 429 and come back, one node at a time (two always healthy).
#
# Every answer is checked. A request is lost when a healthy node could
# have answered it and the client got anything else: not HTTP 200, a
# JSON-RPC error where a result was due (also inside a batch), a cut
# connection. Cube Runner's long-term requests may be told to wait
# (429 with a queue position); that is their answer, not a loss. A
# connection cut while its worker was being killed with SIGKILL is counted
# apart ("cut by a worker kill"): no proxy can answer it.
#
# Reports, and writes build/soak/soak.json: requests by kind, lost (target
# 0), alerts in the error log (target 0), and the workers' threads, file
# descriptors and RSS after the warm-up and at the end (target: flat).
# Exits non-zero when anything was lost, an alert was logged, or the
# harness failed. Loopback only; everything it starts is stopped on exit.

use strict;
use warnings;
use Cwd ();
use File::Basename ();
use File::Path ();
use File::Spec;
use POSIX ();

my $Root;
my $Work;
BEGIN {
    $Root = Cwd::abs_path(File::Spec->catdir(File::Basename::dirname(__FILE__), '..', '..'));
    $Work = "$Root/build/soak";
    File::Path::remove_tree($Work);
    File::Path::make_path("$Work/results");
    $ENV{TEST_NGINX_SERVROOT}     = "$Work/servroot";
    $ENV{TEST_NGINX_HTML_DIR}     = "$Work/servroot/html";
    $ENV{TEST_NGINX_SERVER_PORT}  = 19700;
    $ENV{TEST_NGINX_BINARY}       = $ENV{SOLGATE_NGINX} || '/usr/sbin/nginx';
    $ENV{TEST_NGINX_LOAD_MODULES} ||= "$Root/build/modules/ngx_http_solgate_module.so";
    $ENV{TEST_NGINX_SIM}          ||= "$Root/build/bin/solana-sim";
    $ENV{TEST_NGINX_CONF_DIR}     = "$Root/conf";
}
use lib "$Root/t/lib";
use JSON::PP;
use Time::HiRes ();
use Test::Nginx::Util ();
use Solgate::Sim;
use Solgate::TestConf;
use Solgate::Gateway;

my $Seconds = shift // $ENV{SOAK_SECONDS} // 60;
my $Clients = 4;
my $Port = 19700;
my @Nodes = (19701, 19702, 19703);
my $Archive = 19704;

sub say_ { print "soak: @_\n" }
sub fail_ { print STDERR "soak: @_\n"; exit 2 }

# --- the gateway ------------------------------------------------------------

my $tip = int((Time::HiRes::time() * 1000 - 1704067200000) / 400);
my $first = $tip - 3000;
sub start_node { my ($port) = @_;
    sim_start(port => $port, args => ['--quiet', '--first-available-block', $first]) }
start_node($_) for @Nodes;
sim_start(port => $Archive, args => ['--quiet', '--archive', '--getblock-latency-ms', 50]);

my $http = network_conf('mainnet', upstreams => sim_upstreams(@Nodes))
  . <<"_EOC_";
    map \$http_x_api_key \$solgate_plan { default ""; key-op bulk; key-arch arch; }
    solgate_blocks mainnet {
        region soak;
        cache $Work/cache max_size=200m;
        state $Work/state;
        long_term_storage http://127.0.0.1:$Archive/;
        api_key \$http_x_api_key;
        plan \$solgate_plan;
        plan_define bulk tier=operator getblock_rate=0;
        plan_define arch tier=archive getblock_rate=0 retrieval_rate=20r/s queue_limit=1000 monthly_allowance=10000000;
    }
_EOC_
my $config = solgate_locations('mainnet') . "    location /solgate/ { solgate_admin; }\n";
nginx_start($http, $config, master => 1, workers => 2, port => $Port, no_root_location => 1,
            log_level => 'warn');

sub until_true { my ($what, $cond, $secs) = @_;
    my $end = Time::HiRes::time() + $secs;
    until ($cond->()) {
        fail_("$what: not within $secs s") if Time::HiRes::time() > $end;
        Time::HiRes::sleep(0.1);
    }
}
sub finalized { my $s = eval { network_state('mainnet', $Port) } || {}; ($s->{tips} || {})->{finalized} }
until_true('the gateway knows the finalized tip', sub { finalized() }, 15);
until_true('every node is polled', sub {
    !grep { !((upstream_state($_, 'mainnet', $Port) || {})->{processed_slot}) } map { $_->[0] } @{ sim_upstreams(@Nodes) } }, 15);

# --- the traffic ------------------------------------------------------------

my $Balance = '83astBRguLMdt2h5U1Tpdq5tjFoJ6noeGwaY3mDLVcri';
# the ledger's, cached after once; a slot the nodes skipped answers -32007
my $Recent = finalized() - 50;
for my $try (1 .. 100) {
    last if (Test::Nginx::Util::http_post($Nodes[0], '/', get_block_call(0, $Recent))->{body} // '') =~ /"result"/;
    fail_("no block among the 100 slots below the finalized tip - 50") if $try == 100;
    $Recent--;
}
my @Old = map { $first - 200000 - 7 * $_ } 0 .. 199;   # long-term storage

# [kind, body, headers, check]: check returns '' when the answer is right
sub result_ok { my ($b, $id) = @_; $b =~ /^\{"jsonrpc":"2\.0","result":.*"id":$id\}$/s ? '' : 'not a result' }
my @Kinds = (
    ['getSlot', sub { rpc($_[0], 'getSlot') }, {}, \&result_ok],
    ['getBalance', sub { rpc($_[0], 'getBalance', qq(["$Balance"])) }, {}, \&result_ok],
    ['batch', sub { my $i = $_[0];
        '[' . join(',', rpc($i, 'getSlot'), rpc($i + 1, 'getBalance', qq(["$Balance"])),
                   rpc($i + 2, 'getBlockHeight')) . ']' }, {},
     sub { my ($b, $id) = @_;
           my $n = () = $b =~ /"result":/g;
           $b =~ /^\[/ && $n == 3 && $b !~ /"error"/ ? '' : 'a call of the batch failed' }],
    ['getBlock', sub { get_block_call($_[0], $Recent) }, { 'X-Api-Key' => 'key-op' }, \&result_ok],
    ['getBlock long-term', sub { get_block_call($_[0], $Old[int(rand(@Old))]) }, { 'X-Api-Key' => 'key-arch' },
     sub { my ($b, $id, $status) = @_;
           return '' if $status == 429 && $b =~ /"queuePosition"/;
           # a skipped slot is an answer too
           return '' if $b =~ /"code":-32009/;
           return result_ok($b, $id) }],
);

sub client {
    my ($n, $until) = @_;
    open my $out, '>', "$Work/results/client-$n" or die;
    my $id = $n * 10_000_000;
    while (Time::HiRes::time() < $until) {
        my $kind = $Kinds[int(rand(@Kinds))];
        $id += 3;
        my $t0 = Time::HiRes::time();
        my $res = Test::Nginx::Util::http_post($Port, '/', $kind->[1]->($id), $kind->[2], 30);
        my $t1 = Time::HiRes::time();
        my $status = $res->{status} // 0;
        my $why = $res->{error} ? "no answer: $res->{error}"
                : !$status ? 'no answer'
                : ($status != 200 && !($status == 429 && $kind->[0] =~ /long-term/))
                    ? "HTTP $status"
                : $kind->[3]->($res->{body}, $id, $status);
        (my $body = substr($res->{body} // '', 0, 200)) =~ s/\s+/ /g;
        printf $out "%.3f\t%.3f\t%s\t%s\t%s\n", $t0, $t1, $kind->[0], $why, $why ? $body : '';
    }
    close $out;
    POSIX::_exit(0);
}

# --- the workers' resources ---------------------------------------------------

sub proc_figures {
    my @w = Test::Nginx::Util::nginx_workers();
    my ($threads, $fds, $rss) = (0, 0, 0);
    for my $pid (@w) {
        $threads += process_threads($pid);
        if (opendir my $dh, "/proc/$pid/fd") {
            $fds += grep { /^\d+$/ } readdir $dh;
            closedir $dh;
        }
        if (open my $fh, '<', "/proc/$pid/status") {
            while (<$fh>) { $rss += $1 if /^VmRSS:\s+(\d+)/ }
        }
    }
    return { workers => scalar @w, threads => $threads, fds => $fds, rss_kb => $rss };
}

# warm-up: every kind once, the recent block cached
for my $k (@Kinds) { Test::Nginx::Util::http_post($Port, '/', $k->[1]->(1), $k->[2], 20) }
my $before = proc_figures();

# --- the faults -----------------------------------------------------------------

my $start = Time::HiRes::time();
my $until = $start + $Seconds;
my @pids;
for my $n (1 .. $Clients) {
    my $pid = fork() // fail_("fork: $!");
    client($n, $until) if $pid == 0;
    push @pids, $pid;
}

my @Faults = qw(reload stall kill_worker 502 crash hang 429 close);
my %done;
my @kills;      # [from, to]: a worker being killed
my $i = 0;
while (Time::HiRes::time() < $until - 3) {
    my $fault = $Faults[$i % @Faults];
    my $node = $Nodes[$i % @Nodes];
    $i++;
    if ($fault eq 'reload') {
        Test::Nginx::Util::reload_nginx();
    } elsif ($fault eq 'kill_worker') {
        my @w = Test::Nginx::Util::nginx_workers();
        if (@w) {
            my $t = Time::HiRes::time();
            kill 'KILL', $w[int(rand(@w))];
            push @kills, [$t - 0.05, $t + 1.0];
        }
    } elsif ($fault eq 'stall') {
        sim_fault($node, 'stall', on => 1);
    } elsif ($fault eq '502') {
        sim_fault($node, 'http_status', code => 502);
    } elsif ($fault eq '429') {
        sim_fault($node, 'http_status', code => 429);
    } elsif ($fault eq 'crash') {
        sim_kill($node);
    } elsif ($fault eq 'hang') {
        # answers nothing for a minute: proxy_read_timeout, then another
        sim_fault($node, 'latency', ms => 60000);
    } elsif ($fault eq 'close') {
        sim_fault($node, 'close', on => 1);
    }
    $done{$fault}++;
    Time::HiRes::sleep(2);
    # the node comes back before the next fault
    if ($fault eq 'crash') { start_node($node) }
    elsif ($fault ne 'reload' && $fault ne 'kill_worker') {
        sim_fault($node, 'clear');
        sim_fault($node, 'stall', on => 0);
    }
    Time::HiRes::sleep(1);
}
waitpid($_, 0) for @pids;
Time::HiRes::sleep(1);   # the last reload's old workers leave
my $after = proc_figures();

# --- the report -------------------------------------------------------------------

my (%by_kind, @lost, $cut, $total, @took);
for my $f (glob "$Work/results/client-*") {
    open my $fh, '<', $f or next;
    while (<$fh>) {
        chomp;
        my ($t0, $t1, $kind, $why, $body) = split /\t/, $_, 5;
        $total++;
        $by_kind{$kind}++;
        push @took, $t1 - $t0;
        next unless $why;
        if ($why =~ /^no answer/ && grep { $t1 >= $_->[0] && $t0 <= $_->[1] } @kills) {
            $cut++;
            next;
        }
        push @lost, sprintf('%.1f s  %-18s %s  %s', $t0 - $start, $kind, $why, $body // '');
    }
}
my $log = Test::Nginx::Util::read_error_log() // '';
my @alerts = grep { /\[(alert|crit|emerg)\]/ && !/worker process \d+ exited on signal 9/ } split /\n/, $log;
my $errors = () = $log =~ /\[error\]/g;

@took = sort { $a <=> $b } @took;
my $pct = sub { @took ? $took[int($_[0] * $#took)] : 0 };
my %latency = (p50_ms => int(1000 * $pct->(0.5)), p99_ms => int(1000 * $pct->(0.99)),
               max_ms => int(1000 * $pct->(1)));
my $report = {
    seconds => $Seconds, clients => $Clients, requests => $total // 0,
    by_kind => \%by_kind, faults => \%done, lost => scalar @lost,
    cut_by_worker_kill => $cut // 0, alerts => scalar @alerts,
    error_lines => $errors, before => $before, after => $after,
    latency => \%latency,
};
open my $jf, '>', "$Work/soak.json" or die;
print $jf JSON::PP->new->canonical->pretty->encode($report);
close $jf;

say_(sprintf '%d s, %d clients, %d requests (%s)', $Seconds, $Clients, $total // 0,
     join(', ', map { "$_ $by_kind{$_}" } sort keys %by_kind));
say_('faults: ' . join(', ', map { "$_ x" . ($done{$_} // 0) } @Faults));
say_(sprintf 'lost: %d (target 0); cut by a worker kill: %d; alerts: %d (target 0); [error] lines: %d',
     scalar @lost, $cut // 0, scalar @alerts, $errors);
say_(sprintf 'answers: p50 %d ms, p99 %d ms, slowest %d ms (a hung node holds a request up to proxy_read_timeout, 15 s)',
     @latency{qw(p50_ms p99_ms max_ms)});
say_(sprintf 'workers %s: %d threads, %d fds, %d kB RSS', $_->[0], @{ $_->[1] }{qw(threads fds rss_kb)})
    for ['after the warm-up', $before], ['at the end', $after];
say_("  $_") for @lost[0 .. ($#lost < 19 ? $#lost : 19)];
say_("  $_") for @alerts[0 .. ($#alerts < 9 ? $#alerts : 9)];
say_("report: $Work/soak.json");
nginx_stop();
exit(@lost || @alerts ? 1 : 0);
