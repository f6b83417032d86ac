package Test::Nginx::Socket;

# A small Test::Nginx::Socket-compatible data-driven test runner for the
# Solgate nginx module, built on Debian's Test::Base. See t/lib/README.md.
# Written for this project; it follows the documented behaviour of
# openresty's test-nginx but contains none of its code.

use Test::Base;    # imports blocks, plan, is, like, ... into this package
use Test::More ();
use Time::HiRes ();
use Test::Nginx::Util qw(expand_env start_nginx stop_nginx read_error_log http_request);
use Scalar::Util ();

our $VERSION = '0.01';

our @EXPORT = (
    # ours
    qw(run_tests repeat_each no_shuffle shuffle no_root_location
       add_block_preprocessor master_on master_off workers log_level
       env_to_nginx server_port html_dir servroot
       http_post http_get
       wait_for wait_until wait_timeout step deferred
       nginx_reload nginx_restart nginx_workers conf_line_of
    ),
    # Test::Base (includes Test::More's ok is isnt like unlike is_deeply
    # cmp_ok skip todo_skip pass fail eq_array eq_hash eq_set plan can_ok
    # isa_ok diag use_ok)
    grep({ !/^\$/ } @Test::Base::EXPORT),
    # more of Test::More
    qw(note explain done_testing subtest BAIL_OUT new_ok require_ok),
);

{
    no strict 'refs';
    for my $f (qw(note explain done_testing subtest BAIL_OUT new_ok require_ok)) {
        *{"Test::Nginx::Socket::$f"} = \&{"Test::More::$f"};
    }
}

# Test::Base's eval filter returns $@ as the section value when the code
# does not compile; make that an error instead, and evaluate in package main
# (without strict) so that test files can use their package variables.
{
    no warnings 'redefine';
    require Test::Base::Filter;
    *Test::Base::Filter::eval = sub {
        my $self = shift;
        $self->assert_scalar(@_);
        my $code = shift;
        my @r = _eval_in_main($code);
        if ($@) {
            my $e = $@; chomp $e;
            die "eval filter failed: $e\n";
        }
        return @r;
    };
}

sub _eval_in_main {
    no strict;
    return eval "package main; no strict; $_[0]";
}

sub import {
    my $class = shift;
    my $caller = caller;
    if (@_) {
        # use Test::Nginx::Socket 'no_plan';  / tests => N; / skip_all => '...'
        Test::More::plan(@_);
    }
    no strict 'refs';
    for my $name (@EXPORT) {
        *{"${caller}::$name"} = \&{"Test::Nginx::Socket::$name"};
    }
}

# ---------------------------------------------------------------------------
# settings
# ---------------------------------------------------------------------------

our $RepeatEach = 1;
our $NoShuffle = 1;      # blocks always run in file order (see README)
our $NoRootLocation = 0;
our $MasterProcess = 0;
our $Workers = 1;
our $LogLevel = 'debug';
our @EnvToNginx;
our @BlockPreprocessors;

sub repeat_each {
    $RepeatEach = $_[0] if @_;
    return $RepeatEach;
}
sub no_shuffle       { $NoShuffle = 1 }
sub shuffle          { $NoShuffle = 0 }   # accepted; order stays the file order
sub no_root_location { $NoRootLocation = 1 }
sub master_on        { $MasterProcess = 1 }
sub master_off       { $MasterProcess = 0 }
sub workers          { $Workers = $_[0] if @_; $Workers }
sub log_level        { $LogLevel = $_[0] if @_; $LogLevel }
sub env_to_nginx     { push @EnvToNginx, @_; @EnvToNginx }
sub add_block_preprocessor { push @BlockPreprocessors, @_ }

# same code refs as Solgate::Sim exports, so importing both is harmless
*server_port = \&Test::Nginx::Util::server_port;
*html_dir    = \&Test::Nginx::Util::html_dir;
*servroot    = \&Test::Nginx::Util::servroot;
*http_post   = \&Test::Nginx::Util::http_post;
*http_get    = \&Test::Nginx::Util::http_get;
*nginx_workers = \&Test::Nginx::Util::nginx_workers;
*conf_line_of = \&Test::Nginx::Util::conf_line_of;

# ---------------------------------------------------------------------------
# waiting for a condition (never for a fixed time)
# ---------------------------------------------------------------------------

our $PollInterval = 0.02;    # seconds between two looks at a condition

# The default bound of wait_for, wait_until, the wait_for section and the
# polling of error_log: $TEST_NGINX_WAIT_TIMEOUT, else 5 s; a block's
# wait_timeout section overrides it while that block runs.
our $BlockWaitTimeout;
sub wait_timeout {
    return $BlockWaitTimeout if defined $BlockWaitTimeout;
    my $e = $ENV{TEST_NGINX_WAIT_TIMEOUT};
    return defined $e && $e =~ /^\s*([\d.]+)\s*$/ && $1 > 0 ? $1 + 0 : 5;
}

# _poll($cond, $timeout) -> ($value, $last_error): calls $cond until it
# returns true or $timeout seconds have passed; a $cond that dies counts as
# false (its message is kept for the diagnostics). The last call is made
# at or after the deadline, so a slow $cond still gets a last look.
sub _poll {
    my ($cond, $timeout, $interval) = @_;
    $interval = $PollInterval unless defined $interval && $interval > 0;
    my $deadline = Time::HiRes::time() + $timeout;
    my $err;
    while (1) {
        my $v = eval { local $SIG{__DIE__}; $cond->() };
        if ($@) { $err = $@; chomp $err } else { undef $err }
        return ($v, undef) if $v;
        return (undef, $err) if Time::HiRes::time() >= $deadline;
        Time::HiRes::sleep($interval);
    }
}

sub _fmt_secs { my $s = sprintf '%.2f', $_[0]; $s =~ s/\.?0+$//; $s }

# wait_for($description, $cond, $timeout, $interval): one test. Polls
# $cond (every $interval seconds, default 20 ms) until it is true, for at
# most $timeout seconds (default wait_timeout()); passes if it became
# true, fails with "not true within N s" otherwise. Returns $cond's true
# value, or undef.
sub wait_for {
    my ($desc, $cond, $timeout, $interval) = @_;
    die "wait_for: a CODE ref is required\n" unless ref $cond eq 'CODE';
    $timeout = wait_timeout() unless defined $timeout;
    my ($v, $err) = _poll($cond, $timeout, $interval);
    local $Test::Builder::Level = $Test::Builder::Level + 1;
    if ($v) {
        Test::More::pass($desc);
        return $v;
    }
    Test::More::fail("$desc (not true within " . _fmt_secs($timeout) . ' s)');
    Test::More::diag("last error: $err") if defined $err;
    return undef;
}

# wait_until($cond, $timeout, $description, $interval): a precondition,
# not a check. Polls like wait_for; returns $cond's true value and records
# nothing when it becomes true; on timeout records a failing test
# ("$description: not true within N s") and returns undef.
sub wait_until {
    my ($cond, $timeout, $desc, $interval) = @_;
    die "wait_until: a CODE ref is required\n" unless ref $cond eq 'CODE';
    $timeout = wait_timeout() unless defined $timeout;
    my ($v, $err) = _poll($cond, $timeout, $interval);
    return $v if $v;
    local $Test::Builder::Level = $Test::Builder::Level + 1;
    Test::More::fail((defined $desc ? $desc : 'wait_until')
        . ': not true within ' . _fmt_secs($timeout) . ' s');
    Test::More::diag("last error: $err") if defined $err;
    return undef;
}

# step { ... }: the code itself; a CODE ref in a request eval list is a
# step run between the requests (this only reads better).
sub step(&) { return $_[0] }

# deferred { ... }: a request of a request eval list that is built when it
# is sent (after the steps and requests before it), from the string the
# block returns ("METHOD URI\nbody", sent exactly as given).
sub deferred(&) {
    return bless { code => $_[0] }, 'Test::Nginx::Socket::Deferred';
}

# nginx_reload(): SIGHUP to the running nginx's master. Returns at once.
sub nginx_reload {
    Test::Nginx::Util::reload_nginx()
        or die "nginx_reload: no nginx master to signal\n";
    return 1;
}

# nginx_restart(kill => 0|1): stops this block's nginx (gracefully, or by
# SIGKILL to the master and all workers) and starts it again on the same
# servroot and nginx.conf, keeping every file. Dies if it does not come up.
sub nginx_restart {
    my %a = @_;
    my $res = Test::Nginx::Util::restart_nginx(%a);
    die "nginx_restart: $res->{error}\n" . ($res->{diag} || '') unless $res->{ok};
    return $res->{pid};
}

# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------

sub _has_filter {
    my ($block, $section, $filter) = @_;
    my $map = $block->{_section_map};
    $map = $map->[0] if ref $map eq q(ARRAY);
    return 0 unless ref $map eq q(HASH);
    my $f = $map->{$section} && $map->{$section}{filters};
    return 0 unless defined $f;
    return scalar grep { $_ eq $filter } split /\s+/, $f;
}

sub _val {
    my ($block, $section) = @_;
    return undef unless exists $block->{$section};
    return scalar $block->$section;
}

# value for request number $idx: ARRAY refs are indexed, scalars apply to
# every request.
sub _indexed {
    my ($v, $idx) = @_;
    return $v->[$idx] if ref $v eq 'ARRAY';
    return $v;
}

sub _short {
    my ($s) = @_;
    $s = "$s";
    $s =~ s/\n/\\n/g;
    $s = substr($s, 0, 60) . '...' if length $s > 63;
    return $s;
}

# "Name: value" lines (string) or ARRAY of such -> list of [name, value]
sub _header_lines {
    my ($v) = @_;
    return () unless defined $v;
    my @lines = ref $v eq 'ARRAY' ? @$v : split /\n/, $v;
    my @out;
    for my $l (@lines) {
        next unless defined $l;
        $l =~ s/\r$//;
        next if $l !~ /\S/;
        if ($l =~ /^\s*!\s*([^:\s]+)\s*$/) {
            push @out, [$1, undef, 1];
        } elsif ($l =~ /^\s*([^:\s]+)\s*:\s?(.*?)\s*$/) {
            push @out, [$1, $2, 0];
        } else {
            push @out, [$l, undef, 2];    # malformed
        }
    }
    return @out;
}

# error_log-like section -> list of patterns (strings or Regexp)
sub _patterns {
    my ($block, $section) = @_;
    return () unless exists $block->{$section};
    my @vals = $block->$section;
    my @pats;
    for my $v (@vals) {
        next unless defined $v;
        if (ref $v eq 'ARRAY') {
            push @pats, grep { defined && (ref || length) } @$v;
        } elsif (ref $v eq 'Regexp') {
            push @pats, $v;
        } else {
            push @pats, grep { /\S/ } split /\n/, $v;
        }
    }
    return @pats;
}

sub _match_pat {
    my ($text, $pat) = @_;
    if (ref $pat eq 'Regexp') {
        return $text =~ $pat ? 1 : 0;
    }
    return index($text, $pat) >= 0 ? 1 : 0;
}

sub _first_matching_line {
    my ($text, $pat) = @_;
    for my $l (split /\n/, $text) {
        return $l if _match_pat($l, $pat);
    }
    return undef;
}

sub _pat_desc { ref $_[0] eq 'Regexp' ? "$_[0]" : '"' . _short($_[0]) . '"' }

# Build the list of requests of a block: each { raw => bytes } or
# { method, uri, protocol, headers, body }.
sub _build_requests {
    my ($block) = @_;
    my $name = $block->name;
    my @reqs;

    my @more;
    if (exists $block->{more_headers}) {
        my $mh = _val($block, 'more_headers');
        # may be an ARRAY ref (per request) via eval
        my $expand_hdr = sub {
            my ($text) = @_;
            my ($t, $err) = expand_env($text);
            die "more_headers: $err\n" if $err;
            return [ map { [$_->[0], defined $_->[1] ? $_->[1] : ''] }
                     grep { !$_->[2] } _header_lines($t) ];
        };
        if (ref $mh eq 'ARRAY') {
            @more = map { $expand_hdr->($_) } @$mh;
        } else {
            @more = ($expand_hdr->($mh));
        }
    }
    my $hdrs_for = sub {
        my ($i) = @_;
        return [] unless @more;
        return @more == 1 ? $more[0] : ($more[$i] || []);
    };

    if (exists $block->{raw_request}) {
        my $raw = _val($block, 'raw_request');
        my @list = ref $raw eq 'ARRAY' ? @$raw : ($raw);
        for my $r (@list) {
            if (ref $r eq 'CODE') { push @reqs, { step => $r }; next }
            my ($t, $err) = expand_env($r);
            die "raw_request: $err\n" if $err;
            push @reqs, { raw => $t };
        }
        return @reqs;
    }

    return () unless exists $block->{request};
    my $req = _val($block, 'request');
    my $is_eval = _has_filter($block, 'request', 'eval');
    my @list = ref $req eq 'ARRAY' ? @$req : ($req);
    my $i = 0;
    for my $r (@list) {
        # a CODE ref in the list is a step, run between the requests
        if (ref $r eq 'CODE') { push @reqs, { step => $r }; next }
        # deferred { ... }: a request built when it is sent
        if (ref $r eq 'Test::Nginx::Socket::Deferred') {
            push @reqs, { deferred => $r->{code}, headers => $hdrs_for->($i) };
            $i++;
            next;
        }
        die "request: empty request\n" unless defined $r && !ref $r && $r =~ /\S/;
        push @reqs, { %{ _parse_request($r, $is_eval) }, headers => $hdrs_for->($i) };
        $i++;
    }
    return @reqs;
}

# "METHOD URI [PROTOCOL]\nbody" -> { method, uri, protocol, body }
sub _parse_request {
    my ($r, $is_eval) = @_;
    my ($t, $err) = expand_env($r);
    die "request: $err\n" if $err;
    $t =~ s/\A\s+//;
    my ($first, $body) = split /\r?\n/, $t, 2;
    my ($method, $uri, $proto) = split ' ', $first;
    die "request: bad request line '$first'\n" unless defined $uri;
    if (defined $body) {
        # a literal section ends with the newline that terminates its last
        # line; that one is not part of the body (an eval'd string is
        # sent exactly as given)
        $body =~ s/\n\z// unless $is_eval;
        $body = undef unless length $body;
    }
    return {
        method   => $method,
        uri      => $uri,
        protocol => $proto || 'HTTP/1.1',
        body     => $body,
    };
}

sub _user_files {
    my ($block) = @_;
    return [] unless exists $block->{user_files};
    my $v = _val($block, 'user_files');
    return [ map { [@$_] } @$v ] if ref $v eq 'ARRAY' && (!@$v || ref $v->[0]);
    my ($t, $err) = expand_env($v);
    die "user_files: $err\n" if $err;
    my @files;
    my $cur;
    for my $line (split /(?<=\n)/, $t) {
        if ($line =~ /^>>> (\S+)\s*$/) {
            push @files, $cur if $cur;
            $cur = [$1, ''];
        } elsif ($cur) {
            $cur->[1] .= $line;
        }
    }
    push @files, $cur if $cur;
    return \@files;
}

# ---------------------------------------------------------------------------
# checks
# ---------------------------------------------------------------------------

sub _check_response {
    my ($block, $res, $idx, $nreq, $tname) = @_;
    my $name = $tname;
    $name .= " - req $idx" if $nreq > 1;

    if ($res->{timed_out}) {
        if (exists $block->{abort}) {
            Test::More::note("$name - request timed out (abort expected)");
        } else {
            Test::More::fail("$name - request timed out");
            Test::More::diag("ERROR: $res->{error}");
        }
    } elsif (!defined $res->{status} && $res->{error}) {
        Test::More::diag("$name - $res->{error}");
    }

    return if exists $block->{ignore_response};

    # status code
    {
        my $expected = exists $block->{error_code}
            ? _indexed(_val($block, 'error_code'), $idx) : 200;
        if (defined $expected) {
            $expected =~ s/^\s+|\s+$//g;
            if ($expected eq '') {
                Test::More::ok(!defined $res->{status}, "$name - no status line");
            } else {
                Test::More::is(defined $res->{status} ? $res->{status} : '',
                    $expected, "$name - status code ok");
            }
        }
    }

    my $h = $res->{headers} || {};

    # response headers
    for my $hl (_header_lines(_indexed(_val($block, 'response_headers'), $idx))) {
        my ($k, $v, $neg) = @$hl;
        my $actual = $h->{lc $k};
        if ($neg == 2) {
            Test::More::fail("$name - malformed response_headers line '$k'");
        } elsif ($neg) {
            Test::More::ok(!defined $actual, "$name - header $k absent")
                or Test::More::diag("  $k: $actual");
        } else {
            Test::More::is($actual, $v, "$name - header $k ok");
        }
    }
    for my $hl (_header_lines(_indexed(_val($block, 'response_headers_like'), $idx))) {
        my ($k, $v, $neg) = @$hl;
        my $actual = $h->{lc $k};
        if ($neg == 2) {
            Test::More::fail("$name - malformed response_headers_like line '$k'");
        } elsif ($neg) {
            Test::More::ok(!defined $actual, "$name - header $k absent")
                or Test::More::diag("  $k: $actual");
        } else {
            Test::More::like(defined $actual ? $actual : '', qr/^(?:$v)$/,
                "$name - header $k like ok")
                or (defined $actual
                    or Test::More::diag("  header $k is missing"));
        }
    }

    my $body = defined $res->{body} ? $res->{body} : '';

    if (exists $block->{response_body}) {
        my $exp = _indexed(_val($block, 'response_body'), $idx);
        if (ref $exp eq 'Regexp') {
            Test::More::like($body, $exp, "$name - response_body - like");
        } elsif (defined $exp) {
            is($body, $exp, "$name - response_body - response is expected");
        }
    }
    if (exists $block->{response_body_like}) {
        my $pat = _indexed(_val($block, 'response_body_like'), $idx);
        if (defined $pat) {
            unless (ref $pat eq 'Regexp') { chomp $pat; $pat = qr/$pat/s }
            Test::More::like($body, $pat, "$name - response_body_like - response is expected");
        }
    }
    if (exists $block->{response_body_unlike}) {
        my $pat = _indexed(_val($block, 'response_body_unlike'), $idx);
        if (defined $pat) {
            unless (ref $pat eq 'Regexp') { chomp $pat; $pat = qr/$pat/s }
            Test::More::unlike($body, $pat, "$name - response_body_unlike - response is expected");
        }
    }
}

# the last lines of a log for diagnostics, preferring non-debug lines
sub _log_tail {
    my ($log, $where) = @_;
    my @all = split /\n/, $log;
    my @nd = grep { !/\[debug\]/ } @all;
    my ($what, @l) = @nd ? ('non-debug ', @nd) : ('', @all);
    @l = @l[-15 .. -1] if @l > 15;
    return "last ${what}lines of $where:\n" . join("\n", @l);
}

sub _check_logs {
    my ($block, $log, $tname, $where, $sec_yes, $sec_no) = @_;
    $where ||= 'error.log';
    $sec_yes ||= 'error_log';
    $sec_no  ||= 'no_error_log';
    for my $pat (_patterns($block, $sec_yes)) {
        Test::More::ok(_match_pat($log, $pat),
            "$tname - pattern " . _pat_desc($pat) . " matches a line in $where")
            or Test::More::diag(_log_tail($log, $where));
    }
    for my $pat (_patterns($block, $sec_no)) {
        my $line = _first_matching_line($log, $pat);
        Test::More::ok(!defined $line,
            "$tname - pattern " . _pat_desc($pat) . " should not match any line in $where")
            or Test::More::diag("matching line: $line");
    }
}

# _wait_log($read, \@patterns, $timeout) -> the log text: calls $read
# until every pattern matches (or $timeout seconds have passed), so that
# lines logged just after the last response are not missed; without
# patterns, reads once.
sub _wait_log {
    my ($read, $pats, $timeout) = @_;
    my $log = $read->();
    return $log unless @$pats;
    _poll(sub {
        $log = $read->();
        return !grep { !_match_pat($log, $_) } @$pats;
    }, $timeout);
    return $log;
}

sub _check_grep_error_log {
    my ($block, $log, $tname) = @_;
    return unless exists $block->{grep_error_log} && exists $block->{grep_error_log_out};
    my $pat = _val($block, 'grep_error_log');
    chomp $pat unless ref $pat;
    my $re = ref $pat eq 'Regexp' ? $pat : qr/\Q$pat\E/;
    my $out = '';
    for my $l (split /\n/, $log) {
        while ($l =~ /($re)/g) { $out .= "$1\n" }
    }
    my $exp = _val($block, 'grep_error_log_out');
    if (ref $exp eq 'Regexp') {
        Test::More::like($out, $exp, "$tname - grep_error_log_out (like)");
    } else {
        is($out, $exp, "$tname - grep_error_log_out");
    }
}

# ---------------------------------------------------------------------------
# running
# ---------------------------------------------------------------------------

# The sections this runner reads: any other is a typo or one of
# test-nginx's this runner does not implement, and would be ignored, so the
# block fails instead.
my %KnownSections = map { $_ => 1 } qw(
    main_config http_config config user_files init setup workers log_level
    timeout wait wait_for wait_timeout request raw_request more_headers
    error_code response_headers response_headers_like response_body
    response_body_like response_body_unlike ignore_response abort
    error_log no_error_log grep_error_log grep_error_log_out must_die
    check shutdown_check shutdown_error_log no_shutdown_error_log
    ONLY SKIP LAST
);

sub _unknown_sections {
    my ($block) = @_;
    my $order = $block->{_section_order};
    $order = $order->[0] if ref $order eq 'ARRAY' && ref $order->[0] eq 'ARRAY';
    return grep { !$KnownSections{$_} } @{ $order || [] };
}

sub run_tests {
    Test::More::plan('no_plan') unless Test::More->builder->has_plan;
    # filter each block just before running it, so that a broken "eval"
    # section fails that block instead of aborting the whole file
    filters_delay(1);
    my @blocks = blocks();
    for my $block (@blocks) {
        unless ($block->is_filtered) {
            my $ok = eval { $block->run_filters; 1 };
            unless ($ok) {
                my $e = $@; chomp $e;
                my $n = $block->name;
                Test::More::fail((defined $n ? $n : 'TEST ?') . " - $e");
                next;
            }
        }
        if (my @unknown = _unknown_sections($block)) {
            my $n = $block->name;
            Test::More::fail((defined $n ? $n : 'TEST ?')
                . " - unknown section(s): @unknown");
            next;
        }
        $_->($block) for @BlockPreprocessors;
        for my $rep (1 .. ($RepeatEach || 1)) {
            _run_block($block, $rep);
        }
    }
    stop_nginx();
}

# Perl code of a section: a CODE ref (via eval) is called, text is compiled
# in package main (no strict) as the body of a sub; either gets @args.
# Dies with the error.
sub _run_code {
    my ($block, $section, @args) = @_;
    my $code = _val($block, $section);
    return unless defined $code;
    if (ref $code eq 'CODE') {
        $code->(@args);
        return;
    }
    return if ref $code || $code !~ /\S/;
    my $sub = eval "package main; no strict; sub { $code\n}";
    die "does not compile: $@" unless $sub;
    $sub->(@args);
}

# The conditions of a wait_for section, as [description, CODE, timeout].
# A literal section is one Perl expression; via eval: a CODE ref,
# [description, CODE, timeout?, interval?], or an ARRAY of either.
sub _wait_conditions {
    my ($block) = @_;
    return () unless exists $block->{wait_for};
    my $v = _val($block, 'wait_for');
    return () unless defined $v;
    my $one = sub {
        my ($c) = @_;
        return ['condition', $c] if ref $c eq 'CODE';
        if (ref $c eq 'ARRAY' && !ref $c->[0] && ref $c->[1] eq 'CODE') {
            return [@$c];
        }
        die "wait_for: expected a CODE ref or [description, CODE, timeout], got "
            . (ref $c || "'$c'") . "\n";
    };
    if (!ref $v) {
        return () unless $v =~ /\S/;
        my $expr = $v;
        $expr =~ s/^\s+|\s+$//g;
        my $sub = eval "package main; no strict; sub { $expr\n}";
        die "wait_for: does not compile: $@" unless $sub;
        (my $desc = $expr) =~ s/\s+/ /g;
        return ([$desc, $sub]);
    }
    if (ref $v eq 'ARRAY' && (!@$v || ref $v->[0])) {
        return map { $one->($_) } @$v;
    }
    return ($one->($v));
}

sub _run_block {
    my ($block, $rep) = @_;
    my $tname = $block->name;
    $tname = "TEST ?" unless defined $tname && length $tname;

    my $fail_block = sub {
        my ($msg, $diag) = @_;
        Test::More::fail("$tname - $msg");
        Test::More::diag($diag) if defined $diag && length $diag;
    };

    # a fixed sleep is never the way to wait for something
    if (exists $block->{wait}) {
        $fail_block->('--- wait is not supported: it sleeps a fixed time.'
            . ' error_log is polled (up to wait_timeout); use wait_for for other conditions');
        return;
    }

    my $wt = _val($block, 'wait_timeout');
    local $BlockWaitTimeout =
        defined $wt && !ref $wt && $wt =~ /^\s*([\d.]+)\s*$/ && $1 > 0 ? $1 + 0 : undef;

    # --- configuration
    my %conf;
    for my $sec (qw(main_config http_config config)) {
        my $v = _val($block, $sec);
        $v = '' unless defined $v;
        my ($t, $err) = expand_env($v);
        if ($err) { $fail_block->("$sec: $err"); return }
        $conf{$sec} = $t;
    }
    my $ll = _val($block, 'log_level');
    $ll = $LogLevel unless defined $ll && $ll =~ /\S/;
    $ll =~ s/^\s+|\s+$//g;

    my ($master, $workers) = ($MasterProcess, $Workers);
    if (exists $block->{workers}) {
        my $w = _val($block, 'workers');
        unless (defined $w && $w =~ /^\s*(\d+)\s*$/ && $1 > 0) {
            $fail_block->("workers: expected a number of worker processes");
            return;
        }
        ($master, $workers) = (1, $1);
    }

    my (@reqs, $files, @conds);
    eval {
        @reqs = _build_requests($block);
        $files = _user_files($block);
        @conds = _wait_conditions($block);
        1;
    } or do {
        my $e = $@; chomp $e;
        $fail_block->($e);
        return;
    };

    my $must_die = exists $block->{must_die};

    my $res = start_nginx(
        %conf,
        log_level        => $ll,
        master           => $master,
        workers          => $workers,
        no_root_location => $NoRootLocation,
        env              => [@EnvToNginx],
        user_files       => $files,
        (exists $block->{setup}
            ? (before_exec => sub { _run_code($block, 'setup') }) : ()),
    );
    if ($ENV{TEST_NGINX_VERBOSE}) {
        Test::More::diag("$tname: nginx.conf:\n" . ($res->{conf} || ''));
    }
    if ($res->{setup_failed}) {
        (my $e = $res->{error}) =~ s/^setup failed: //;
        $fail_block->("--- setup failed: $e");
        return;
    }

    if ($must_die) {
        my $stderr = defined $res->{stderr} ? $res->{stderr} : '';
        if ($res->{ok}) {
            Test::More::fail("$tname - nginx should have failed to start");
            stop_nginx();
        } else {
            Test::More::pass("$tname - nginx failed to start as expected");
        }
        my $log = $stderr . read_error_log();
        _check_logs($block, $log, $tname, 'nginx stderr + error.log');
        _check_grep_error_log($block, $log, $tname);
        # --- check: Perl checks with what nginx said as it died
        if (exists $block->{check}
            && !eval { _run_code($block, 'check', $log); 1 })
        {
            my $e = $@; chomp $e;
            $fail_block->("--- check died: $e");
        }
        return;
    }

    unless ($res->{ok}) {
        $fail_block->("nginx failed to start: $res->{error}", $res->{diag});
        return;
    }

    # --- init
    if (exists $block->{init}) {
        unless (eval { _run_code($block, 'init'); 1 }) {
            my $e = $@; chomp $e;
            $fail_block->("--- init failed: $e");
            stop_nginx();
            return;
        }
    }

    # --- wait_for: one test per condition
    for my $c (@conds) {
        my ($desc, $cond, $timeout, $interval) = @$c;
        wait_for("$tname - wait_for: $desc", $cond, $timeout, $interval);
    }

    # --- requests, and the steps between them
    my $timeout = _val($block, 'timeout');
    $timeout = $ENV{TEST_NGINX_TIMEOUT} || 10
        unless defined $timeout && $timeout =~ /^\s*[\d.]+\s*$/;
    $timeout += 0;
    my $nreq = grep { !$_->{step} } @reqs;
    my ($i, @responses) = (0);
    for my $r (@reqs) {
        if ($r->{step}) {
            unless (eval { $r->{step}->(); 1 }) {
                my $e = $@; chomp $e;
                $fail_block->("step before req $i failed: $e");
                stop_nginx();
                return;
            }
            next;
        }
        if ($r->{deferred}) {
            my $built = eval {
                my $text = $r->{deferred}->();
                die "deferred request: the block returned no request\n"
                    unless defined $text && !ref $text && $text =~ /\S/;
                +{ %{ _parse_request($text, 1) }, headers => $r->{headers} };
            };
            unless ($built) {
                my $e = $@; chomp $e;
                $fail_block->("req $i: $e");
                stop_nginx();
                return;
            }
            $r = $built;
        }
        my $resp = http_request(
            %$r,
            port           => server_port(),
            timeout        => $timeout,
            until_complete => defined $r->{raw} ? 1 : 0,
        );
        push @responses, $resp;
        _check_response($block, $resp, $i, $nreq, $tname);
        $i++;
    }

    # --- check: Perl checks with the responses
    if (exists $block->{check}) {
        unless (eval { _run_code($block, 'check', @responses); 1 }) {
            my $e = $@; chomp $e;
            $fail_block->("--- check died: $e");
        }
    }

    # --- the error log: polled until every error_log pattern matches
    my $log = _wait_log(\&read_error_log, [_patterns($block, 'error_log')],
                        wait_timeout());
    _check_logs($block, $log, $tname);
    _check_grep_error_log($block, $log, $tname);

    my $len = length $log;
    stop_nginx();
    if (exists $block->{shutdown_error_log} || exists $block->{no_shutdown_error_log}) {
        my $slog = read_error_log($len);
        _check_logs($block, $slog, $tname, 'error.log (shutdown)',
            'shutdown_error_log', 'no_shutdown_error_log');
    }

    # --- shutdown_check: Perl checks once nginx has stopped
    if (exists $block->{shutdown_check}) {
        unless (eval { _run_code($block, 'shutdown_check', @responses); 1 }) {
            my $e = $@; chomp $e;
            $fail_block->("--- shutdown_check died: $e");
        }
    }
}

1;
