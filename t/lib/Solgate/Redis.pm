package Solgate::Redis;

# A redis-server of the test's own, for fleet mode: on a loopback port,
# with its own data directory, stopped at exit.
#
#   use Solgate::Redis;
#   redis_start(port => 19959, dir => "$t/redis-tmp");
#   redis_cmd(19959, 'HGETALL', 'solgate:{mainnet}:cordons');   # reply as Perl data
#   redis_stop(19959);            # SIGTERM;  redis_kill(19959): SIGKILL

use strict;
use warnings;

use Exporter 'import';
use File::Path ();
use IO::Socket::INET ();
use POSIX ();
use Time::HiRes ();
use Test::Nginx::Util ();

our @EXPORT = qw(redis_start redis_stop redis_kill redis_cmd redis_available);

my %Servers;    # port => { pid, dir }
my $OwnerPid = $$;

sub redis_available { -x '/usr/bin/redis-server' ? 1 : 0 }

# redis_start(port => N, dir => D, args => [...]): the server, or dies.
sub redis_start {
    my %o = @_;
    my $port = $o{port} or die "redis_start: port => N is required\n";
    my $dir = $o{dir} or die "redis_start: dir => D is required\n";
    File::Path::make_path($dir);
    die "redis_start: port $port is in use\n"
        unless Test::Nginx::Util::wait_port_free($port, 3);
    my @cmd = ('/usr/bin/redis-server', '--port', $port, '--bind', '127.0.0.1',
               '--dir', $dir, '--save', '', '--appendonly', 'no',
               '--daemonize', 'no', '--logfile', "$dir/redis.log",
               @{ $o{args} || [] });
    my $pid = fork();
    die "redis_start: fork failed: $!\n" unless defined $pid;
    if ($pid == 0) {
        open STDIN, '<', '/dev/null';
        open STDOUT, '>>', "$dir/redis.out";
        open STDERR, '>>', "$dir/redis.out";
        { no warnings q(exec); exec { $cmd[0] } @cmd; }
        POSIX::_exit(127);
    }
    $Servers{$port} = { pid => $pid, dir => $dir };
    Test::Nginx::Util::wait_port_accepts($port, 5,
        sub { Test::Nginx::Util::process_alive($pid) })
        or die "redis_start: redis-server on $port did not come up\n";
    # it accepts (and answers PING) while it loads its append-only file,
    # but answers every data command LOADING until it is done
    my $deadline = Time::HiRes::time() + 10;
    until ((eval { redis_cmd($port, 'INFO', 'persistence') } // '') =~ /^loading:0\r?$/m) {
        die "redis_start: redis-server on $port still loading after 10 s\n"
            if Time::HiRes::time() > $deadline;
        Time::HiRes::sleep(0.02);
    }
    return $pid;
}

sub _end {
    my ($port, $sig) = @_;
    local $?;   # waitpid would change the test's exit status at END
    my $s = delete $Servers{$port} or return 0;
    kill $sig, $s->{pid};
    my $deadline = Time::HiRes::time() + 5;
    while (Test::Nginx::Util::process_alive($s->{pid})
           && Time::HiRes::time() < $deadline) {
        Time::HiRes::sleep(0.02);
    }
    kill 'KILL', $s->{pid} if Test::Nginx::Util::process_alive($s->{pid});
    waitpid($s->{pid}, 0);
    Test::Nginx::Util::wait_port_free($port, 3);
    return 1;
}

sub redis_stop { _end($_[0], 'TERM') }
sub redis_kill { _end($_[0], 'KILL') }

# One command, its reply decoded (arrays as array refs, errors die).
sub redis_cmd {
    my ($port, @args) = @_;
    my $sock = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port,
                                     Proto => 'tcp', Timeout => 2)
        or die "redis_cmd: cannot connect to $port: $!\n";
    my $req = '*' . scalar(@args) . "\r\n";
    $req .= '$' . length($_) . "\r\n$_\r\n" for @args;
    print $sock $req;
    my $reply = _read_reply($sock);
    close $sock;
    return $reply;
}

sub _read_reply {
    my ($sock) = @_;
    my $line = <$sock>;
    die "redis_cmd: no reply\n" unless defined $line;
    $line =~ s/\r\n$//;
    my ($type, $rest) = (substr($line, 0, 1), substr($line, 1));
    return $rest if $type eq '+';
    return $rest + 0 if $type eq ':';
    die "redis error: $rest\n" if $type eq '-';
    if ($type eq '$') {
        return undef if $rest < 0;
        my $data = '';
        read($sock, $data, $rest + 2);
        return substr($data, 0, $rest);
    }
    if ($type eq '*') {
        return undef if $rest < 0;
        return [ map { _read_reply($sock) } 1 .. $rest ];
    }
    die "redis_cmd: unexpected reply $line\n";
}

END {
    if ($$ == $OwnerPid) {
        _end($_, 'TERM') for keys %Servers;
    }
}

1;
