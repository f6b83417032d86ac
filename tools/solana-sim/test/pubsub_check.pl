#!/usr/bin/env perl
# The simulator's pubsub port, checked with the suites' WebSocket client:
# handshake, slotSubscribe / rootSubscribe notifications in agave's shapes,
# unsubscribes, errors, ping, stats, and a stalled node going quiet.
# Run by sim_smoke.sh:  perl -I t/lib pubsub_check.pl RPC_PORT WS_PORT
# Prints "ok   - ..." / "FAIL - ..." lines; exits with the number of failures.
use strict;
use warnings;

use JSON::PP ();
use Solgate::WebSocket;

my ($rpc_port, $ws_port) = @ARGV;
die "usage: pubsub_check.pl RPC_PORT WS_PORT\n" unless $ws_port;

my $fail = 0;
sub check {
    my ($name, $ok) = @_;
    print $ok ? "ok   - $name\n" : "FAIL - $name\n";
    $fail++ unless $ok;
}

sub ctl {
    my ($path) = @_;
    my $out = `curl -s --max-time 5 http://127.0.0.1:$rpc_port$path`;
    return $out;
}

my $ws = Solgate::WebSocket->connect(port => $ws_port);
check("pubsub handshake answers 101 with the right accept key", $ws);
exit 1 unless $ws;

$ws->send_text('{"jsonrpc":"2.0","id":1,"method":"slotSubscribe"}');
my $sub = $ws->next_json(5);
check("slotSubscribe answers a subscription id",
      $sub && defined $sub->{result} && $sub->{result} =~ /^\d+$/ && $sub->{id} == 1);
my $sid = $sub ? $sub->{result} : -1;

my @slots;
while (@slots < 3) {
    my $n = $ws->wait_json(5, sub { ($_[0]{method} || '') eq 'slotNotification' });
    last unless $n && $n->{method};
    push @slots, $n;
}
check("three slotNotifications within 5 s", @slots == 3);
my $shape_ok = @slots == 3;
for my $n (@slots) {
    my $r = $n->{params}{result};
    $shape_ok &&= $n->{jsonrpc} eq '2.0' && $n->{params}{subscription} == $sid
        && defined $r->{slot} && defined $r->{parent} && defined $r->{root}
        && $r->{parent} < $r->{slot} && $r->{root} < $r->{slot};
}
check("slotNotification has agave's shape {parent, root, slot} and the subscription", $shape_ok);
check("slots rise", @slots == 3 && $slots[0]{params}{result}{slot} < $slots[1]{params}{result}{slot}
                    && $slots[1]{params}{result}{slot} < $slots[2]{params}{result}{slot});

$ws->send_text('{"jsonrpc":"2.0","id":2,"method":"rootSubscribe"}');
my $root_sub = $ws->wait_json(5, sub { defined $_[0]{id} && $_[0]{id} == 2 });
check("rootSubscribe answers an id", $root_sub && defined $root_sub->{result});
my $root = $ws->wait_json(5, sub { ($_[0]{method} || '') eq 'rootNotification' });
check("rootNotification carries the root slot",
      $root && $root->{params}{result} =~ /^\d+$/ && $root->{params}{subscription} == $root_sub->{result});

$ws->send_text("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"slotUnsubscribe\",\"params\":[$sid]}");
my $unsub = $ws->wait_json(5, sub { defined $_[0]{id} && $_[0]{id} == 3 });
check("slotUnsubscribe answers true", $unsub && JSON::PP::is_bool($unsub->{result}) && $unsub->{result});
$ws->send_text("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"slotUnsubscribe\",\"params\":[$sid]}");
my $again = $ws->wait_json(5, sub { defined $_[0]{id} && $_[0]{id} == 4 });
check("unsubscribing twice is -32602", $again && $again->{error} && $again->{error}{code} == -32602);
$ws->send_text('{"jsonrpc":"2.0","id":5,"method":"voteSubscribe"}');
my $unknown = $ws->wait_json(5, sub { defined $_[0]{id} && $_[0]{id} == 5 });
check("an unknown method is -32601", $unknown && $unknown->{error}{code} == -32601);
$ws->send_text('{"jsonrpc":');
my $bad = $ws->wait_json(5, sub { $_[0]{error} && $_[0]{error}{code} == -32700 });
check("bad JSON is -32700", $bad);

$ws->ping('hi');
my $pong;
for (1 .. 20) {
    my $m = $ws->next_message(2) or last;
    if ($m->{opcode} == 10) { $pong = $m; last }
}
check("ping answered with pong", $pong && $pong->{text} eq 'hi');

my $stats = eval { JSON::PP->new->decode(ctl('/_sim/stats')) } || {};
check("stats count the open session", ($stats->{ws_sessions} || 0) == 1 && ($stats->{ws_opened} || 0) >= 1);

# A stalled node sends no more slot notifications.
my $ws2 = Solgate::WebSocket->connect(port => $ws_port);
$ws2->send_text('{"jsonrpc":"2.0","id":1,"method":"slotSubscribe"}');
$ws2->wait_json(5, sub { ($_[0]{method} || '') eq 'slotNotification' });
ctl('/_sim/fault/stall?on=1');
# drain what was sent before the stall took effect
while ($ws2->wait_json(0.5, sub { ($_[0]{method} || '') eq 'slotNotification' })) { }
my $late = $ws2->wait_json(1.5, sub { ($_[0]{method} || '') eq 'slotNotification' });
check("a stalled node sends no slot notification", !$late);
ctl('/_sim/fault/clear');
my $resumed = $ws2->wait_json(5, sub { ($_[0]{method} || '') eq 'slotNotification' });
check("notifications resume when the stall clears", $resumed);

$ws->close(1000);
$ws2->close(1000);

# The RPC port takes no upgrade: agave serves pubsub on its own port.
my $plain = Solgate::WebSocket->connect(port => $rpc_port);
check("the RPC port refuses the upgrade with 405", !$plain && Solgate::WebSocket::refused_status() == 405);

exit $fail;
