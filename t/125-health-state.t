# solgate_health (a load balancer's check: 200 while an upstream may take
# client traffic, 503 with the reason when none may) and the network's
# durable operator state (`state PATH`): operator cordons and drains are
# saved to PATH/operator-NETWORK.json before the admin API answers, and
# come back when nginx restarts (even after kill -9) or a reload resizes
# the zone; a file that cannot be used is logged and ignored; a bad PATH
# fails `nginx -t` with its file and line.

use Test::Nginx::Socket 'no_plan';
use Solgate::Sim;
use Solgate::TestConf;
use Solgate::Gateway;
use File::Temp ();
use JSON::PP ();

our @Ports = (20151, 20152, 20153);
our $Later = 20154;             # a node that is down, then started
our $Dead = 20155;              # nothing ever listens there
our $WsDead = 20156;            # sim-a's ws=, never connected to here
sim_start(port => $_, args => ['--skip-rate', 0, '--quiet']) for @Ports;

our $StateDir = File::Temp::tempdir('solgate-state.XXXXXX', TMPDIR => 1, CLEANUP => 1);
our $StateFile = "$StateDir/operator-mainnet.json";

# $zone: the zone line (a reload that changes it resizes the zone)
sub http_config {
    my (%o) = @_;
    my $zone = $o{zone} || 'zone 1m;';
    my $state = exists $o{state} ? $o{state} : "state $StateDir;";
    return network_conf('mainnet', settings => "$zone $state", upstreams => [
            ['sim-a', "http://127.0.0.1:$Ports[0]", "ws=ws://127.0.0.1:$WsDead"],
            ['sim-b', "http://127.0.0.1:$Ports[1]"],
            ['sim-c', "http://127.0.0.1:$Ports[2]"]])
      . network_conf('down', upstreams => [
            ['gone-1', "http://127.0.0.1:$Dead"],
            ['later', "http://127.0.0.1:$Later"]]);
}

our $Config = solgate_locations('mainnet')
  . "    location = /health { solgate_health mainnet; }\n"
  . "    location = /health/down { solgate_health down; }\n"
  . "    location /solgate/ { solgate_admin; }\n";

our $Bad = "[error]\n[alert]\n[crit]\n[emerg]\n";

sub clean {
    for my $p (@Ports) { sim_fault($p, 'clear'); sim_reset($p) }
    unlink $StateFile;
    rmdir $StateFile;   # TEST 9 makes it a directory
}
sub admin { http_post(server_port(), $_[0], '') }
sub health { http_get(server_port(), $_[0] || '/health') }
sub state_of { upstream_state($_[0], 'mainnet') || {} }
sub polled { (state_of('sim-c')->{processed_slot} || 0) > 0 }
sub saved {
    open my $fh, '<', $StateFile or return undef;
    local $/;
    return JSON::PP->new->decode(<$fh>);
}

# The running nginx.conf with $from replaced by $to.
sub edit_conf {
    my ($from, $to) = @_;
    my $conf = servroot() . '/conf/nginx.conf';
    open my $in, '<', $conf or die "$conf: $!";
    my $text = do { local $/; <$in> };
    close $in;
    $text =~ s/\Q$from\E/$to/ or die "no \"$from\" in $conf\n";
    open my $out, '>', $conf or die "$conf: $!";
    print $out $text;
    close $out;
}

# The running nginx.conf with its zone line changed, then a reload that
# is waited for: every worker is a new one.
sub reload_with_zone {
    my ($from, $to) = @_;
    edit_conf($from, $to);
    my %old = map { ($_ => 1) } nginx_workers();
    nginx_reload();
    wait_until(sub { my @w = nginx_workers(); @w == 2 && !grep { $old{$_} } @w },
               10, 'the reload replaced every worker');
}

run_solgate_blocks(http_config => http_config(), config => $Config, setup => 'clean();',
                   no_error_log => $Bad);

__DATA__

=== TEST 1: health: 200 with the number of eligible upstreams, to GET and HEAD; other methods 405
--- wait_for eval
['the nodes are polled', \&polled, 5]
--- request eval
["GET /health", "HEAD /health", "POST /health\nx"]
--- error_code eval
[200, 200, 405]
--- response_body eval
['{"status":"ok","eligible":3}', '', undef]
--- response_headers eval
["Content-Type: application/json; charset=utf-8", "Content-Length: 28", "Allow: GET, HEAD"]



=== TEST 1a: health: a browser's GET (with an Origin) may read it from another origin; one without gets no CORS header
--- wait_for eval
['the nodes are polled', \&polled, 5]
--- request eval
["GET /health", "GET /health"]
--- more_headers eval
["Origin: https://dashboard.example", ""]
--- response_headers eval
["Access-Control-Allow-Origin: *", "!Access-Control-Allow-Origin"]



=== TEST 2: health: cordons take upstreams out of the count; 503 with the reason once every one is cordoned, to HEAD too
--- wait_for eval
['the nodes are polled', \&polled, 5]
--- request eval
["POST /solgate/cordon?network=mainnet&upstream=sim-a&reason=one",
 "POST /solgate/cordon?network=mainnet&upstream=sim-b&reason=two",
 "GET /health",
 "POST /solgate/cordon?network=mainnet&upstream=sim-c&reason=three",
 "GET /health",
 "HEAD /health",
 "POST /solgate/uncordon?network=mainnet&upstream=sim-b",
 "GET /health"]
--- error_code eval
[200, 200, 200, 200, 503, 503, 200, 200]
--- response_body eval
[undef, undef, '{"status":"ok","eligible":1}', undef,
 '{"status":"unavailable","eligible":0,"reason":"every upstream is cordoned"}',
 '', undef, '{"status":"ok","eligible":1}']



=== TEST 3: health: a network whose nodes are down is unavailable, and available again once one comes up
The poller cordons a node whose getHealth gets no answer.
--- wait_for eval
['the dead nodes are cordoned', sub { health('/health/down')->{status} == 503 }, 5]
--- request eval
["GET /health/down",
 step {
     sim_start(port => $Later, args => ['--skip-rate', 0, '--quiet']);
     wait_for('the node that came up is eligible',
              sub { health('/health/down')->{body} eq '{"status":"ok","eligible":1}' }, 5);
     sim_stop($Later);
 }]
--- error_code: 503
--- response_body: {"status":"unavailable","eligible":0,"reason":"every upstream is cordoned"}



=== TEST 4: an operator cordon and a drain answered 200 are on disk, and come back when nginx restarts
--- wait_for eval
['the nodes are polled', \&polled, 5]
--- request eval
["POST /solgate/cordon?network=mainnet&upstream=sim-b&reason=disk+swap",
 "POST /solgate/drain?network=mainnet&upstream=sim-a",
 step {
     my $s = saved();
     is($s->{format}, 'solgate-operator-state', 'the file is an operator state');
     is_deeply([map { [$_->{upstream}, $_->{by}, $_->{reason}] } @{ $s->{cordons} }],
               [['sim-b', 'operator', 'disk swap']], 'it holds the cordon');
     is_deeply([map { $_->{upstream} } @{ $s->{drains} }], ['sim-a'], 'and the drain');
     $main::Since = state_of('sim-b')->{cordon}{since};
     nginx_restart();
     my $b = state_of('sim-b');
     is($b->{cordon}{by}, 'operator', 'after the restart: still cordoned by the operator');
     is($b->{cordon}{reason}, 'disk swap', 'with its reason');
     is($b->{cordon}{since}, $main::Since, 'and its time');
     ok(!state_of('sim-a')->{cordon} && !state_of('sim-c')->{cordon}, 'the others are not');
 },
 "GET /health"]
--- error_code eval
[200, 200, 200]
--- response_body eval
[undef, undef, '{"status":"ok","eligible":2}']
--- error_log eval
[qr/\[notice\] .*solgate: operator cordoned upstream "sim-b" of network "mainnet": disk swap/,
 qr/\[notice\] .*solgate: network "mainnet": took back from "\Q$main::StateFile\E" 1 operator cordon\(s\) \("sim-b"\) and 1 drain\(s\) \("sim-a"\)/]



=== TEST 5: kill -9 of every nginx process loses no cordon answered 200; an uncordon survives a restart too
--- wait_for eval
['the nodes are polled', \&polled, 5]
--- request eval
["POST /solgate/cordon?network=mainnet&upstream=sim-a&reason=crash+test",
 "POST /solgate/cordon?network=mainnet&upstream=sim-c",
 step {
     nginx_restart(kill => 1);
     is(state_of('sim-a')->{cordon}{reason}, 'crash test', 'sim-a is cordoned after kill -9');
     is(state_of('sim-c')->{cordon}{by}, 'operator', 'so is sim-c');
 },
 "POST /solgate/uncordon?network=mainnet&upstream=sim-a",
 step {
     nginx_restart();
     ok(!state_of('sim-a')->{cordon}, 'sim-a stays uncordoned after a restart');
     is(state_of('sim-c')->{cordon}{by}, 'operator', 'sim-c stays cordoned');
 },
 "GET /health"]
--- error_code eval
[200, 200, 200, 200]
--- response_body eval
[undef, undef, undef, '{"status":"ok","eligible":2}']
--- no_error_log
[alert]
[crit]
[emerg]



=== TEST 6: a reload that resizes the zone says so and keeps the operator's cordons; one that keeps the zone says nothing
--- workers: 2
--- wait_for eval
['the nodes are polled', \&polled, 5]
--- request eval
["POST /solgate/cordon?network=mainnet&upstream=sim-c&reason=resize",
 step {
     reload_with_zone('zone 1m;', 'zone 2m;');
     wait_for('the new zone has the cordon',
              sub { (state_of('sim-c')->{cordon}{reason} || '') eq 'resize' }, 5);
     unlike(nginx_error_log(), qr/zone "solgate_network_down".*size changed/,
            'the zone of the other network was kept');
 },
 "POST /solgate/uncordon?network=mainnet&upstream=sim-c",
 step {
     reload_with_zone('zone 2m;', 'zone 1m;');
     wait_for('the new zone is polled', \&polled, 5);
     ok(!state_of('sim-c')->{cordon}, 'the uncordon outlived the second resize');
     my $warned = () = nginx_error_log() =~ /this reload cannot keep shared memory zone/g;
     reload_with_zone('zone 1m;', 'zone 1m; ');
     my $after = () = nginx_error_log() =~ /this reload cannot keep shared memory zone/g;
     is($after, $warned, 'a reload at the same size keeps the zone and says nothing');
 },
 "GET /health"]
--- error_code eval
[200, 200, 200]
--- response_body eval
[undef, undef, '{"status":"ok","eligible":3}']
--- error_log eval
[qr/\[warn\] .*solgate_network "mainnet": this reload cannot keep shared memory zone "solgate_network_mainnet", whose size changed from 1024k to 2048k: a new zone starts empty, so slot views, health, leases and counters are learnt again, and the operator cordons and drains are taken back from the state file \(.*nginx.conf:\d+\)/,
 qr/\[warn\] .*zone "solgate_network_mainnet", whose size changed from 2048k to 1024k/,
 qr/took back from "\Q$main::StateFile\E" 1 operator cordon\(s\) \("sim-c"\)/,
 qr/took back from "\Q$main::StateFile\E" 0 operator cordon\(s\)/]



=== TEST 7: a corrupt state file is logged with its path and ignored; the next cordon replaces it
--- setup
clean();
open my $fh, '>', $StateFile or die $!;
print $fh '{"format":"solgate-operator-state","version":1,"cordons":[{"upstream":"sim-a"';
close $fh;
--- wait_for eval
['the nodes are polled', \&polled, 5]
--- request eval
["GET /health",
 "POST /solgate/cordon?network=mainnet&upstream=sim-b&reason=after",
 step {
     is_deeply([map { $_->{upstream} } @{ saved()->{cordons} }], ['sim-b'],
               'the file is whole again, with the new cordon');
 }]
--- error_code: 200
--- response_body eval
['{"status":"ok","eligible":3}', undef]
--- error_log eval
qr/\[error\] .*solgate: network "mainnet": ignoring the state file "\Q$main::StateFile\E": it is not valid JSON \(the error is after byte \d+\); no operator cordon or drain is taken back from it, and the next cordon, uncordon or drain replaces it/
--- no_error_log
[alert]
[crit]
[emerg]



=== TEST 8: a state file of another version, or for another network, is refused whole
--- setup
clean();
open my $fh, '>', $StateFile or die $!;
print $fh '{"format":"solgate-operator-state","version":2,"network":"mainnet","cordons":[{"upstream":"sim-a","by":"operator","reason":"x","since":1}]}';
close $fh;
--- wait_for eval
['the nodes are polled', \&polled, 5]
--- request eval
[step { ok(!state_of('sim-a')->{cordon}, 'nothing was taken from it');
        open my $fh, '>', $StateFile or die $!;
        print $fh '{"format":"solgate-operator-state","version":1,"network":"devnet","cordons":[]}';
        close $fh;
        nginx_restart(); },
 "GET /health"]
--- response_body: {"status":"ok","eligible":3}
--- error_log eval
[qr/\[error\] .*ignoring the state file "\Q$main::StateFile\E": it is version 2, this Solgate reads version 1/,
 qr/\[error\] .*ignoring the state file "\Q$main::StateFile\E": it is network "devnet"'s/]
--- no_error_log
[alert]
[crit]
[emerg]



=== TEST 9: an unreadable state file is ignored; a cordon that cannot be saved is in force but answered 500
The file's path is a directory: it cannot be read, nor renamed over.
--- setup
clean();
mkdir $StateFile or die $!;
--- wait_for eval
['the nodes are polled', \&polled, 5]
--- request eval
["POST /solgate/cordon?network=mainnet&upstream=sim-a&reason=unsaved",
 step { is(state_of('sim-a')->{cordon}{reason}, 'unsaved', 'the cordon is in force') },
 "GET /health"]
--- error_code eval
[500, 200]
--- response_body_like eval
[qr/^\{"ok":false,"message":"cordoned upstream \\"sim-a\\" of network \\"mainnet\\", but it is not saved: cannot save \\"\Q$main::StateFile\E\\": rename: Is a directory; it holds until nginx restarts"\}$/,
 qr/^\{"status":"ok","eligible":2\}$/]
--- error_log eval
[qr/\[error\] .*ignoring the state file "\Q$main::StateFile\E": not a regular file/,
 qr/\[error\] .*solgate: operator cordoned upstream "sim-a" of network "mainnet": unsaved, but it is not saved: cannot save/]
--- no_error_log
[alert]
[crit]
[emerg]



=== TEST 10: a state path that is a file fails nginx with the file and line
--- http_config eval
http_config(state => "state $main::StateDir/afile;")
--- setup
clean();
open my $fh, '>', "$StateDir/afile" or die $!;
close $fh;
--- must_die
--- error_log eval
qr/\[emerg\] .*state directory "\Q$main::StateDir\E\/afile" of network "mainnet" is not a directory in \S+nginx\.conf:\d+/



=== TEST 11: nginx -t names a state path under a file, and a repeated state, with the file and line
--- wait_for eval
['the nodes are polled', \&polled, 5]
--- check
open my $fh, '>', "$StateDir/afile" or die $!;
close $fh;
my $conf = servroot() . '/conf/nginx.conf';
my $file = servroot() . '/conf/bad.conf';
my $text = do { local (@ARGV, $/) = $conf; <> };
for my $case (["state $StateDir/afile/sub;",
               qr/\[emerg\] .*state directory "\Q$StateDir\E\/afile\/sub" of network "mainnet" cannot be a directory: a part of its path is a file in \Q$file\E:\d+/],
              ["state $StateDir; state $StateDir;",
               qr/\[emerg\] .*"state" directive is duplicate in \Q$file\E:\d+/]) {
    my ($to, $want) = @$case;
    (my $bad = $text) =~ s/\Qstate $StateDir;\E/$to/ or die "no state line in $conf\n";
    open my $out, '>', $file or die $!;
    print $out $bad;
    close $out;
    my $said = `$ENV{TEST_NGINX_BINARY} -t -p @{[servroot()]}/ -c conf/bad.conf 2>&1`;
    isnt($? >> 8, 0, "nginx -t fails for: $to");
    like($said, $want, 'saying why, with the file and line');
}



=== TEST 12: a change on a zone a reload replaced is answered 503, not 200; after a reload that failed, the old zone keeps changes again
The reload resizes the zone (so the master reads the state file into a
new zone and marks the old one) and then fails: it also listens on a
port a node holds. The old workers go on; for 10 s their changes are
not called kept.
--- workers: 2
--- wait_for eval
['the nodes are polled', \&polled, 5]
--- request eval
[step {
     edit_conf('zone 1m;', 'zone 2m;');
     edit_conf("listen 127.0.0.1:$ENV{TEST_NGINX_SERVER_PORT};",
               "listen 127.0.0.1:$ENV{TEST_NGINX_SERVER_PORT}; listen 127.0.0.1:$Ports[0];");
     nginx_reload();
     wait_for('the reload failed', sub {
         nginx_error_log() =~ /bind\(\) to 127\.0\.0\.1:$Ports[0] failed/ }, 10);
 },
 "POST /solgate/cordon?network=mainnet&upstream=sim-a&reason=during",
 step {
     ok(!-e $StateFile || !grep { $_->{upstream} eq 'sim-a' } @{ saved()->{cordons} },
        'the change answered 503 is not in the file');
     wait_for('changes are kept again 10 s after the failed reload', sub {
         admin('/solgate/cordon?network=mainnet&upstream=sim-a&reason=after')->{status} == 200
     }, 15, 0.5);
     is_deeply([map { [$_->{upstream}, $_->{reason}] } @{ saved()->{cordons} }],
               [['sim-a', 'after']], 'and saved');
 }]
--- error_code: 503
--- response_body_like: ^\{"ok":false,"message":"cordoned upstream \\"sim-a\\" of network \\"mainnet\\" on this worker, but not kept: a reload is giving network \\"mainnet\\" a new zone; send it again"\}$
--- error_log eval
[qr/\[warn\] .*this reload cannot keep shared memory zone "solgate_network_mainnet", whose size changed from 1024k to 2048k/,
 qr/\[warn\] .*solgate: operator cordoned upstream "sim-a" of network "mainnet": during on a zone a reload replaced: answered 503, not kept/]
--- no_error_log
[alert]
[crit]



=== TEST 13: the admin API's 405 names what it takes: an action is POSTed, the state document read with GET
--- request eval
["GET /solgate/cordon?network=mainnet&upstream=sim-a", "POST /solgate/state\nx"]
--- error_code eval
[405, 405]
--- response_headers eval
["Allow: POST", "Allow: GET, HEAD"]
--- response_body eval
['{"ok":false,"message":"use POST"}', '{"ok":false,"message":"use GET"}']
