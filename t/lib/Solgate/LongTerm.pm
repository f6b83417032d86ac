package Solgate::LongTerm;

# Cube Runner's long-term storage seen by a client: getBlock with an API
# key, asked again like a client that honours Retry-After, or many at once.
#
#   my $s = unskipped_slot($archive_port, $from);       # a slot that has a block
#   my $res = block_ask($port, 'k1', $s);
#   my ($res, $asked) = block_fetch($port, 'k1', $s, 15);
#   my @got = block_asks_at_once($dir, [$port, 'k1', $s], ...);  # [status, body]

use strict;
use warnings;

use Exporter 'import';
use File::Spec ();
use POSIX ();
use Solgate::Gateway;
use Test::Nginx::Util ();

our @EXPORT = qw(unskipped_slot block_ask block_fetch block_asks_at_once);

# The highest slot at or below $s that the archive did not skip.
sub unskipped_slot {
    my ($archive, $s) = @_;
    $s-- while Test::Nginx::Util::http_post($archive, '/', get_block_call(0, $s))->{body} =~ /-32009/;
    return $s;
}

sub block_ask {
    my ($port, $key, $slot, $id) = @_;
    return Test::Nginx::Util::http_post($port, '/', get_block_call($id // 1, $slot),
                                   { 'X-Api-Key' => $key });
}

# Asks every 200 ms, like a client that honours Retry-After, while the
# block is queued or the fleet's shared state is briefly unavailable, for
# at most $secs; returns the last response and the number of 429s before.
sub block_fetch {
    my ($port, $key, $slot, $secs) = @_;
    my ($res, $asked) = (undef, 0);
    Test::Nginx::Socket::wait_until(sub {
        $asked++;
        $res = block_ask($port, $key, $slot);
        !($res->{status} == 429 && $res->{body} =~ /"queuePosition"|"shared_state_unavailable"/) },
        $secs // 15, "block $slot for key $key leaves the queue", 0.2);
    return ($res, $asked - 1);
}

# The answers to requests made at once, one process each.
sub block_asks_at_once {
    my ($dir, @asks) = @_;
    my @files = map { File::Spec->catfile($dir, "at-once-$_") } 0 .. $#asks;
    my @pids;
    for my $i (0 .. $#asks) {
        my $pid = fork() // die "fork: $!";
        if ($pid == 0) {
            my ($port, $key, $slot) = @{ $asks[$i] };
            my $res = block_ask($port, $key, $slot, $i + 1);
            open my $fh, '>', $files[$i] or die;
            print $fh "$res->{status} $res->{body}";
            close $fh;
            POSIX::_exit(0);
        }
        push @pids, $pid;
    }
    waitpid($_, 0) for @pids;
    return map { open my $fh, '<', $_ or die "$_: $!"; local $/; my $t = <$fh>; [split / /, $t, 2] } @files;
}

1;
