#!/usr/bin/perl
# With another region's gateway down, how long a getBlock of history that
# no source holds takes to be answered (-32001): the figure
# t/080-blocks.t used to assert ("at once", under 2 s).  Two gateways as
# two regions over simulated nodes, as in t/080, on their own ports, with
# the test helpers of t/lib; everything under build/bench/region, loopback
# only, stopped on exit.
#
#   tools/bench/region_down.pl [samples]      (default 20)
#
# Prints the first answer after the region stopped and the median and
# worst of `samples` more, with the region up and down; writes
# build/bench/region_down.json.  Exits non-zero only when the harness
# fails (a process does not start, an answer is not -32001).

use strict;
use warnings;
use Cwd ();
use File::Basename ();
use File::Path ();
use File::Spec;

my $Root;
BEGIN {
    $Root = Cwd::abs_path(File::Spec->catdir(File::Basename::dirname(__FILE__), '..', '..'));
    my $work = "$Root/build/bench/region";
    File::Path::remove_tree($work);
    File::Path::make_path($work);
    $ENV{TEST_NGINX_SERVROOT}     = "$work/us-east";
    $ENV{TEST_NGINX_HTML_DIR}     = "$work/us-east/html";
    $ENV{TEST_NGINX_SERVER_PORT}  = 19640;
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

my $samples = shift // 20;
my $work = "$Root/build/bench/region";
my ($us_sim, $eu_sim, $eu_port, $us_port) = (19641, 19642, 19643, 19640);
my $token = 'bench-region-token-0123456789';

my $tip = int((Time::HiRes::time() * 1000 - 1704067200000) / 400);
my $us_first = $tip - 3000;
sim_start(port => $us_sim, args => ['--quiet', '--first-available-block', $us_first]);
sim_start(port => $eu_sim, args => ['--quiet', '--first-available-block', $tip - 300000]);

sub region_conf {
    my ($region, $sim, $peer) = @_;
    return <<"_EOC_";
    map \$http_x_api_key \$solgate_plan { default ""; key-bulk bulk; key-op operator; }
    solgate_network mainnet {
        cluster mainnet-beta;
        upstream node http://127.0.0.1:$sim;
    }
    solgate_blocks mainnet {
        region $region;
        cache $work/$region-data/cache max_size=50m;
        state $work/$region-data/state;
        peer $peer;
        peer_token $token;
        api_key \$http_x_api_key;
        plan \$solgate_plan;
        plan_define bulk tier=operator getblock_rate=0;
    }
_EOC_
}
my $config = solgate_locations('mainnet') . "    location /solgate/ { solgate_admin; }\n";

sub die_with { my ($msg) = @_; print STDERR "region_down: $msg\n"; exit 1 }
sub until_true { my ($what, $cond, $secs) = @_;
    my $end = Time::HiRes::time() + $secs;
    until ($cond->()) {
        die_with("$what: not within $secs s") if Time::HiRes::time() > $end;
        Time::HiRes::sleep(0.05);
    }
}
sub ask { my ($port, $slot, $key) = @_;
    my $t0 = Time::HiRes::time();
    my $res = http_post($port, '/', get_block_call(1, $slot), { 'X-Api-Key' => $key });
    return ($res, (Time::HiRes::time() - $t0) * 1000);
}

gateway_start('eu', region_conf('eu-west', $eu_sim, "us-east http://127.0.0.1:$us_port"),
              $config, port => $eu_port, no_root_location => 1, servroot => "$work/eu-west");
nginx_start(region_conf('us-east', $us_sim, "eu-west http://127.0.0.1:$eu_port copy=off"),
            $config, no_root_location => 1);
for my $port ($us_port, $eu_port) {
    until_true("gateway on $port learns its ledger window",
               sub { defined network_state(undef, $port)->{blocks}{first_available_block} }, 10);
}

# a block only eu-west's ledger holds; once eu-west has it cached and its
# summary says so, us-east serves it: us-east knows the other region
my $old = $us_first - 50000;
for (1 .. 20) {
    my ($res) = ask($eu_port, $old, 'key-op');
    last if $res->{body} =~ /"result"/;
    $old--;
}
until_true('us-east serves the block eu-west holds',
           sub { (ask($us_port, $old, 'key-bulk'))[0]{body} =~ /"result"/ }, 15);

# history no source holds, asked of us-east
my $next = $old - 3;
sub history { my ($n) = @_;
    my @ms;
    for (1 .. $n) {
        my ($res, $ms) = ask($us_port, $next--, 'key-bulk');
        die_with("expected -32001, got: " . substr($res->{body} // $res->{error}, 0, 200))
            unless ($res->{body} // '') =~ /-32001/;
        push @ms, $ms;
    }
    return @ms;
}
sub median { my @v = sort { $a <=> $b } @_; $v[$#v / 2] }
sub max { my @v = sort { $a <=> $b } @_; $v[-1] }

my @up = history($samples);
gateway_stop($eu_port);
my ($first) = history(1);
my @down = history($samples);
nginx_stop();

my @figures = (
    ['region up: history request, median', median(@up), 0],
    ['region up: history request, worst', max(@up), 0],
    ['region down: first history request after it stopped', $first, 2000],
    ['region down: history request, median', median(@down), 2000],
    ['region down: history request, worst', max(@down), 2000],
);
print "history getBlock (-32001) with the other region up and down (tools/bench/region_down.pl, $samples samples)\n";
for my $f (@figures) {
    my ($name, $v, $bound) = @$f;
    printf "%-54s %9.2f ms%s\n", $name, $v,
        $bound ? ($v > $bound ? "  SLOW: above $bound ms" : "  within $bound ms") : '';
}
open my $fh, '>', "$Root/build/bench/region_down.json" or die_with("cannot write region_down.json: $!");
print $fh JSON::PP->new->canonical->encode([map { { name => $_->[0], value_ms => 0 + sprintf('%.3f', $_->[1]),
    bound_ms => $_->[2], slow => ($_->[2] && $_->[1] > $_->[2]) ? JSON::PP::true : JSON::PP::false } } @figures]), "\n";
close $fh;
