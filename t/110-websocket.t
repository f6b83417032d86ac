# WebSocket subscriptions through a solgate_pass location: an upgrade goes
# to a current node with a ws= endpoint, never to one that is lagging or
# has none, fails over when a node refuses it, and is refused with a
# JSON-RPC body when no node can take it; a quiet connection is closed
# after the network's ws_idle_timeout; the subscribers of a node that is
# cordoned or falls behind are closed with 1012 and reconnect elsewhere.  The nodes' pubsub ports are
# solana-sim's --ws-port; the client is t/lib's Solgate::WebSocket.

use Test::Nginx::Socket 'no_plan';
use Solgate::Sim;
use Solgate::TestConf;
use Solgate::Gateway;
use Solgate::WebSocket;
use File::Spec;
use File::Temp ();

our @Ports = (19971, 19972, 19973);
our @WsPorts = (19974, 19975);     # sim-a's and sim-b's; sim-c has none
our $DeadWs = 19976;               # nothing listens there
sim_start(port => $Ports[0], args => ['--skip-rate', 0, '--quiet', '--ws-port', $WsPorts[0]]);
sim_start(port => $Ports[1], args => ['--skip-rate', 0, '--quiet', '--ws-port', $WsPorts[1]]);
sim_start(port => $Ports[2], args => ['--skip-rate', 0, '--quiet']);

our $HttpConfig = network_conf('mainnet', upstreams => [
        ['sim-a', "http://127.0.0.1:$Ports[0]", "ws=ws://127.0.0.1:$WsPorts[0]"],
        ['sim-b', "http://127.0.0.1:$Ports[1]", "ws=ws://127.0.0.1:$WsPorts[1]"],
        ['sim-c', "http://127.0.0.1:$Ports[2]"]])
  . network_conf('deadws', upstreams => [
        ['sim-a', "http://127.0.0.1:$Ports[0]", "ws=ws://127.0.0.1:$DeadWs"],
        ['sim-b', "http://127.0.0.1:$Ports[1]", "ws=ws://127.0.0.1:$WsPorts[1]"]])
  . network_conf('limited', settings => 'ws_max_connections 2;', upstreams => [
        ['sim-b', "http://127.0.0.1:$Ports[1]", "ws=ws://127.0.0.1:$WsPorts[1]"]])
  . network_conf('quiet', settings => 'ws_idle_timeout 1s;', upstreams => [
        ['sim-a', "http://127.0.0.1:$Ports[0]", "ws=ws://127.0.0.1:$WsPorts[0]"]]);

our $Config = solgate_locations('mainnet')
  . "    location /deadws { solgate_pass deadws; include \$TEST_NGINX_CONF_DIR/solgate_proxy.conf; }\n"
  . "    location /quiet { solgate_pass quiet; include \$TEST_NGINX_CONF_DIR/solgate_proxy.conf; }\n"
  . "    location /limited { solgate_pass limited; include \$TEST_NGINX_CONF_DIR/solgate_proxy.conf; }\n"
  . "    location /solgate/ { solgate_admin; }\n"
  . "    location = /metrics { solgate_metrics; }\n"
  . "    location = /status { solgate_status; }\n";

our $Bad = "[error]\n[alert]\n[crit]\n[emerg]\n";

# wss on both sides (TEST 18): a fast node behind a TLS front, and a TLS
# listener of the gateway whose send buffer is small, so a client that
# stops reading makes the relay keep what it could not send
our ($FastPort, $FastWs, $FastWss, $GatewayWss) = (19977, 19978, 19979, 19980);
our $Tls = File::Temp::tempdir(CLEANUP => 1);
system("openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=localhost -days 1 "
       . "-keyout $Tls/key.pem -out $Tls/cert.pem >/dev/null 2>&1") == 0
    or die "openssl could not make a test certificate\n";
sim_start(port => $FastPort, args => ['--skip-rate', 0, '--quiet', '--slot-ms', 1, '--ws-port', $FastWs]);
our $Subscribe = '{"jsonrpc":"2.0","id":1,"method":"slotSubscribe"}';

sub clean { for my $p (@Ports) { sim_fault($p, 'clear'); sim_reset($p) } }
sub admin { http_post(server_port(), $_[0], '') }
sub cordon { admin("/solgate/cordon?network=$_[1]&upstream=$_[0]&reason=test") }
sub uncordon { admin("/solgate/uncordon?network=$_[1]&upstream=$_[0]") }

# Waits up to $timeout s for each connection's close frame (or end);
# returns their close codes, undef for a connection still open.
sub close_codes {
    my ($timeout, @conns) = @_;
    my $deadline = Time::HiRes::time() + $timeout;
    my @codes;
    for my $ws (@conns) {
        my $end = $ws->wait_json($deadline - Time::HiRes::time(), sub { 0 });
        push @codes, $end ? ($end->{opcode} == 8 ? $end->{code} : 'eof') : undef;
    }
    return @codes;
}
sub state_of { upstream_state($_[0], $_[1]) || {} }
sub ws_sessions { sim_stats($_[0])->{ws_sessions} || 0 }
sub gateway_ws { Solgate::WebSocket->connect(port => server_port(), path => $_[0] || '/') }
sub is_slot_notification { ($_[0]{method} || '') eq 'slotNotification' }

# A subscribed connection through the gateway, with its first notification.
sub subscribed {
    my ($path) = @_;
    my $ws = gateway_ws($path) or die "no WebSocket: $Solgate::WebSocket::Error\n";
    $ws->send_text($Subscribe);
    my $ack = $ws->wait_json(5, sub { defined $_[0]{id} && $_[0]{id} == 1 });
    die "no subscription id\n" unless $ack && defined $ack->{result};
    return $ws;
}

# $n subscribers all on sim-a (sim-b cordoned while they connect).
sub all_on_sim_a {
    my ($n) = @_;
    cordon('sim-b', 'mainnet');
    my @conns = map { subscribed() } 1 .. $n;
    uncordon('sim-b', 'mainnet');
    is(ws_sessions($Ports[0]), $n, "all $n on sim-a");
    return @conns;
}

run_solgate_blocks(http_config => $HttpConfig, config => $Config, setup => 'clean();',
                   no_error_log => $Bad);

__DATA__

=== TEST 1: a client subscribes through the gateway and receives slot notifications from a node with ws=
--- wait_for eval
['the nodes are polled', sub { (state_of('sim-b')->{processed_slot} || 0) > 0 }, 5]
--- request eval
[step {
     my $ws = gateway_ws();
     ok($ws, 'the upgrade is answered 101 with the right accept key')
         or diag($Solgate::WebSocket::Error);
     $ws->send_text($Subscribe);
     my $ack = $ws->wait_json(5, sub { defined $_[0]{id} && $_[0]{id} == 1 });
     like($ack && $ack->{result}, qr/^\d+$/, 'slotSubscribe answered with a subscription id');
     my @n;
     while (@n < 3) {
         my $m = $ws->wait_json(5, \&is_slot_notification) or last;
         last unless is_slot_notification($m);
         push @n, $m->{params}{result}{slot};
     }
     is(scalar(@n), 3, "three slot notifications (@n)");
     ok($n[0] < $n[1] && $n[1] < $n[2], 'their slots rise');
     is(ws_sessions($Ports[0]) + ws_sessions($Ports[1]), 1,
        'the connection is held by one of the nodes with ws=');
     $ws->close(1000);
     wait_for('the node sees it closed',
              sub { ws_sessions($Ports[0]) + ws_sessions($Ports[1]) == 0 }, 5);
 },
 "POST /\n" . '{"jsonrpc":"2.0","id":2,"method":"getHealth"}']
--- response_body chomp
{"jsonrpc":"2.0","result":"ok","id":2}
--- error_log eval
qr/\[info\] .*solgate: websocket of network "mainnet" on upstream "sim-[ab]"/



=== TEST 2: a lagging node gets no subscriber while another node with ws= is current
--- setup
clean();
sim_fault($Ports[0], 'lag', slots => 80);
--- wait_for eval
['sim-a is seen lagging', sub { state_of('sim-a')->{lagging} }, 5]
--- request eval
[step {
     my @conns = map { subscribed() } 1 .. 6;
     is(ws_sessions($Ports[0]), 0, 'the lagging node holds none of 6 connections');
     is(ws_sessions($Ports[1]), 6, 'the current node holds all 6');
     $_->close(1000) for @conns;
 }]



=== TEST 3: a node whose pubsub port is down is failed over: the client lands on the other
--- wait_for eval
['the nodes are polled', sub { (state_of('sim-b', 'deadws')->{processed_slot} || 0) > 0 }, 5]
--- request eval
[step {
     my @conns = map { subscribed('/deadws') } 1 .. 4;
     is(scalar(@conns), 4, 'every client got a subscription');
     is(ws_sessions($Ports[1]), 4, 'all on sim-b');
     $_->close(1000) for @conns;
 }]
--- error_log eval
qr/solgate: upstream "sim-a" failed \(transport, no answer\), retrying on "sim-b"/
--- no_error_log
[alert]
[crit]
[emerg]



=== TEST 4: no node with ws= for the request is a 503 with a JSON-RPC error, and no upstream sees it
--- request eval
[step {
     my $ws = gateway_ws('/?use-upstream=sim-c');
     ok(!$ws, 'refused');
     is(Solgate::WebSocket::refused_status(), 503, 'HTTP 503');
     like(Solgate::WebSocket::refused_body(),
          qr/^\{"jsonrpc":"2.0","error":\{"code":-32601,"message":"Method not found: no upstream matching use-upstream selector \\"sim-c\\" has a WebSocket endpoint \(\\"ws=\\"\)"\},"id":null\}$/,
          'the body names the reason');
     is(sim_client_calls($Ports[2]), 0, 'sim-c saw nothing');
     ok(!Solgate::WebSocket->connect(port => server_port(), path => '/',
                                     headers => {'X-Solgate-Use-Upstream' => 'sim-c'}),
        'refused for the selector in the header too');
     like(Solgate::WebSocket::refused_body(), qr/selector \\"sim-c\\" has a WebSocket endpoint/,
          'which it names');
     my $bad = gateway_ws('/?use-upstream=' . 'a%20%7C');
     is(Solgate::WebSocket::refused_status(), 400, 'a bad selector is a 400');
 }]



=== TEST 5: a quiet connection is closed after ws_idle_timeout, a subscribed one is kept
--- request eval
[step {
     my $idle = gateway_ws('/quiet') or die $Solgate::WebSocket::Error;
     my $busy = subscribed('/quiet');
     my $end = $idle->next_message(4);
     ok($end && $end->{opcode} == -1, 'the quiet connection is closed within 4 s');
     my $last;
     for (1 .. 8) {
         $last = $busy->wait_json(2, \&is_slot_notification) or last;
     }
     ok($last && is_slot_notification($last),
        'the subscribed one still receives notifications after 2 s');
     $busy->close(1000);
 }]



=== TEST 6: ws= must be a ws:// or wss:// URL
--- http_config
    solgate_network mainnet { upstream a http://127.0.0.1:1 ws=http://127.0.0.1:2; }
--- config
--- must_die
--- error_log
invalid "ws=" "http://127.0.0.1:2" in upstream "a": must start with "ws://" or "wss://"



=== TEST 7: an operator-cordoned node's subscribers are closed with 1012 within 2 s and reconnect to the other node
--- wait_for eval
['the nodes are polled', sub { (state_of('sim-a')->{processed_slot} || 0) > 0 }, 5]
--- request eval
[step {
     my @conns = all_on_sim_a(5);
     my $t0 = Time::HiRes::time();
     cordon('sim-a', 'mainnet');
     my @codes = close_codes(3, @conns);
     my $took = Time::HiRes::time() - $t0;
     is_deeply(\@codes, [(1012) x 5], 'each got close 1012 ("service restart") within the 3 s bound');
     note(sprintf('the last close came %.2f s after the cordon', $took));
     my @again = map { subscribed() } 1 .. 5;
     is(ws_sessions($Ports[1]), 5, 'reconnected, all 5 are on sim-b');
     wait_for('sim-a holds none', sub { ws_sessions($Ports[0]) == 0 }, 5);
     my $m = metrics_text();
     like($m, qr/^solgate_ws_closed_total\{network="mainnet",upstream="sim-a",cause="cordoned"\} 5$/m,
          'metric: 5 closed off sim-a as cordoned');
     like($m, qr/^solgate_ws_connections\{network="mainnet",upstream="sim-b"\} 5$/m,
          'metric: 5 open on sim-b');
     like($m, qr/^solgate_ws_connections_total\{network="mainnet",upstream="sim-a"\} 5$/m,
          'metric: sim-a had accepted 5');
     my ($bytes) = $m =~ /^solgate_ws_bytes_total\{network="mainnet",upstream="sim-a",direction="to_client"\} (\d+)$/m;
     cmp_ok($bytes || 0, '>', 5 * 40, "metric: bytes sim-a sent its clients ($bytes)");
     $_->close(1000) for @again;
     uncordon('sim-a', 'mainnet');
 }]
--- error_log eval
qr/\[info\] .*solgate: closing websocket on upstream "sim-a" of network "mainnet" \(cordoned\) with 1012, so its client reconnects to another node/



=== TEST 8: a node that falls behind has its subscribers moved
--- wait_for eval
['the nodes are polled', sub { (state_of('sim-a')->{processed_slot} || 0) > 0 }, 5]
--- request eval
[step {
     my @conns = all_on_sim_a(3);
     sim_fault($Ports[0], 'lag', slots => 80);
     wait_for('sim-a is seen lagging', sub { state_of('sim-a')->{lagging} }, 5);
     is_deeply([close_codes(3, @conns)], [(1012) x 3], 'each closed with 1012');
 }]
--- error_log eval
qr/solgate: closing websocket on upstream "sim-a" of network "mainnet" \(lagging\) with 1012/



=== TEST 9: with nowhere better to go, subscribers stay on a cordoned node
--- request eval
[step {
     my $ws = subscribed('/quiet');
     cordon('sim-a', 'quiet');
     my ($code) = close_codes(1.5, $ws);
     ok(!defined $code, 'still open 1.5 s after the cordon');
     my $n = $ws->wait_json(2, \&is_slot_notification);
     ok($n && is_slot_notification($n), 'and still receiving notifications');
     uncordon('sim-a', 'quiet');
     $ws->close(1000);
 }]



=== TEST 10: @solana/kit's createSolanaRpcSubscriptions receives slotNotifications through the gateway
--- request eval
[step {
     SKIP: {
         my $kit = File::Spec->catfile(Test::Nginx::Util::repo_root(), 'tools', 'kit-client');
         skip 'node or tools/kit-client/node_modules missing', 2
             unless -d "$kit/node_modules/\@solana/kit" && `node --version 2>/dev/null` =~ /^v/;
         my $out = `timeout 30 node $kit/slot-notifications.mjs --url ws://127.0.0.1:@{[server_port()]}/ --count 3 --timeout-s 15 2>&1`;
         is($?, 0, 'kit got 3 slot notifications') or diag($out);
         my @slots = $out =~ /^slot (\d+) parent \d+ root \d+$/mg;
         ok(@slots == 3 && $slots[0] < $slots[1] && $slots[1] < $slots[2], "rising slots: @slots");
     }
 }]
--- error_log eval
qr/solgate: websocket of network "mainnet" on upstream "sim-[ab]"/



=== TEST 11: ws_max_connections: past the limit an upgrade is a 503 with a JSON-RPC body, and a slot frees again
--- wait_for eval
['sim-b is polled', sub { (state_of('sim-b', 'limited')->{processed_slot} || 0) > 0 }, 5]
--- request eval
[step {
     my @conns = map { subscribed('/limited') } 1 .. 2;
     my $third = gateway_ws('/limited');
     ok(!$third, 'the third is refused');
     is(Solgate::WebSocket::refused_status(), 503, 'HTTP 503');
     is(Solgate::WebSocket::refused_header('Retry-After'), '5', 'with Retry-After: 5');
     like(Solgate::WebSocket::refused_body(),
          qr/^\{"jsonrpc":"2.0","error":\{"code":-32091,"message":"WebSocket connections full: network limited holds its 2 \(ws_max_connections\); try again later"\},"id":null\}$/,
          'the body says why');
     is(ws_sessions($Ports[1]), 2, 'the node holds only the 2');
     $conns[0]->close(1000);
     my $again;
     wait_for('a slot is free again', sub { $again = gateway_ws('/limited') }, 5);
     $_->close(1000) for $conns[1], $again;
 }]



=== TEST 12: an operator drain moves a node's subscribers with 1012, and new ones go to the other node
--- wait_for eval
['the nodes are polled', sub { (state_of('sim-a')->{processed_slot} || 0) > 0 }, 5]
--- request eval
[step {
     my @conns = all_on_sim_a(3);
     my $res = admin('/solgate/drain?network=mainnet&upstream=sim-a');
     is($res->{status}, 200, 'drain answered 200');
     like($res->{body}, qr/draining the WebSocket subscribers of upstream \\"sim-a\\" of network \\"mainnet\\" for 30s/,
          'and says what it does');
     is_deeply([close_codes(3, @conns)], [(1012) x 3], 'each closed with 1012');
     my @again = map { subscribed() } 1 .. 4;
     is(ws_sessions($Ports[1]), 4, 'new subscriptions go to sim-b');
     my $a = state_of('sim-a');
     # its exact value is checked with a fake clock (StatusRenderState);
     # here only that the 30 s drain shows, not how much of it went by
     ok($a->{drain_for_ms} > 0 && $a->{drain_for_ms} <= 30000,
        "the state shows the drain's time left ($a->{drain_for_ms} ms)");
     wait_for('and the subscriptions sim-b holds', sub {
         (state_of('sim-b')->{ws_open} || 0) == 4 }, 5);
     like(http_get(server_port(), '/status')->{body}, qr/>draining \d+ s</,
          'the status page says it drains');
     like(metrics_text(), qr/^solgate_ws_closed_total\{network="mainnet",upstream="sim-a",cause="drained"\} 3$/m,
          'metric: 3 drained');
     $_->close(1000) for @again;
     my $bad = admin('/solgate/drain?network=mainnet&upstream=sim-c');
     is($bad->{status}, 400, 'an upstream without ws= cannot be drained');
 }]
--- error_log eval
[qr/operator draining the WebSocket subscribers of upstream "sim-a" of network "mainnet" for 30s/,
 qr/solgate: closing websocket on upstream "sim-a" of network "mainnet" \(drained\) with 1012/]



=== TEST 13: a reload closes the old worker's subscribers with 1012; they reconnect to a new worker and the old one exits
--- workers: 1
--- wait_for eval
['the nodes are polled', sub { (state_of('sim-b')->{processed_slot} || 0) > 0 }, 5]
--- request eval
[step {
     my @conns = map { subscribed() } 1 .. 3;
     my %old = map { ($_ => 1) } nginx_workers();
     nginx_reload();
     is_deeply([close_codes(5, @conns)], [(1012) x 3], 'each closed with 1012 by the old worker');
     wait_for('the old worker exited', sub {
         my @w = nginx_workers();
         return @w && !grep { $old{$_} } @w;
     }, 10);
     my $again = subscribed();
     ok($again->wait_json(5, \&is_slot_notification), 'a new subscription gets notifications from a new worker');
     my $m = metrics_text();
     my $shutdown = 0;
     $shutdown += $1 while $m =~ /^solgate_ws_closed_total\{network="mainnet",upstream="[^"]+",cause="shutdown"\} (\d+)$/mg;
     is($shutdown, 3, 'metric: 3 closed as shutdown');
     $again->close(1000);
 }]
--- error_log eval
qr/solgate: closing websocket on upstream "sim-[ab]" of network "mainnet" \(shutdown\) with 1012, so its client reconnects \(this worker is exiting: a reload or a stop\)/



=== TEST 14: a subscription outlives its request: logged as 101 while open, an early frame reaches the node, the node's close ends it, bytes counted both ways
--- wait_for eval
['the nodes are polled', sub { (state_of('sim-b')->{processed_slot} || 0) > 0 }, 5]
--- request eval
[step {
     cordon('sim-b', 'mainnet');
     my $ws = Solgate::WebSocket->connect(port => server_port(), path => '/early', early => $Subscribe)
         or die $Solgate::WebSocket::Error;
     my $ack = $ws->wait_json(5, sub { defined $_[0]{id} && $_[0]{id} == 1 });
     like($ack && $ack->{result}, qr/^\d+$/, 'the frame sent with the upgrade was answered');
     ok($ws->wait_json(5, \&is_slot_notification), 'notifications follow');
     my $log = File::Spec->catfile(Test::Nginx::Util::servroot(), 'logs', 'access.log');
     wait_for('the access log has the upgrade', sub {
         open my $fh, '<', $log or return 0;
         return scalar grep { m{"GET /early HTTP/1.1" 101 } } <$fh>;
     }, 5);
     sim_kill($Ports[0]);
     my $end = $ws->wait_json(5, sub { 0 });
     ok($end && $end->{opcode} == -1, "the node's end ends the client's connection");
     sim_start(port => $Ports[0], args => ['--skip-rate', 0, '--quiet', '--ws-port', $WsPorts[0]]);
     uncordon('sim-b', 'mainnet');
     my %bytes;
     wait_for('the bytes are counted', sub {
         my $m = metrics_text();
         %bytes = $m =~ /^solgate_ws_bytes_total\{network="mainnet",upstream="sim-a",direction="(\w+)"\} (\d+)$/mg;
         return ($bytes{from_client} || 0) > 0;
     }, 5);
     # the frame is 6 bytes of header and mask and the call; the node's
     # answer and at least one notification came back
     is($bytes{from_client}, 6 + length($Subscribe), 'from the client: the one frame');
     cmp_ok($bytes{to_client}, '>', 100, 'to the client: the answer and notifications');
 }]
--- config eval
$Config . "    location /early { solgate_pass mainnet; include \$TEST_NGINX_CONF_DIR/solgate_proxy.conf; }\n"



=== TEST 15: accountSubscribe through the gateway: a change to the account on the node arrives as one accountNotification with its lamports
--- wait_for eval
['the nodes are polled', sub { (state_of('sim-b')->{processed_slot} || 0) > 0 }, 5]
--- request eval
[step {
     my $key = '7xLk17EQQ5KLDLDe44wCmupJKJjTGd8hs3eSVVhCx932';
     cordon('sim-b', 'mainnet');
     my $ws = gateway_ws() or die $Solgate::WebSocket::Error;
     $ws->send_json({jsonrpc => '2.0', id => 7, method => 'accountSubscribe',
                     params => [$key, {commitment => 'processed', encoding => 'base64'}]});
     my $ack = $ws->wait_json(5, sub { defined $_[0]{id} && $_[0]{id} == 7 });
     like($ack && $ack->{result}, qr/^\d+$/, 'accountSubscribe answered with a subscription id');
     my $res = http_post($Ports[0], "/_sim/account?pubkey=$key&lamports=4200000", '');
     is($res->{status}, 200, 'the node records the change');
     my $n = $ws->wait_json(5, sub { ($_[0]{method} || '') eq 'accountNotification' });
     is($n && $n->{params}{result}{value}{lamports}, 4200000, 'the notification carries the new lamports');
     is($n && $n->{params}{subscription}, $ack->{result}, 'for the subscription');
     my $again = $ws->wait_json(1, sub { ($_[0]{method} || '') eq 'accountNotification' });
     ok(!$again, 'one notification for one change');
     $ws->close(1000);
     uncordon('sim-b', 'mainnet');
 }]



=== TEST 16: a worker killed with SIGKILL leaves no subscription counted: the gauge drops and ws_max_connections frees again
--- workers: 1
--- wait_for eval
['sim-b is polled', sub { (state_of('sim-b', 'limited')->{processed_slot} || 0) > 0 }, 5]
--- request eval
[step {
     my @conns = map { subscribed('/limited') } 1 .. 2;
     ok(!gateway_ws('/limited'), 'the network is full');
     my ($worker) = nginx_workers();
     kill 'KILL', $worker;
     is_deeply([close_codes(5, @conns)], ['eof', 'eof'], 'the clients lose their connections');
     wait_for('a new worker', sub { my @w = nginx_workers(); @w && $w[0] != $worker }, 10);
     my $open = qr/^solgate_ws_connections\{network="limited",upstream="sim-b"\} (\d+)$/m;
     wait_for('the gauge shows none open', sub { (metrics_text() =~ $open)[0] eq '0' }, 5);
     my @again = map { subscribed('/limited') } 1 .. 2;
     is(scalar(@again), 2, 'two new subscriptions fit');
     $_->close(1000) for @again;
 }]
--- no_error_log
[error]
[crit]
[emerg]



=== TEST 17: ws= names an upstream {} block: the subscription goes to the block's server
--- http_config eval
"    upstream pubsub_a { server 127.0.0.1:$WsPorts[0]; }\n" . $HttpConfig
  . network_conf('byblock', upstreams => [
        ['sim-a', "http://127.0.0.1:$Ports[0]", "ws=ws://pubsub_a"]])
--- config eval
$Config . "    location /byblock { solgate_pass byblock; include \$TEST_NGINX_CONF_DIR/solgate_proxy.conf; }\n"
--- wait_for eval
['sim-a is polled', sub { (state_of('sim-a', 'byblock')->{processed_slot} || 0) > 0 }, 5]
--- request eval
[step {
     my $ws = subscribed('/byblock');
     ok($ws->wait_json(5, \&is_slot_notification), 'notifications through the block');
     is(ws_sessions($Ports[0]), 1, "sim-a's pubsub port holds it");
     $ws->close(1000);
 }]



=== TEST 18: wss on both sides: a client over TLS that stops reading for 3 s while notifications pour in misses none
--- http_config eval
$HttpConfig
  . network_conf('fast', upstreams => [
        ['sim-f', "http://127.0.0.1:$FastPort", "ws=wss://127.0.0.1:$FastWss"]])
  . <<"_EOC_"
    server {
        listen 127.0.0.1:$FastWss ssl;
        ssl_certificate $Tls/cert.pem;
        ssl_certificate_key $Tls/key.pem;
        location / {
            proxy_pass http://127.0.0.1:$FastWs;
            proxy_http_version 1.1;
            proxy_set_header Upgrade \$http_upgrade;
            proxy_set_header Connection upgrade;
            proxy_read_timeout 1h;
        }
    }
    server {
        listen 127.0.0.1:$GatewayWss ssl sndbuf=4k;
        ssl_certificate $Tls/cert.pem;
        ssl_certificate_key $Tls/key.pem;
        location / { solgate_pass fast; include \$TEST_NGINX_CONF_DIR/solgate_proxy.conf; }
        location \@solgate_retry { solgate_pass fast; include \$TEST_NGINX_CONF_DIR/solgate_proxy.conf; }
    }
_EOC_
--- wait_for eval
['sim-f is polled', sub { (state_of('sim-f', 'fast')->{processed_slot} || 0) > 0 }, 5]
--- request eval
[step {
     my $ws = Solgate::WebSocket->connect(port => $GatewayWss, tls => 1)
         or die $Solgate::WebSocket::Error;
     $ws->send_text($Subscribe);
     ok($ws->wait_json(5, \&is_slot_notification), 'notifications over wss');
     Time::HiRes::sleep(3);      # the slow client's pause, not a wait
     my @slots;
     while (@slots < 2000) {
         my $m = $ws->next_message(5) or last;
         last unless $m->{opcode} == 1;
         push @slots, $1 if $m->{text} =~ /"slot":(\d+)\}/;
     }
     cmp_ok(scalar(@slots), '>=', 2000, 'it reads on after the pause');
     my @gaps = grep { $slots[$_] != $slots[$_ - 1] + 1 } 1 .. $#slots;
     is(scalar(@gaps), 0, 'every slot in order, none lost or torn')
         or diag("first gap at $slots[$gaps[0] - 1] -> $slots[$gaps[0]]");
     $ws->close(1000);
 }]



=== TEST 19: an upgrade over HTTP/1.0 is no subscription: the node never sees it, the client gets the GET refusal
--- raw_request eval
"GET / HTTP/1.0\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
--- error_code: 405
--- response_body_like: must be sent with POST



=== TEST 20: a client that takes nothing is closed once its writes stall for ws_idle_timeout, though the node keeps sending
--- http_config eval
$HttpConfig
  . network_conf('stuck', settings => 'ws_idle_timeout 1s;', upstreams => [
        ['sim-f', "http://127.0.0.1:$FastPort", "ws=ws://127.0.0.1:$FastWs"]])
  . <<"_EOC_"
    server {
        listen 127.0.0.1:$GatewayWss sndbuf=4k;
        location / { solgate_pass stuck; include \$TEST_NGINX_CONF_DIR/solgate_proxy.conf; }
        location \@solgate_retry { solgate_pass stuck; include \$TEST_NGINX_CONF_DIR/solgate_proxy.conf; }
    }
_EOC_
--- wait_for eval
['sim-f is polled', sub { (state_of('sim-f', 'stuck')->{processed_slot} || 0) > 0 }, 5]
--- request eval
[step {
     my $ws = Solgate::WebSocket->connect(port => $GatewayWss) or die $Solgate::WebSocket::Error;
     $ws->send_text($Subscribe) for 1 .. 20;    # a fast stream
     wait_for('the gateway gives up on it', sub {
         open my $fh, '<', Test::Nginx::Util::error_log_path() or return 0;
         return scalar grep { /websocket client took nothing for 1000 ms/ } <$fh>;
     }, 15);
     wait_for('the node sees it gone', sub { ws_sessions($FastPort) == 0 }, 5);
 }]
--- no_error_log
[error]
[crit]
[alert]



=== TEST 21: a move while the client is behind: it gets what the node sent, whole, then its 1012
--- http_config eval
# sim-f's 1 ms slots leave sim-b's far behind: max_slot_lag off, so sim-b
# is fit to take sim-f's subscribers
$HttpConfig
  . network_conf('fastmove', settings => 'max_slot_lag 0;', upstreams => [
        ['sim-f', "http://127.0.0.1:$FastPort", "ws=ws://127.0.0.1:$FastWs"],
        ['sim-b', "http://127.0.0.1:$Ports[1]", "ws=ws://127.0.0.1:$WsPorts[1]"]])
  . <<"_EOC_"
    server {
        listen 127.0.0.1:$GatewayWss sndbuf=4k;
        location / { solgate_pass fastmove; include \$TEST_NGINX_CONF_DIR/solgate_proxy.conf; }
        location \@solgate_retry { solgate_pass fastmove; include \$TEST_NGINX_CONF_DIR/solgate_proxy.conf; }
    }
_EOC_
--- wait_for eval
['both are polled', sub { (state_of('sim-f', 'fastmove')->{processed_slot} || 0) > 0
                          && (state_of('sim-b', 'fastmove')->{processed_slot} || 0) > 0 }, 5]
--- request eval
[step {
     cordon('sim-b', 'fastmove');
     my $ws = Solgate::WebSocket->connect(port => $GatewayWss) or die $Solgate::WebSocket::Error;
     $ws->send_text($Subscribe) for 1 .. 20;    # a fast stream
     uncordon('sim-b', 'fastmove');
     cordon('sim-f', 'fastmove');
     Time::HiRes::sleep(1.5);    # the client's pause, not a wait
     my ($texts, $end) = (0, undef);
     my $deadline = Time::HiRes::time() + 10;
     while (Time::HiRes::time() < $deadline) {
         my $m = $ws->next_message(5) or last;
         if ($m->{opcode} == 1) { $texts++; next }
         if ($m->{opcode} == 8 || $m->{opcode} == -1) { $end = $m; last }
     }
     cmp_ok($texts, '>', 100, "the backlog came first ($texts messages)");
     is($end && $end->{opcode}, 8, 'then a close frame, not a cut');
     is($end && $end->{code}, 1012, 'with code 1012');
 }]
--- error_log eval
qr/closing websocket on upstream "sim-f" of network "fastmove" \(cordoned\) with 1012/



=== TEST 22: a malformed upgrade is answered by the gateway with a JSON-RPC error, never handed to a node
--- wait_for eval
['the nodes are polled', sub { (state_of('sim-b')->{processed_slot} || 0) > 0 }, 5]
--- raw_request eval
my $head = "GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\n";
my $key = "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n";
[$head . "Connection: keep-alive\r\n$key" . "Sec-WebSocket-Version: 13\r\n\r\n",
 $head . "Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\r\n",
 $head . "Connection: Upgrade\r\nSec-WebSocket-Key: dGhl\x01SBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
 $head . "Connection: Upgrade\r\n$key" . "Sec-WebSocket-Version: 8\r\n\r\n",
 $head . "Connection: Upgrade\r\n$key" . "Sec-WebSocket-Version: 13\r\nContent-Length: 5\r\n\r\nhello"]
--- error_code eval
[400, 400, 400, 426, 400]
--- response_body_like eval
[qr/^\{"jsonrpc":"2.0","error":\{"code":-32600,"message":"Invalid request: a WebSocket upgrade must say \\"Connection: Upgrade\\""\},"id":null\}$/,
 qr/Sec-WebSocket-Key of 16 bytes in base64/,
 qr/Sec-WebSocket-Key of 16 bytes in base64/,
 qr/only WebSocket version 13 is served/,
 qr/carries no body/]
--- response_headers eval
[undef, undef, undef, "Sec-WebSocket-Version: 13", undef]
--- check
is(ws_sessions($Ports[0]) + ws_sessions($Ports[1]), 0, 'no node holds a session');
--- no_error_log
upstream prematurely closed
[alert]
