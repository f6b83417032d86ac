#!/usr/bin/env perl
# The simulator's pubsub port, checked with the suites' WebSocket client:
# handshake, slotSubscribe / rootSubscribe notifications in agave's shapes,
# unsubscribes, errors, ping, stats, and a stalled node going quiet; then
# accountSubscribe against changes recorded with /_sim/account, at each
# commitment, with several accounts and subscribers, an unsubscribe and a
# rollback. Every wait is bounded and ends on an event, never a fixed sleep.
# Run by sim_smoke.sh:  perl -I t/lib pubsub_check.pl RPC_PORT WS_PORT
# Prints "ok   - ..." / "FAIL - ..." lines; exits with the number of failures.
use strict;
use warnings;

use JSON::PP ();
use Solgate::WebSocket;
use Time::HiRes ();

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

# --- accountSubscribe -----------------------------------------------------------

# rpc(METHOD, PARAMS...) -> the decoded response ({} when there is none)
sub rpc {
    my ($method, @params) = @_;
    my $body = JSON::PP->new->encode({jsonrpc => '2.0', id => 1, method => $method, params => \@params});
    my $out = `curl -s --max-time 5 -H 'Content-Type: application/json' -d '$body' http://127.0.0.1:$rpc_port/`;
    return eval { JSON::PP->new->decode($out) } || {};
}

# change(KEY, LAMPORTS) -> (HTTP status, decoded body) of POST /_sim/account
sub change {
    my ($query) = @_;
    my $out = `curl -s --max-time 5 -X POST -w '\\n%{http_code}' 'http://127.0.0.1:$rpc_port/_sim/account?$query'`;
    my ($body, $status) = $out =~ /\A(.*)\n(\d+)\z/s;
    return ($status || 0, eval { JSON::PP->new->decode($body) } || {});
}

my $next_id = 100;
my %backlog;  # per connection: messages read while waiting for an answer, for read_until
# request(WS, METHOD, PARAMS...) -> the answer to that call
sub request {
    my ($ws, $method, @params) = @_;
    my $id = ++$next_id;
    $ws->send_json({jsonrpc => '2.0', id => $id, method => $method, params => \@params});
    my ($answer, @before) = read_until($ws, 5, sub { defined $_[0]{id} && $_[0]{id} == $id });
    push @{$backlog{$ws}}, @before;
    return $answer || {};
}

# read_until(WS, SECONDS, TEST) -> (the first message passing TEST or undef,
# every message read before it, the backlog's first)
sub read_until {
    my ($ws, $timeout, $test) = @_;
    my @seen;
    while (my $m = shift @{$backlog{$ws} ||= []}) {
        return ($m, @seen) if $test->($m);
        push @seen, $m;
    }
    my $deadline = Time::HiRes::time() + $timeout;
    while ((my $left = $deadline - Time::HiRes::time()) > 0) {
        my $m = $ws->next_json($left) or last;
        return ($m, @seen) if $test->($m);
        push @seen, $m;
    }
    return (undef, @seen);
}

sub is_note_for {
    my ($sub) = @_;
    return sub { ($_[0]{method} || '') eq 'accountNotification' && $_[0]{params}{subscription} == $sub };
}
sub notes_for { my ($sub, @messages) = @_; return grep { is_note_for($sub)->($_) } @messages }

# lamports_at(KEY, COMMITMENT) -> (lamports, context slot)
sub lamports_at {
    my ($key, $commitment) = @_;
    my $r = rpc('getBalance', $key, {commitment => $commitment});
    return ($r->{result}{value}, $r->{result}{context}{slot});
}

my $key = 'So11111111111111111111111111111111111111112';
my $quiet_key = 'Vote111111111111111111111111111111111111111';

my $acct = Solgate::WebSocket->connect(port => $ws_port);
my $other = Solgate::WebSocket->connect(port => $ws_port);
check("two more pubsub connections open", $acct && $other);
exit($fail + 1) unless $acct && $other;

my $r = request($acct, 'accountSubscribe', 'not-a-pubkey');
check("accountSubscribe with an invalid pubkey is -32602 'Invalid Request: Invalid pubkey provided'",
      $r->{error} && $r->{error}{code} == -32602
      && $r->{error}{message} eq 'Invalid Request: Invalid pubkey provided');
$r = request($acct, 'accountSubscribe');
check("accountSubscribe without params is -32602", $r->{error} && $r->{error}{code} == -32602);
$r = request($acct, 'accountSubscribe', $key, {encoding => 'hex'});
check("accountSubscribe with an unknown encoding is -32602", $r->{error} && $r->{error}{code} == -32602);
$r = request($acct, 'accountUnsubscribe', 987654);
check("accountUnsubscribe of an unknown id is -32602 'Invalid subscription id.'",
      $r->{error} && $r->{error}{code} == -32602 && $r->{error}{message} eq 'Invalid subscription id.');

my ($status, $body) = change("lamports=5");
check("/_sim/account without a pubkey is 400 with a JSON message",
      $status == 400 && $body->{ok} == 0 && ($body->{error} || '') =~ /pubkey/);
($status, $body) = change("pubkey=0OIl&lamports=5");
check("/_sim/account with an invalid pubkey is 400", $status == 400 && ($body->{error} || '') =~ /invalid pubkey/);
($status, $body) = change("pubkey=$key&lamports=-1");
check("/_sim/account with bad lamports is 400", $status == 400 && ($body->{error} || '') =~ /lamports/);
($status, $body) = change("pubkey=$key");
check("/_sim/account without lamports is 400", $status == 400 && ($body->{error} || '') =~ /lamports/);

# One account watched at every commitment, another that never changes, and a
# second connection watching the first account too.
my $p_sub = request($acct, 'accountSubscribe', $key, {commitment => 'processed', encoding => 'base64'})->{result};
my $c_sub = request($acct, 'accountSubscribe', $key, {commitment => 'confirmed', encoding => 'base58'})->{result};
my $f_sub = request($acct, 'accountSubscribe', $key)->{result};
my $q_sub = request($acct, 'accountSubscribe', $quiet_key, {commitment => 'processed'})->{result};
my $o_sub = request($other, 'accountSubscribe', $key, {commitment => 'processed'})->{result};
check("accountSubscribe answers a subscription id (a number)",
      defined $p_sub && $p_sub =~ /^\d+$/ && !ref $p_sub && defined $c_sub && defined $f_sub
      && defined $q_sub && defined $o_sub);

my ($before) = lamports_at($key, 'processed');
my $lamports = $before + 1234567;
($status, $body) = change("pubkey=$key&lamports=$lamports");
my $change_slot = $body->{slot} || 0;
check("/_sim/account answers {pubkey, lamports, slot}",
      $status == 200 && $body->{pubkey} eq $key && $body->{lamports} == $lamports && $change_slot > 0);

my ($note, @seen) = read_until($acct, 5, is_note_for($p_sub));
my $value = $note ? $note->{params}{result}{value} : {};
check("a processed subscription gets an accountNotification with the new lamports",
      $note && $value->{lamports} == $lamports && $note->{jsonrpc} eq '2.0');
check("its context slot is at or past the change's slot",
      $note && $note->{params}{result}{context}{slot} >= $change_slot
      && !exists $note->{params}{result}{context}{apiVersion});
check("its value has getAccountInfo's shape (base64 data, system owner, rent exempt)",
      $note && ref $value->{data} eq 'ARRAY' && $value->{data}[1] eq 'base64'
      && $value->{owner} eq '11111111111111111111111111111111' && JSON::PP::is_bool($value->{executable})
      && !$value->{executable} && $value->{rentEpoch} eq '18446744073709551615' && $value->{space} == 0);
my ($other_note) = read_until($other, 5, is_note_for($o_sub));
check("a second connection's subscription to the account is notified too",
      $other_note && $other_note->{params}{result}{value}{lamports} == $lamports);

my ($now, $slot) = lamports_at($key, 'processed');
check("getBalance at processed answers the new value", $now == $lamports && $slot >= $change_slot);
$r = rpc('getAccountInfo', $key, {commitment => 'processed', encoding => 'base64'});
check("getAccountInfo at processed answers the new value", ($r->{result}{value}{lamports} || 0) == $lamports);
($now, $slot) = lamports_at($key, 'finalized');
check("getBalance at finalized answers the value as of its context slot",
      defined $slot && $now == ($slot >= $change_slot ? $lamports : $before));

# The finalized subscription hears of it once finalized reaches the slot
# (32 slots later); meanwhile processed and confirmed are told once each.
($note, my @meanwhile) = read_until($acct, 10, is_note_for($f_sub));
push @seen, @meanwhile;
check("the finalized (default) subscription is notified later, with binary (base58) data",
      $note && $note->{params}{result}{value}{lamports} == $lamports
      && $note->{params}{result}{context}{slot} >= $change_slot && $note->{params}{result}{value}{data} eq '');
my @confirmed = notes_for($c_sub, @seen);
check("processed was notified once and confirmed once before finalized",
      notes_for($p_sub, @seen) == 0 && @confirmed == 1
      && $confirmed[0]{params}{result}{value}{data}[1] eq 'base58'
      && $confirmed[0]{params}{result}{context}{slot} >= $change_slot);
check("an account that did not change sends nothing", notes_for($q_sub, @seen) == 0);

# After an unsubscribe: a change reaches the second connection, and the first
# answers a later call without a notification in between.
$r = request($acct, 'accountUnsubscribe', $p_sub);
check("accountUnsubscribe answers true", JSON::PP::is_bool($r->{result}) && $r->{result});
($status, $body) = change("pubkey=$key&lamports=" . ($lamports + 1));
($other_note) = read_until($other, 5, is_note_for($o_sub));
check("the other subscriber gets the next change",
      $other_note && $other_note->{params}{result}{value}{lamports} == $lamports + 1);
$r = request($acct, 'accountUnsubscribe', $p_sub);
check("unsubscribing twice is -32602 'Invalid subscription id.'",
      $r->{error} && $r->{error}{message} eq 'Invalid subscription id.');
check("no notification after the unsubscribe", notes_for($p_sub, @{$backlog{$acct} || []}) == 0);

# A rollback: the tips go back below a notified change. It is not notified
# again when they pass it again, and a change made while rolled back
# replaces it (the node left that fork), reaching finalized alone.
my $fork_key = 'SysvarC1ock11111111111111111111111111111111';
my $r_sub = request($acct, 'accountSubscribe', $fork_key, {commitment => 'processed'})->{result};
my $rf_sub = request($acct, 'accountSubscribe', $fork_key, {commitment => 'finalized'})->{result};
my ($fork_before) = lamports_at($fork_key, 'processed');
($status, $body) = change("pubkey=$fork_key&lamports=777000");
my $fork_slot = $body->{slot} || 0;
($note) = read_until($acct, 5, is_note_for($r_sub));
check("a change before the rollback is notified", $note && $note->{params}{result}{value}{lamports} == 777000);
ctl('/_sim/fault/rollback?slots=50');
($now, $slot) = lamports_at($fork_key, 'processed');
check("rolled back below the change, processed reads the old value",
      defined $slot && $slot < $fork_slot && $now == $fork_before);
($status, $body) = change("pubkey=$fork_key&lamports=888000");
check("a change while rolled back is recorded at the rolled-back tip",
      $status == 200 && $body->{slot} < $fork_slot);
($note, @seen) = read_until($acct, 5, is_note_for($r_sub));
check("and notified at processed", $note && $note->{params}{result}{value}{lamports} == 888000);
ctl('/_sim/fault/clear');
($now, $slot) = lamports_at($fork_key, 'processed');
check("back at the old change's slot, processed reads the later change", $slot >= $fork_slot && $now == 888000);
($note, @meanwhile) = read_until($acct, 10, is_note_for($rf_sub));
push @seen, @meanwhile;
check("finalized is notified of the later change only",
      $note && $note->{params}{result}{value}{lamports} == 888000 && notes_for($rf_sub, @seen) == 0);
check("processed is not notified again when its tip passes the change again", notes_for($r_sub, @seen) == 0);

$acct->close(1000);
$other->close(1000);

# The RPC port takes no upgrade: agave serves pubsub on its own port.
my $plain = Solgate::WebSocket->connect(port => $rpc_port);
check("the RPC port refuses the upgrade with 405", !$plain && Solgate::WebSocket::refused_status() == 405);

exit $fail;
