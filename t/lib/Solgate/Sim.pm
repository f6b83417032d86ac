package Solgate::Sim;

# Helpers for tests that need simulated Solana JSON-RPC nodes (solana-sim),
# plus small imperative HTTP / nginx helpers shared with the runner.
#
#   use Solgate::Sim;
#   sim_start(port => 8901, args => ['--slot-ms', 400]);
#   my $stats = sim_stats(8901);          # {"calls":{...},"total":N,...}
#   sim_fault(8901, 'http_status', code => 502);
#   sim_kill(8901);                       # SIGKILL, for failover tests
#
# See t/lib/README.md.

use strict;
use warnings;

use Exporter 'import';
use File::Basename ();
use File::Spec ();
use JSON::PP ();
use POSIX ();
use Time::HiRes ();
use Test::Nginx::Util ();

our @EXPORT = qw(
    sim_start sim_stop sim_kill sim_get sim_stats sim_reset sim_fault
    sim_client_calls
    sim_binary sim_available sim_pid sim_log sim_running
    http_post http_get http_request nginx_start nginx_stop nginx_error_log
    gateway_start gateway_stop
);

my %Sims;        # port => { pid, log }
my %Gateways;    # port => { pid, servroot }: nginx besides the main one
my %LogUsed;     # log path => 1 once truncated in this process
my $OwnerPid = $$;

sub sim_binary {
    return $ENV{TEST_NGINX_SIM} if defined $ENV{TEST_NGINX_SIM} && length $ENV{TEST_NGINX_SIM};
    return File::Spec->catfile(Test::Nginx::Util::repo_root(), 'build', 'bin', 'solana-sim');
}

sub sim_available { -x sim_binary() ? 1 : 0 }

sub sim_log {
    my ($port) = @_;
    return $Sims{$port}{log} if $Sims{$port};
    # next to the servroot (t/sim-PORT.log by default); the servroot itself
    # is wiped for every test block
    my $root = Test::Nginx::Util::servroot();
    $root =~ s{/+$}{};
    my $dir = File::Basename::dirname($root);
    return File::Spec->catfile($dir, "sim-$port.log");
}

sub sim_pid     { $Sims{$_[0]} ? $Sims{$_[0]}{pid} : undef }
sub sim_running { $Sims{$_[0]} && Test::Nginx::Util::process_alive($Sims{$_[0]}{pid}) ? 1 : 0 }

# sim_start(port => N, args => [...], timeout => 5, name => '...')
sub sim_start {
    my %o = @_;
    my $port = $o{port} or die "sim_start: port => N is required\n";
    my $bin = sim_binary();
    die "sim_start: solana-sim binary not found or not executable at '$bin'"
        . " (build it, or set TEST_NGINX_SIM)\n" unless -x $bin;
    die "sim_start: a simulator is already running on port $port\n"
        if $Sims{$port} && Test::Nginx::Util::process_alive($Sims{$port}{pid});
    delete $Sims{$port};
    die "sim_start: port $port on 127.0.0.1 is already in use\n"
        unless Test::Nginx::Util::wait_port_free($port, 3);

    my $log = sim_log($port);
    my $mode = $LogUsed{$log}++ ? '>>' : '>';
    my @cmd = ($bin, '--port', $port, @{ $o{args} || [] });
    {
        open my $fh, $mode, $log or die "sim_start: cannot write $log: $!\n";
        print $fh "=== " . scalar(localtime) . " starting: @cmd\n";
        close $fh;
    }
    my $pid = fork();
    die "sim_start: fork failed: $!\n" unless defined $pid;
    if ($pid == 0) {
        open STDIN, '<', '/dev/null';
        open STDOUT, '>>', $log;
        open STDERR, '>>', $log;
        { no warnings q(exec); exec { $cmd[0] } @cmd; }
        print STDERR "exec $cmd[0] failed: $!\n";
        POSIX::_exit(127);
    }
    $Sims{$port} = { pid => $pid, log => $log };

    my $timeout = $o{timeout} || 5;
    my $ok = Test::Nginx::Util::wait_port_accepts($port, $timeout,
        sub { Test::Nginx::Util::process_alive($pid) });
    unless ($ok) {
        my $alive = Test::Nginx::Util::process_alive($pid);
        _terminate($port);
        my $tail = Test::Nginx::Util::read_file_tail($log, 20);
        die "sim_start: solana-sim on port $port "
            . ($alive ? "did not accept connections within ${timeout}s"
                      : "exited during startup")
            . "\ncommand: @cmd\n--- tail of $log:\n$tail";
    }
    return $pid;
}

sub _terminate {
    my ($port, $sig) = @_;
    my $s = delete $Sims{$port} or return 0;
    my $pid = $s->{pid};
    if (($sig || 'TERM') eq 'KILL') {
        kill 'KILL', $pid;
    } else {
        kill 'TERM', $pid;
        my $deadline = Time::HiRes::time() + 3;
        while (Test::Nginx::Util::process_alive($pid) && Time::HiRes::time() < $deadline) {
            Time::HiRes::sleep(0.02);
        }
        kill 'KILL', $pid if Test::Nginx::Util::process_alive($pid);
    }
    my $deadline = Time::HiRes::time() + 3;
    while (Test::Nginx::Util::process_alive($pid) && Time::HiRes::time() < $deadline) {
        Time::HiRes::sleep(0.01);
    }
    waitpid($pid, POSIX::WNOHANG());
    return 1;
}

# sim_stop($port): SIGTERM, SIGKILL after 3 s; waits until the port is free.
sub sim_stop {
    my ($port) = @_;
    my $had = _terminate($port, 'TERM');
    Test::Nginx::Util::wait_port_free($port, 3);
    return $had;
}

# sim_kill($port): SIGKILL right away (simulates a crashed node).
sub sim_kill {
    my ($port) = @_;
    my $had = _terminate($port, 'KILL');
    Test::Nginx::Util::wait_port_free($port, 3);
    return $had;
}

sub sim_get {
    my ($port, $path, $timeout) = @_;
    my $res = Test::Nginx::Util::http_get($port, $path, {}, $timeout || 5);
    die "sim_get($port, $path): " . ($res->{error} || 'no response') . "\n"
        unless defined $res->{status};
    return $res->{body};
}

sub sim_stats {
    my ($port) = @_;
    my $body = sim_get($port, '/_sim/stats');
    my $data = eval { JSON::PP->new->decode($body) };
    die "sim_stats($port): response is not JSON: $body\n" unless ref $data;
    return $data;
}

sub sim_reset { sim_get($_[0], '/_sim/reset') }

# Calls of `method` (or of every method) that came from clients, not from
# Solgate's poller (which sends User-Agent solgate-poller/...).
sub sim_client_calls {
    my ($port, $method) = @_;
    my $s = sim_stats($port);
    return ($s->{total} || 0) - ($s->{poller_total} || 0) unless defined $method;
    return ($s->{calls}{$method} || 0) - ($s->{poller_calls}{$method} || 0);
}

sub _uri_escape {
    my ($s) = @_;
    $s = '' unless defined $s;
    utf8::encode($s) if utf8::is_utf8($s);
    $s =~ s/([^A-Za-z0-9\-._~])/sprintf('%%%02X', ord $1)/ge;
    return $s;
}

# sim_fault($port, $name, k => v, ...) -> GET /_sim/fault/<name>?k=v
sub sim_fault {
    my ($port, $name, @kv) = @_;
    my $path = '/_sim/fault/' . _uri_escape($name);
    my @q;
    while (@kv) {
        my ($k, $v) = splice @kv, 0, 2;
        push @q, _uri_escape($k) . '=' . _uri_escape($v);
    }
    $path .= '?' . join('&', @q) if @q;
    return sim_get($port, $path);
}

# --- imperative HTTP / nginx helpers (shared code in Test::Nginx::Util) ---

*http_post    = \&Test::Nginx::Util::http_post;
*http_get     = \&Test::Nginx::Util::http_get;
*http_request = \&Test::Nginx::Util::http_request;

# nginx_start($http_config, $config, %opts)
#   opts: main_config, port, log_level, master (bool), workers,
#   no_root_location (bool), env => [names], user_files => [[name, content]]
# Dies with diagnostics if nginx does not come up. Returns its pid.
sub nginx_start {
    my ($http_config, $config, %opts) = @_;
    my %conf;
    my %sec = (http_config => $http_config, config => $config,
               main_config => $opts{main_config});
    for my $k (keys %sec) {
        $conf{$k} = Test::Nginx::Util::expand_env_or_die(
            defined $sec{$k} ? $sec{$k} : '', "nginx_start $k");
    }
    delete $opts{main_config};
    my $res = Test::Nginx::Util::start_nginx(%opts, %conf);
    die "nginx_start: $res->{error}\n$res->{diag}" unless $res->{ok};
    return $res->{pid};
}

sub nginx_stop { Test::Nginx::Util::stop_nginx() }

# gateway_start($name, $http_config, $config, port => N, %build_conf_opts)
#   A second nginx (say, another region's gateway) in t/servroot-$name (or
#   servroot => DIR), on its own port, next to the one nginx_start runs.
#   Stopped by gateway_stop($port) or at exit. Returns its pid; dies if it
#   fails.
sub gateway_start {
    my ($name, $http_config, $config, %o) = @_;
    my $port = $o{port} or die "gateway_start: port required\n";
    local $ENV{TEST_NGINX_SERVROOT} = delete $o{servroot}
        || File::Spec->catdir(Test::Nginx::Util::t_dir(), "servroot-$name");
    # its own html/ too, not the main servroot's (which would then hold
    # only html/ and not look like a servroot any more)
    local $ENV{TEST_NGINX_HTML_DIR} =
        File::Spec->catdir($ENV{TEST_NGINX_SERVROOT}, 'html');
    my %conf = (%o, http_config => $http_config, config => $config);
    for my $k (qw(http_config config main_config)) {
        $conf{$k} = Test::Nginx::Util::expand_env_or_die(
            defined $conf{$k} ? $conf{$k} : '', "gateway_start $k");
    }
    die "gateway_start: port $port is in use\n"
        unless Test::Nginx::Util::wait_port_free($port, 5);
    my $root = Test::Nginx::Util::prepare_servroot(%conf);
    Test::Nginx::Util::write_conf(%conf);
    my $bin = Test::Nginx::Util::nginx_binary();
    my $out = `$bin -p $root/ -c conf/nginx.conf 2>&1`;
    die "gateway_start $name: nginx failed: $out\n" if $? != 0;
    my $pid_file = File::Spec->catfile($root, 'logs', 'nginx.pid');
    my $deadline = Time::HiRes::time() + 5;
    my $pid;
    until ($pid || Time::HiRes::time() > $deadline) {
        if (open my $fh, '<', $pid_file) { ($pid) = <$fh> =~ /(\d+)/ }
        Time::HiRes::sleep(0.01) unless $pid;
    }
    die "gateway_start $name: no pid file\n" unless $pid;
    $Gateways{$port} = { pid => $pid, servroot => $root };
    Test::Nginx::Util::wait_port_accepts($port, 5)
        or die "gateway_start $name: port $port does not accept\n";
    return $pid;
}

sub gateway_stop {
    my ($port) = @_;
    my $g = delete $Gateways{$port} or return 1;
    kill 'QUIT', $g->{pid};
    my $deadline = Time::HiRes::time() + 5;
    while (Test::Nginx::Util::process_alive($g->{pid})
           && Time::HiRes::time() < $deadline) {
        Time::HiRes::sleep(0.02);
    }
    kill 'KILL', $g->{pid} if Test::Nginx::Util::process_alive($g->{pid});
    return Test::Nginx::Util::wait_port_free($port, 5);
}

sub nginx_error_log { Test::Nginx::Util::read_error_log(@_) }

END {
    if ($$ == $OwnerPid) {
        my $rc = $?;
        _terminate($_) for keys %Sims;
        gateway_stop($_) for keys %Gateways;
        $? = $rc;
    }
}

1;
