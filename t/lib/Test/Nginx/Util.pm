package Test::Nginx::Util;

# Shared plumbing for the Solgate test runner: nginx.conf generation,
# nginx start/stop, a tiny blocking HTTP client and $TEST_NGINX_* expansion.
# Used by Test::Nginx::Socket (declarative .t files) and Solgate::Sim
# (imperative helpers).  Written for this project; no code is taken from
# openresty's test-nginx.

use strict;
use warnings;

use Cwd ();
use Errno ();
use File::Basename ();
use File::Path ();
use File::Spec ();
use IO::Select;
use IO::Socket::INET;
use POSIX ();
use Time::HiRes ();

use Exporter 'import';

our @EXPORT_OK = qw(
    servroot html_dir server_port repo_root t_dir nginx_binary
    expand_env expand_env_or_die
    build_conf write_conf prepare_servroot
    start_nginx stop_nginx stop_all_nginx nginx_running nginx_pid
    nginx_workers kill_nginx restart_nginx reload_nginx
    read_error_log error_log_path read_file_tail read_startup_stderr
    conf_line_of
    port_accepts wait_port_accepts wait_port_free
    http_request http_post http_get parse_http_response decode_chunked
    process_alive
);
our %EXPORT_TAGS = (all => \@EXPORT_OK);

# ---------------------------------------------------------------------------
# Environment defaults
# ---------------------------------------------------------------------------

our $OwnerPid = $$;

sub _find_t_dir {
    my $cwd = Cwd::getcwd();
    return File::Spec->catdir($cwd, 't') if -d File::Spec->catdir($cwd, 't');
    # Running from inside t/ or with an unusual cwd: use the script's dir.
    my $script_dir = Cwd::abs_path(File::Basename::dirname($0));
    if (defined $script_dir) {
        my $d = $script_dir;
        while ($d ne '/' && $d ne '') {
            return $d if File::Basename::basename($d) eq 't';
            $d = File::Basename::dirname($d);
        }
    }
    return File::Spec->catdir($cwd, 't');
}

my $TDir = _find_t_dir();

$ENV{TEST_NGINX_SERVER_PORT} ||= $ENV{TEST_NGINX_PORT} || 1984;
$ENV{TEST_NGINX_BINARY}      ||= '/usr/sbin/nginx';
$ENV{TEST_NGINX_SERVROOT}    ||= File::Spec->catdir($TDir, 'servroot');
$ENV{TEST_NGINX_SERVROOT} = File::Spec->rel2abs($ENV{TEST_NGINX_SERVROOT});
$ENV{TEST_NGINX_HTML_DIR}    ||= File::Spec->catdir($ENV{TEST_NGINX_SERVROOT}, 'html');

sub t_dir        { $TDir }
sub repo_root    { File::Basename::dirname($TDir) }
sub servroot     { $ENV{TEST_NGINX_SERVROOT} }
sub html_dir     { $ENV{TEST_NGINX_HTML_DIR} }
sub nginx_binary { $ENV{TEST_NGINX_BINARY} }
sub server_port  {
    $ENV{TEST_NGINX_SERVER_PORT} = $_[0] if @_ && defined $_[0];
    return $ENV{TEST_NGINX_SERVER_PORT};
}

# Become a child subreaper (Linux): nginx daemonizes, and its detached
# process is then re-parented to us instead of to PID 1, so we can reap it
# (PID 1 in some containers never reaps, which would leave zombies behind).
sub _become_subreaper {
    return unless $^O eq 'linux';
    my $nr = eval { local $SIG{__DIE__}; local $SIG{__WARN__} = sub {}; require 'syscall.ph'; &SYS_prctl() };
    if (!$nr) {
        require Config;
        my $arch = $Config::Config{archname} || '';
        $nr = $arch =~ /x86_64/ ? 157 : $arch =~ /aarch64|arm64/ ? 167 : undef;
    }
    return unless $nr;
    syscall($nr, 36, 1, 0, 0, 0);    # PR_SET_CHILD_SUBREAPER = 36
}
_become_subreaper();

# ---------------------------------------------------------------------------
# $TEST_NGINX_* expansion
# ---------------------------------------------------------------------------

# expand_env($text) -> ($expanded, $error). $error names the first undefined
# variable, if any.
sub expand_env {
    my ($text) = @_;
    return ($text, undef) unless defined $text && !ref $text;
    my @missing;
    $text =~ s{\$(?:\{(TEST_NGINX_\w+)\}|(TEST_NGINX_\w+))}{
        my $n = defined $1 ? $1 : $2;
        if (defined $ENV{$n}) { $ENV{$n} }
        else { push @missing, $n; "\$$n" }
    }ge;
    return ($text, undef) unless @missing;
    my %seen;
    @missing = grep { !$seen{$_}++ } @missing;
    return ($text, "environment variable(s) not defined: "
        . join(', ', map { "\$$_" } @missing));
}

sub expand_env_or_die {
    my ($text, $what) = @_;
    my ($out, $err) = expand_env($text);
    die(($what ? "$what: " : '') . "$err\n") if $err;
    return $out;
}

# ---------------------------------------------------------------------------
# Config generation
# ---------------------------------------------------------------------------

sub _load_module_lines {
    my $mods = $ENV{TEST_NGINX_LOAD_MODULES};
    return '' unless defined $mods && $mods =~ /\S/;
    my $out = '';
    for my $m (split ' ', $mods) {
        my $abs = File::Spec->rel2abs($m);
        $out .= "load_module $abs;\n";
    }
    return $out;
}

# build_conf(%o): o = main_config, http_config, config, port, master (bool),
# workers (N), log_level, no_root_location (bool), env (arrayref of names)
sub build_conf {
    my %o = @_;
    my $root     = servroot();
    my $port     = defined $o{port} ? $o{port} : server_port();
    my $main     = defined $o{main_config} ? $o{main_config} : '';
    my $http     = defined $o{http_config} ? $o{http_config} : '';
    my $config   = defined $o{config} ? $o{config} : '';
    my $level    = $o{log_level} || 'debug';
    my $workers  = $o{workers} || 1;
    my $master   = $o{master} ? 'on' : 'off';

    my $conf = "# generated by t/lib/Test/Nginx/Util.pm -- do not edit\n";
    $conf .= _load_module_lines();
    $conf .= "daemon on;\n";
    $conf .= "master_process $master;\n";
    $conf .= "worker_processes $workers;\n";
    $conf .= "error_log logs/error.log $level;\n";
    $conf .= "pid logs/nginx.pid;\n";
    # when run as root with a master process, keep workers as root so they
    # can use the servroot freely (unless the test picks its own user)
    $conf .= "user root;\n" if $> == 0 && $master eq 'on' && $main !~ /^\s*user\s/m;
    for my $e (@{ $o{env} || [] }) {
        $conf .= "env $e;\n";
    }
    $conf .= "\n# --- main_config\n$main\n# --- end main_config\n\n";
    $conf .= "events {\n    worker_connections 1024;\n}\n\n";
    $conf .= "http {\n";
    $conf .= "    access_log logs/access.log;\n";
    $conf .= "    default_type text/plain;\n";
    $conf .= "    keepalive_timeout 68;\n";
    for my $t (qw(client_body proxy fastcgi uwsgi scgi)) {
        $conf .= sprintf "    %s_temp_path %s;\n", $t,
            File::Spec->catdir($root, "${t}_temp");
    }
    $conf .= "\n    # --- http_config\n$http\n    # --- end http_config\n\n";
    $conf .= "    server {\n";
    $conf .= "        listen 127.0.0.1:$port;\n";
    $conf .= "        server_name localhost;\n";
    $conf .= "        client_max_body_size 30M;\n";
    $conf .= "\n        # --- config\n$config\n        # --- end config\n";
    unless ($o{no_root_location}) {
        $conf .= "\n        location / {\n";
        $conf .= "            root " . html_dir() . ";\n";
        $conf .= "            index index.html index.htm;\n";
        $conf .= "        }\n";
    }
    $conf .= "    }\n";
    $conf .= "}\n";
    return $conf;
}

sub prepare_servroot {
    my (%o) = @_;
    my $root = servroot();
    die "refusing to use '$root' as servroot\n"
        if $root eq '/' || $root eq '' || $root !~ m{/[^/]+$};
    if (-d $root) {
        opendir my $dh, $root or die "cannot read $root: $!\n";
        my @ents = grep { !/^\.\.?$/ } readdir $dh;
        closedir $dh;
        die "refusing to wipe '$root': it does not look like a servroot"
            . " (no conf/ or logs/ inside)\n"
            if @ents && !-d "$root/conf" && !-d "$root/logs";
        File::Path::remove_tree($root);
    } elsif (-e $root) {
        die "servroot '$root' exists and is not a directory\n";
    }
    for my $d ('', qw(conf logs html client_body_temp proxy_temp fastcgi_temp
                      uwsgi_temp scgi_temp)) {
        my $p = File::Spec->catdir($root, $d);
        File::Path::make_path($p) unless -d $p;
    }
    my $html = html_dir();
    File::Path::make_path($html) unless -d $html;
    # user_files: arrayref of [relative name, content]
    for my $f (@{ $o{user_files} || [] }) {
        my ($name, $content) = @$f;
        my $path = File::Spec->catfile($html, $name);
        File::Path::make_path(File::Basename::dirname($path));
        _write_file($path, $content);
    }
    return $root;
}

sub _write_file {
    my ($path, $content) = @_;
    open my $fh, '>', $path or die "cannot write $path: $!\n";
    binmode $fh;
    print $fh (defined $content ? $content : '');
    close $fh or die "cannot close $path: $!\n";
}

sub _read_file {
    my ($path) = @_;
    open my $fh, '<', $path or return undef;
    binmode $fh;
    local $/;
    my $c = <$fh>;
    close $fh;
    return defined $c ? $c : '';
}

sub write_conf {
    my %o = @_;
    my $conf = build_conf(%o);
    my $path = File::Spec->catfile(servroot(), 'conf', 'nginx.conf');
    _write_file($path, $conf);
    return $path;
}

sub error_log_path { File::Spec->catfile(servroot(), 'logs', 'error.log') }

# The line of the block's nginx.conf that holds `text` first (1-based), as
# nginx names lines in its messages; undef when none does.
sub conf_line_of {
    my ($text) = @_;
    my $conf = _read_file(File::Spec->catfile(servroot(), 'conf', 'nginx.conf'));
    return undef unless defined $conf;
    my $n = 0;
    for my $line (split /\n/, $conf) {
        $n++;
        return $n if index($line, $text) >= 0;
    }
    return undef;
}

# What the running nginx printed while it started (its config notices).
sub read_startup_stderr {
    return _read_file(File::Spec->catfile(servroot(), 'logs', 'stderr.log')) // '';
}

sub read_error_log {
    my ($offset) = @_;
    my $c = _read_file(error_log_path());
    return '' unless defined $c;
    return substr($c, $offset || 0) if ($offset || 0) <= length $c;
    return $c;
}

sub read_file_tail {
    my ($path, $lines) = @_;
    $lines ||= 30;
    my $c = _read_file($path);
    return '' unless defined $c && length $c;
    my @l = split /\n/, $c;
    @l = @l[-$lines .. -1] if @l > $lines;
    return join("\n", @l) . "\n";
}

# ---------------------------------------------------------------------------
# Processes
# ---------------------------------------------------------------------------

# Is the process alive (and not a zombie)? Reaps it if it is our child.
sub process_alive {
    my ($pid) = @_;
    return 0 unless $pid && $pid > 1;
    my $w = waitpid($pid, POSIX::WNOHANG());
    return 0 if $w == $pid;
    return 0 unless kill(0, $pid) || $!{EPERM};
    if (open my $fh, '<', "/proc/$pid/stat") {
        my $st = <$fh>;
        close $fh;
        return 0 if defined $st && $st =~ /\)\s+[ZX]\s/;
    }
    return 1;
}

sub _children_of {
    my ($ppid) = @_;
    my @kids;
    opendir my $dh, '/proc' or return ();
    for my $p (grep { /^\d+$/ } readdir $dh) {
        open my $fh, '<', "/proc/$p/stat" or next;
        my $st = <$fh>;
        close $fh;
        next unless defined $st && $st =~ /\)\s+\S+\s+(\d+)/;
        push @kids, $p if $1 == $ppid;
    }
    closedir $dh;
    return @kids;
}

sub _wait_dead {
    my ($timeout, @pids) = @_;
    my $deadline = Time::HiRes::time() + $timeout;
    while (1) {
        my @alive = grep { process_alive($_) } @pids;
        return 1 unless @alive;
        return 0 if Time::HiRes::time() >= $deadline;
        Time::HiRes::sleep(0.02);
    }
}

# ---------------------------------------------------------------------------
# Ports
# ---------------------------------------------------------------------------

sub port_accepts {
    my ($port, $host) = @_;
    my $s = IO::Socket::INET->new(
        PeerAddr => $host || '127.0.0.1',
        PeerPort => $port,
        Proto    => 'tcp',
        Timeout  => 0.5,
    );
    return 0 unless $s;
    close $s;
    return 1;
}

sub wait_port_accepts {
    my ($port, $timeout, $alive_check) = @_;
    my $deadline = Time::HiRes::time() + (defined $timeout ? $timeout : 5);
    while (1) {
        return 1 if port_accepts($port);
        return 0 if $alive_check && !$alive_check->();
        return 0 if Time::HiRes::time() >= $deadline;
        Time::HiRes::sleep(0.02);
    }
}

sub wait_port_free {
    my ($port, $timeout) = @_;
    my $deadline = Time::HiRes::time() + (defined $timeout ? $timeout : 5);
    while (1) {
        return 1 unless port_accepts($port);
        return 0 if Time::HiRes::time() >= $deadline;
        Time::HiRes::sleep(0.05);
    }
}

# ---------------------------------------------------------------------------
# nginx start / stop
# ---------------------------------------------------------------------------

# Currently running nginx started by us: { pid, port, servroot, workers => [] }
my $Running;

sub nginx_running { $Running ? 1 : 0 }
sub nginx_pid     { $Running ? $Running->{pid} : undef }

sub _read_pid_file {
    my ($root) = @_;
    my $c = _read_file(File::Spec->catfile($root, 'logs', 'nginx.pid'));
    return undef unless defined $c && $c =~ /(\d+)/;
    return $1;
}

# Kill an nginx left over by an earlier (crashed) run that used the same
# servroot, identified through its pid file and command line.
sub _kill_stale {
    my $root = servroot();
    my $pid = _read_pid_file($root);
    return unless $pid && process_alive($pid);
    my $cmd = _read_file("/proc/$pid/cmdline");
    return unless defined $cmd && $cmd =~ /nginx/ && index($cmd, $root) >= 0;
    _terminate($pid);
}

sub _terminate {
    my ($pid, %o) = @_;
    my @kids = _children_of($pid);
    kill 'QUIT', $pid;
    unless (_wait_dead(defined $o{quit_wait} ? $o{quit_wait} : 5, $pid)) {
        kill 'TERM', $pid;
        unless (_wait_dead(2, $pid)) {
            kill 'KILL', $pid;
            _wait_dead(2, $pid);
        }
    }
    # workers of a master that did not shut them down
    my @left = grep { process_alive($_) } (@kids, _children_of($pid));
    if (@left) {
        kill 'KILL', @left;
        _wait_dead(2, @left);
    }
}

# start_nginx(%o): builds servroot + conf and starts nginx.
#   o = build_conf options + user_files + start_timeout
#       + before_exec => CODE (run once the servroot and nginx.conf exist,
#         just before nginx is started; if it dies, nginx is not started)
# Returns hashref: { ok => 0|1, error => "...", stderr => "...",
#                    diag => "...", conf => "..." }
sub start_nginx {
    my %o = @_;
    stop_nginx() if $Running;
    _kill_stale();

    my $port = defined $o{port} ? $o{port} : server_port();
    $o{port} = $port;
    my $res = { ok => 0, stderr => '', port => $port };

    unless (wait_port_free($port, 5)) {
        $res->{error} = "port $port on 127.0.0.1 is already in use by another process";
        $res->{diag} = $res->{error} . "\n";
        return $res;
    }

    my $root = eval { prepare_servroot(%o) };
    if (!$root) {
        $res->{error} = "cannot prepare servroot: $@";
        $res->{diag} = $res->{error};
        return $res;
    }
    my $conf_path = eval { write_conf(%o) };
    if (!$conf_path) {
        $res->{error} = "cannot write nginx.conf: $@";
        $res->{diag} = $res->{error};
        return $res;
    }
    $res->{conf} = _read_file($conf_path);

    if ($o{before_exec}) {
        unless (eval { $o{before_exec}->(); 1 }) {
            my $e = $@; chomp $e;
            $res->{error} = "setup failed: $e";
            $res->{diag} = $res->{error} . "\n";
            $res->{setup_failed} = 1;
            return $res;
        }
    }
    return _launch($root, $port, $res, $o{start_timeout} || 5);
}

# Starts nginx on the servroot as it is (conf/nginx.conf already written)
# and waits for the pid file and the port. Fills and returns $res.
sub _launch {
    my ($root, $port, $res, $timeout) = @_;
    my $bin = nginx_binary();
    if (!-x $bin) {
        $res->{error} = "nginx binary '$bin' not found or not executable (set TEST_NGINX_BINARY)";
        $res->{diag} = $res->{error} . "\n";
        return $res;
    }

    my $stderr_path = File::Spec->catfile($root, 'logs', 'stderr.log');
    my @cmd = ($bin, '-p', "$root/", '-c', 'conf/nginx.conf');
    my $launcher = fork();
    if (!defined $launcher) {
        $res->{error} = "fork failed: $!";
        $res->{diag} = $res->{error} . "\n";
        return $res;
    }
    if ($launcher == 0) {
        open STDIN, '<', '/dev/null';
        open STDOUT, '>>', $stderr_path;
        open STDERR, '>>', $stderr_path;
        { no warnings q(exec); exec { $cmd[0] } @cmd; }
        print STDERR "exec $cmd[0] failed: $!\n";
        POSIX::_exit(127);
    }

    my $deadline = Time::HiRes::time() + $timeout + 5;
    my $status;
    while (1) {
        my $w = waitpid($launcher, POSIX::WNOHANG());
        if ($w == $launcher) { $status = $?; last }
        if (Time::HiRes::time() >= $deadline) {
            kill 'KILL', $launcher;
            waitpid($launcher, 0);
            $status = -1;
            last;
        }
        Time::HiRes::sleep(0.01);
    }

    my $fail = sub {
        my ($msg) = @_;
        $res->{error}  = $msg;
        $res->{stderr} = _read_file($stderr_path) // '';
        my $tail = read_file_tail(error_log_path(), 30);
        $res->{diag} = "$msg\ncommand: @cmd\n"
            . "--- nginx stderr:\n$res->{stderr}"
            . "--- tail of $root/logs/error.log:\n$tail";
        return $res;
    };

    if ($status != 0) {
        my $why = $status == -1 ? "did not exit within the start timeout"
                : ($status & 127) ? "was killed by signal " . ($status & 127)
                : "exited with code " . ($status >> 8);
        return $fail->("nginx failed to start ($why)");
    }

    # The launcher daemonized fine; find the daemon and wait for the port.
    my $pid;
    my $pid_deadline = Time::HiRes::time() + $timeout;
    while (!defined($pid = _read_pid_file($root))) {
        last if Time::HiRes::time() >= $pid_deadline;
        Time::HiRes::sleep(0.01);
    }
    if (!$pid) {
        return $fail->("nginx started but wrote no pid file within ${timeout}s");
    }
    $Running = { pid => $pid, port => $port, servroot => $root,
                 start_timeout => $timeout };

    my $alive = sub { process_alive($pid) };
    unless (wait_port_accepts($port, $timeout, $alive)) {
        my $was_alive = $alive->();
        stop_nginx();
        return $fail->($was_alive
            ? "nginx (pid $pid) does not accept connections on 127.0.0.1:$port after ${timeout}s"
            : "nginx (pid $pid) exited right after starting");
    }
    $res->{ok}  = 1;
    $res->{pid} = $pid;
    $res->{stderr} = _read_file($stderr_path) // '';
    return $res;
}

# stop_nginx(): graceful stop (QUIT, then TERM, then KILL), then waits for
# the port to be free. Returns 1 if everything went away.
sub stop_nginx {
    my $r = $Running or return 1;
    undef $Running;
    _terminate($r->{pid});
    return wait_port_free($r->{port}, 5);
}

sub stop_all_nginx { stop_nginx() }

# nginx_workers(): the pids of the running nginx's worker processes (the
# children of its master; empty without a master process).
sub nginx_workers {
    my $r = $Running or return ();
    return grep { process_alive($_) } _children_of($r->{pid});
}

# kill_nginx(): SIGKILL to the master and every worker at once, as a crash
# or `kill -9` would do; waits (bounded) until all are gone and the port is
# free. The servroot stays as it is (the pid file too).
sub kill_nginx {
    my $r = $Running or return 1;
    undef $Running;
    my @pids = ($r->{pid}, _children_of($r->{pid}));
    kill 'KILL', @pids;
    _wait_dead(5, @pids) or return 0;
    return wait_port_free($r->{port}, 5);
}

# restart_nginx(kill => 0|1): stops the running nginx (gracefully, or with
# kill_nginx) and starts it again on the same servroot and nginx.conf:
# nothing is wiped, logs/error.log goes on. Returns the start_nginx result.
sub restart_nginx {
    my %a = @_;
    my $r = $Running or return { ok => 0, error => 'restart_nginx: no nginx is running' };
    my ($root, $port, $timeout) = @$r{qw(servroot port start_timeout)};
    my $gone = $a{kill} ? kill_nginx() : stop_nginx();
    my $res = { ok => 0, stderr => '', port => $port };
    unless ($gone) {
        $res->{error} = "restart_nginx: the old nginx did not go away";
        $res->{diag} = $res->{error} . "\n";
        return $res;
    }
    unlink File::Spec->catfile($root, 'logs', 'nginx.pid');
    return _launch($root, $port, $res, $timeout || 5);
}

# reload_nginx(): SIGHUP to the master (needs a master process). Returns
# at once, as `nginx -s reload` does; old workers finish in the background.
sub reload_nginx {
    my $r = $Running or return 0;
    return kill 'HUP', $r->{pid};
}

# ---------------------------------------------------------------------------
# HTTP client
# ---------------------------------------------------------------------------

# http_request(%a):
#   port (required), host (127.0.0.1), timeout (10)
#   raw => bytes sent as-is, or method/uri/headers(arrayref of [k,v] or
#   hashref)/body.
#   until_complete => 1: stop reading once a full response is in (else EOF).
# Returns { status, reason, headers (lc name => value, repeated joined by
#   ", "), header_list ([name,value]...), body, raw, error, timed_out }
sub http_request {
    my %a = @_;
    my $timeout = defined $a{timeout} ? $a{timeout} : 10;
    my $deadline = Time::HiRes::time() + $timeout;
    my $port = $a{port} || server_port();
    my ($req, $method);

    if (defined $a{raw}) {
        $req = $a{raw};
        ($method) = $req =~ /^\s*([A-Z]+)\s/;
    } else {
        $method = $a{method} || 'GET';
        my $uri = defined $a{uri} ? $a{uri} : '/';
        my $proto = $a{protocol} || 'HTTP/1.1';
        my $body = $a{body};
        my @hdrs;
        if (ref $a{headers} eq 'HASH') {
            @hdrs = map { [$_, $a{headers}{$_}] } sort keys %{ $a{headers} };
        } elsif (ref $a{headers} eq 'ARRAY') {
            @hdrs = @{ $a{headers} };
        }
        my %have = map { lc($_->[0]) => 1 } @hdrs;
        $req = "$method $uri";
        $req .= " $proto" unless $proto eq 'HTTP/0.9';
        $req .= "\r\n";
        if ($proto ne 'HTTP/0.9') {
            $req .= "Host: localhost\r\n" unless $have{host};
            $req .= "Connection: close\r\n" unless $have{connection};
            $req .= "$_->[0]: $_->[1]\r\n" for @hdrs;
            if (defined $body) {
                utf8::encode($body) if utf8::is_utf8($body);
            }
            if (!$have{'content-length'} && !$have{'transfer-encoding'}
                && ((defined $body && length $body)
                    || $method =~ /^(?:POST|PUT|PATCH)$/))
            {
                $req .= "Content-Length: " . length(defined $body ? $body : '') . "\r\n";
            }
            $req .= "\r\n";
        }
        $req .= $body if defined $body;
    }
    utf8::encode($req) if utf8::is_utf8($req);

    my $res = { status => undef, headers => {}, header_list => [], body => '',
                raw => '', error => undef, timed_out => 0 };

    my $sock = IO::Socket::INET->new(
        PeerAddr => $a{host} || '127.0.0.1',
        PeerPort => $port,
        Proto    => 'tcp',
        Timeout  => ($timeout > 0 ? $timeout : 1),
    );
    if (!$sock) {
        $res->{error} = "cannot connect to 127.0.0.1:$port: $@";
        $res->{error} =~ s/IO::Socket::INET: //;
        return $res;
    }
    $sock->blocking(0);
    binmode $sock;
    local $SIG{PIPE} = 'IGNORE';
    my $sel = IO::Select->new($sock);

    # send
    my $off = 0;
    while ($off < length $req) {
        my $left = $deadline - Time::HiRes::time();
        if ($left <= 0) {
            $res->{error} = "timeout (${timeout}s) while sending the request";
            $res->{timed_out} = 1;
            close $sock;
            return $res;
        }
        next unless $sel->can_write($left);
        my $n = syswrite($sock, $req, length($req) - $off, $off);
        if (!defined $n) {
            next if $!{EAGAIN} || $!{EWOULDBLOCK} || $!{EINTR};
            # the server may have answered early and closed; go read it
            $res->{send_error} = "send failed: $!";
            last;
        }
        $off += $n;
    }

    # receive
    my $buf = '';
    while (1) {
        my $left = $deadline - Time::HiRes::time();
        if ($left <= 0) {
            $res->{error} = "timeout (${timeout}s) while reading the response";
            $res->{timed_out} = 1;
            last;
        }
        next unless $sel->can_read($left);
        my $n = sysread($sock, $buf, 65536, length $buf);
        if (!defined $n) {
            next if $!{EAGAIN} || $!{EWOULDBLOCK} || $!{EINTR};
            $res->{error} = "read failed: $!" unless $!{ECONNRESET} && length $buf;
            last;
        }
        last if $n == 0;    # EOF
        if ($a{until_complete} && _response_complete($buf, $method)) {
            last;
        }
    }
    close $sock;

    $res->{raw} = $buf;
    if (!length $buf) {
        $res->{error} ||= "empty response (connection closed without data)";
        return $res;
    }
    parse_http_response($buf, $res, $method);
    return $res;
}

sub _response_complete {
    my ($buf, $method) = @_;
    my $tmp = {};
    my $rest = $buf;
    while (1) {
        my $i = index($rest, "\r\n\r\n");
        my $sep = 4;
        if ($i < 0) { $i = index($rest, "\n\n"); $sep = 2 }
        return 0 if $i < 0;
        my $head = substr($rest, 0, $i);
        my $body = substr($rest, $i + $sep);
        my ($code) = $head =~ m{^HTTP/\d+(?:\.\d+)?\s+(\d{3})};
        return 0 unless defined $code;
        if ($code =~ /^1/ && $code != 101) { $rest = $body; next }
        return 1 if ($method && $method eq 'HEAD') || $code == 204 || $code == 304;
        if ($head =~ /^transfer-encoding:\s*chunked\s*$/mi) {
            my ($data, $err, $done) = decode_chunked($body);
            return $done ? 1 : 0;
        }
        if ($head =~ /^content-length:\s*(\d+)\s*$/mi) {
            return length($body) >= $1 ? 1 : 0;
        }
        return 0;
    }
}

sub parse_http_response {
    my ($buf, $res, $method) = @_;
    $res ||= {};
    my $rest = $buf;
    while (1) {
        my $i = index($rest, "\r\n\r\n");
        my $sep = 4;
        my $j = index($rest, "\n\n");
        if ($i < 0 || ($j >= 0 && $j < $i)) { $i = $j; $sep = 2 }
        if ($i < 0) {
            $res->{error} ||= "incomplete response header";
            $i = length $rest;
            $sep = 0;
        }
        my $head = substr($rest, 0, $i);
        my $body = substr($rest, $i + $sep);
        my @lines = split /\r?\n/, $head;
        my $status_line = shift @lines;
        $status_line = '' unless defined $status_line;
        if ($status_line =~ m{^HTTP/(\d+(?:\.\d+)?)\s+(\d{3})(?:\s+(.*))?$}) {
            $res->{protocol} = "HTTP/$1";
            $res->{status} = $2;
            $res->{reason} = defined $3 ? $3 : '';
        } else {
            # HTTP/0.9 style or garbage: everything is body
            $res->{error} ||= "malformed status line: $status_line";
            $res->{body} = $buf;
            return $res;
        }
        if ($res->{status} =~ /^1/ && $res->{status} != 101 && length $body) {
            $rest = $body;    # skip interim response (100 Continue)
            next;
        }
        my (%h, @list);
        for my $l (@lines) {
            next unless $l =~ /^([^:\s]+)\s*:\s*(.*?)\s*$/;
            push @list, [$1, $2];
            my $k = lc $1;
            $h{$k} = exists $h{$k} ? "$h{$k}, $2" : $2;
        }
        $res->{headers} = \%h;
        $res->{header_list} = \@list;
        if (($method && $method eq 'HEAD') || $res->{status} == 204 || $res->{status} == 304) {
            $res->{body} = $body;    # should be empty
        } elsif (defined $h{'transfer-encoding'} && $h{'transfer-encoding'} =~ /chunked/i) {
            my ($data, $err, $done) = decode_chunked($body);
            $res->{body} = $data;
            $res->{error} ||= $err if $err;
        } else {
            $res->{body} = $body;
        }
        return $res;
    }
}

# decode_chunked($bytes) -> ($data, $error, $complete)
sub decode_chunked {
    my ($in) = @_;
    my $out = '';
    my $pos = 0;
    while (1) {
        my $eol = index($in, "\n", $pos);
        return ($out, "truncated chunked body (no chunk size line)", 0) if $eol < 0;
        my $line = substr($in, $pos, $eol - $pos);
        $line =~ s/\r$//;
        $line =~ s/;.*//;
        $line =~ s/^\s+|\s+$//g;
        return ($out, "bad chunk size line: '$line'", 0) unless $line =~ /^[0-9a-fA-F]+$/;
        my $size = hex $line;
        $pos = $eol + 1;
        if ($size == 0) {
            # trailers, up to an empty line
            while (1) {
                my $e = index($in, "\n", $pos);
                return ($out, "truncated chunked body (no final CRLF)", 0) if $e < 0;
                my $t = substr($in, $pos, $e - $pos);
                $pos = $e + 1;
                last if $t eq '' || $t eq "\r";
            }
            return ($out, undef, 1);
        }
        if (length($in) < $pos + $size) {
            $out .= substr($in, $pos);
            return ($out, "truncated chunked body (chunk of $size bytes)", 0);
        }
        $out .= substr($in, $pos, $size);
        $pos += $size;
        if (substr($in, $pos, 2) eq "\r\n") { $pos += 2 }
        elsif (substr($in, $pos, 1) eq "\n") { $pos += 1 }
        else { return ($out, "missing CRLF after chunk data", 0) }
    }
}

# http_post($port, $path, $body, \%headers, $timeout)
sub http_post {
    my ($port, $path, $body, $headers, $timeout) = @_;
    return http_request(port => $port, method => 'POST', uri => $path,
        body => defined $body ? $body : '', headers => $headers || {},
        timeout => $timeout);
}

# http_get($port, $path, \%headers, $timeout)
sub http_get {
    my ($port, $path, $headers, $timeout) = @_;
    return http_request(port => $port, method => 'GET', uri => $path,
        headers => $headers || {}, timeout => $timeout);
}

# ---------------------------------------------------------------------------
# Cleanup: never leave an nginx behind, even if the test dies or is
# interrupted.
# ---------------------------------------------------------------------------

for my $sig (qw(INT TERM HUP)) {
    my $cur = $SIG{$sig};
    next if defined $cur && $cur ne '' && $cur ne 'DEFAULT';
    $SIG{$sig} = sub {
        # exit() runs the END blocks (nginx / simulators are stopped there)
        print STDERR "# caught SIG$sig, cleaning up\n";
        exit(128 + ($sig eq 'INT' ? 2 : $sig eq 'TERM' ? 15 : 1));
    };
}

END {
    if ($$ == $OwnerPid) {
        my $rc = $?;
        stop_nginx() if $Running;
        $? = $rc;
    }
}

1;
