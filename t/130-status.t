# solgate_status: the HTML status page, over three simulated nodes of
# which one stalls (its replay stops while it keeps ingesting shreds, so
# both its slot lag and its ingestion lag grow), with a Cube Runner over
# them. The page as served is what a browser without JavaScript shows; it
# is also loaded in headless Chromium (Debian's chromium, which `make deps`
# installs) with its script running, and once for a screenshot
# (build/status.png). Without chromium those checks are skipped with a
# message; the HTTP ones still run. (Chromium's --dump-dom prints nothing
# with scripts turned off, so the page without them is checked as served.)
#
# The history samples one step per 15 s, so the Chromium block waits
# (bounded) until every upstream has two steps charted: about 15-30 s.

use Test::Nginx::Socket 'no_plan';
use Solgate::Sim;
use Solgate::TestConf;
use Solgate::Gateway;
use Solgate::Browser;
use File::Path ();
use File::Spec;
use Time::HiRes ();

our @Ports = (20201, 20202, 20203);
our $Archive = 20204;
sim_start(port => $_, args => ['--slot-ms', 100, '--skip-rate', 0, '--quiet'])
    for @Ports;
sim_start(port => $Archive, args => ['--slot-ms', 100, '--archive', '--quiet']);

our $Root = Test::Nginx::Util::repo_root();
our $Dir = File::Spec->catdir(Test::Nginx::Util::t_dir(), 'status-tmp');
File::Path::remove_tree($Dir);
File::Path::make_path($Dir);
END { File::Path::remove_tree($Dir) if $Dir }

our $HttpConfig = network_conf('mainnet', upstreams => sim_upstreams(@Ports))
  . <<"_EOC_";
    map \$http_x_api_key \$solgate_plan {
        default     "";
        key-op      operator;
        key-arch    blade_runner;
    }
    solgate_blocks mainnet {
        region us-east;
        cache $Dir/cache max_size=50m;
        state $Dir/state;
        long_term_storage http://127.0.0.1:$Archive;
        api_key \$http_x_api_key;
        plan \$solgate_plan;
    }
_EOC_
our $Config = solgate_locations('mainnet')
  . "    location /solgate/ { solgate_admin; }\n"
  . "    location = /status { solgate_status; }\n";
our $Bad = "[error]\n[alert]\n[crit]\n[emerg]\n";
our $Account = '"83astBRguLMdt2h5U1Tpdq5tjFoJ6noeGwaY3mDLVcri"';

# Debian's chromium, or undef (the browser checks are then skipped).
our $Chromium = chromium_binary();

# Headless Chromium on the status page with `@args`: what it printed.
sub chromium_status {
    return chromium('http://127.0.0.1:' . server_port() . '/status', $Dir, @_);
}

# upstream id => its card (the <article> element's text) in a page or DOM
sub cards {
    my ($html) = @_;
    my %cards;
    while ($html =~ m{(<article class="upstream[^"]*" data-upstream="([^"]+)">.*?</article>)}gs) {
        $cards{$2} = $1;
    }
    return \%cards;
}

# The points of a card's series path of $class (0 when it has none).
sub path_points {
    my ($card, $class) = @_;
    return 0 unless $card =~ m{<path class="series $class" d="([^"]*)"};
    my $d = $1;
    return () = $d =~ /[ML]/g;
}

# Every upstream's chart has both series with more than one point.
sub all_charted {
    my ($html) = @_;
    my $cards = cards($html);
    return 0 unless keys %$cards == @Ports;
    for my $card (values %$cards) {
        return 0 unless $card =~ /<svg class="chart"/;
        return 0 unless path_points($card, 'slot-lag') > 1
                     && path_points($card, 'ingestion-lag') > 1;
    }
    return 1;
}

sub rpc_traffic {
    for my $id (1 .. 4) {
        http_post(server_port(), '/', rpc($id, 'getBalance', "[$Account]"));
    }
}

add_block_preprocessor(sub {
    my $block = shift;
    $block->set_value(http_config => $HttpConfig) unless defined $block->http_config;
    $block->set_value(config => $Config) unless defined $block->config;
    $block->set_value(setup => 'sim_fault($_, "clear") for @Ports;')
        unless defined $block->setup;
    return if defined $block->must_die;   # its [emerg] is the point
    $block->set_value(no_error_log => $Bad) unless defined $block->no_error_log;
    $block->set_value(no_shutdown_error_log => $Bad)
        unless defined $block->no_shutdown_error_log;
});

no_root_location();
run_tests();

__DATA__

=== TEST 1: the page is one self-contained HTML document with a chart per upstream
--- wait_for eval
['the lanes have a served tip',
 sub { http_get(server_port(), '/status')->{body} =~ m{<td>all \(network-wide\)</td><td>3</td><td>\d} }, 5]
--- request
GET /status
--- response_headers
Content-Type: text/html; charset=utf-8
Cache-Control: no-store
--- response_body_like: ^<!DOCTYPE html>\n<html lang="en">.*<main id="solgate-status">.*</main><script>.*</script></body></html>$
--- check
my $page = $_[0]{body};
unlike($page, qr/\b(?:src|href)=|<link|\@import|url\(/, 'nothing is loaded from elsewhere');
like($page, qr{<noscript><meta http-equiv="refresh" content="10"></noscript>},
     'without JavaScript it reloads itself');
my $cards = cards($page);
is_deeply([sort keys %$cards], ['sim-a', 'sim-b', 'sim-c'], 'a card per upstream');
is(scalar(() = $page =~ /<svg class="chart"/g), 3, 'a chart per upstream');
like($page, qr{<td>all \(network-wide\)</td><td>3</td><td>\d+</td><td>\d+</td>},
     'the network-wide lane with its served tips');
like($page, qr{Cube Runner <small>region us-east</small>}, 'the Cube Runner section');
like($page, qr{<td>blade_runner</td>}, "with the archive plan's queue");



=== TEST 2: only GET and HEAD
--- request eval
["POST /status\nx", "HEAD /status"]
--- error_code eval
[405, 200]
--- response_headers eval
[undef, "Content-Type: text/html; charset=utf-8"]



=== TEST 3: headless Chromium shows every upstream charted, the stalled one cordoned
sim-c's replay stalls: its lags grow past max_slot_lag (lagging) and past
100 (cordoned by the poller). Requests go through the gateway meanwhile,
and a getBlock goes through Cube Runner, so rates and the cache have
something to show.
--- wait_timeout: 60
--- wait_for eval
['the poller has slot views', sub { upstream_state('sim-c')->{processed_slot} > 0 }, 5]
--- request eval
[step {
     sim_fault($Ports[2], 'stall', on => 1);
     my $slot = network_state('mainnet')->{tips}{finalized} - 10;
     for my $key ('key-op', 'key-op') {
         my $r = http_post(server_port(), '/', get_block_call(9, $slot), {'X-Api-Key' => $key});
         is($r->{status}, 200, "getBlock with $key");
     }
     wait_for('two steps charted for every upstream, sim-c cordoned', sub {
         rpc_traffic();
         my $page = http_get(server_port(), '/status')->{body};
         return all_charted($page) && cards($page)->{'sim-c'} =~ />cordoned</;
     }, 50, 0.5);
 },
 "GET /status"]
--- check
my $page = $_[0]{body};
my $cards = cards($page);
ok(all_charted($page), 'as served (what a browser without JavaScript shows): every upstream charted');
like($cards->{'sim-a'}, qr{<th>requests/s</th><td>\d+\.\d <small>over \d+ s</small>},
     'with its request rate');
like($cards->{'sim-c'}, qr{Cordoned by <b>the state poller</b> since \S+: svm state poller: shred-insert lag \d+ slots exceeds threshold 100},
     'sim-c: cordoned by the poller, with the reason');
like($cards->{'sim-c'}, qr{>lagging<}, 'sim-c: lagging');
unlike($cards->{$_}, qr{>cordoned<|>lagging<}, "$_: in rotation") for qw(sim-a sim-b);
SKIP: {
    skip 'chromium is not installed (Debian package chromium, `make deps`): no browser checks', 7
        unless $Chromium;
    my $dom = chromium_status('--dump-dom', '--virtual-time-budget=12000');
    my $cards = cards($dom);
    is_deeply([sort keys %$cards], ['sim-a', 'sim-b', 'sim-c'],
              'the rendered DOM shows every upstream');
    ok(all_charted($dom), 'each with an <svg> chart of both lags, more than one point each')
        or diag(join "\n", map { "$_: slot-lag " . path_points($cards->{$_}, 'slot-lag')
                                 . ", ingestion-lag " . path_points($cards->{$_}, 'ingestion-lag') }
                             sort keys %$cards);
    like($cards->{'sim-c'} // '', qr{>cordoned<}, 'sim-c is shown cordoned');
    like($dom, qr{<span id="solgate-live">live: updated every 5 s</span>},
         'the script runs (live updates)');
    like($dom, qr{<html[^>]* data-refreshes="[1-9]}, 'and swapped in a fresh copy of the page');

    my $png = File::Spec->catfile($Root, 'build', 'status.png');
    unlink $png;
    chromium_status("--screenshot=$png", '--window-size=1280,2000', '--hide-scrollbars');
    ok(-s $png, "a screenshot in $png");
    open my $fh, '<:raw', $png;
    read($fh, my $magic, 8) if $fh;
    is($magic // '', "\x89PNG\r\n\x1a\n", 'which is a PNG');
}



=== TEST 4: solgate_status takes no argument
--- config
    location = /status { solgate_status mainnet; }
--- must_die
--- error_log
invalid number of arguments in "solgate_status" directive
