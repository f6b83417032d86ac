# Self-test of the test runner in t/lib (stock nginx only, no Solgate module).
#   prove -I t/lib t/000-runner.t

use Test::Nginx::Socket 'no_plan';
use Test::Nginx::Util ();
use Solgate::Sim;
use Time::HiRes ();
use File::Path ();
use File::Spec ();

repeat_each(2);
no_shuffle();

# ---------------------------------------------------------------------------
# unit checks of the shared helpers
# ---------------------------------------------------------------------------

{
    local $ENV{TEST_NGINX_FOO_X} = 'bar';
    my ($t, $err) = Test::Nginx::Util::expand_env('a $TEST_NGINX_FOO_X ${TEST_NGINX_FOO_X}b $http_host');
    is($t, 'a bar barb $http_host', 'expand_env: expands $TEST_NGINX_* only');
    ok(!defined $err, 'expand_env: no error');
    ($t, $err) = Test::Nginx::Util::expand_env('x $TEST_NGINX_NOT_DEFINED_ZZ;');
    like($err, qr/\$TEST_NGINX_NOT_DEFINED_ZZ/, 'expand_env: undefined variable reported');

    my ($d, $e, $done) = Test::Nginx::Util::decode_chunked("5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nX-T: 1\r\n\r\n");
    is($d, 'hello world', 'decode_chunked: data');
    ok(!$e && $done, 'decode_chunked: complete');
    ($d, $e, $done) = Test::Nginx::Util::decode_chunked("5\r\nhel");
    ok($e && !$done, 'decode_chunked: truncated input detected');

    my $r = Test::Nginx::Util::parse_http_response(
        "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nX-A: 1\r\nx-a: 2\r\n"
        . "Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n");
    is($r->{status}, 201, 'parse_http_response: 100 Continue skipped');
    is($r->{headers}{'x-a'}, '1, 2', 'parse_http_response: repeated headers joined');
    is($r->{body}, 'abc', 'parse_http_response: chunked body decoded');

    my $conf = Test::Nginx::Util::build_conf(config => 'location = /z {}', port => 4321);
    is_deeply([Test::Nginx::Socket::_unknown_sections(
                  { _section_order => [['request', 'respons_body', 'error_code',
                                        'raw_response_headers_like']] })],
              ['respons_body', 'raw_response_headers_like'],
              'a section the runner does not read (a typo, or one of test-nginx\'s it lacks) is caught');
    like($conf, qr/^\s*listen 127\.0\.0\.1:4321;/m, 'build_conf: loopback listen');
    unlike($conf, qr/0\.0\.0\.0/, 'build_conf: never 0.0.0.0');
    like($conf, qr/^daemon on;\nmaster_process off;/m, 'build_conf: daemon on, single process');
    {
        local $ENV{TEST_NGINX_LOAD_MODULES} = 'objs/a.so /abs/b.so';
        my $c = Test::Nginx::Util::build_conf();
        like($c, qr{\A(?:#[^\n]*\n)*load_module /\S+/objs/a\.so;\nload_module /abs/b\.so;\ndaemon on;},
            'build_conf: TEST_NGINX_LOAD_MODULES become load_module lines first')
            or diag($c);
    }
}

# ---------------------------------------------------------------------------
# imperative helpers: nginx_start / http_post / timeouts / nginx_stop
# ---------------------------------------------------------------------------

{
    my $port = server_port();
    nginx_start('', <<'_EOC_');
        location = /echo {
            proxy_pass http://127.0.0.1:$TEST_NGINX_SERVER_PORT/back;
            proxy_set_header X-Body $request_body;
        }
        location = /back {
            return 200 "body=$http_x_body ct=$http_content_type\n";
        }
        location = /slow {
            proxy_pass http://127.0.0.1:$TEST_NGINX_SERVER_PORT/back;
        }
_EOC_
    my $res = http_post($port, '/echo', '{"a":1}', { 'Content-Type' => 'application/json' });
    is($res->{status}, 200, 'http_post: status');
    is($res->{body}, qq{body={"a":1} ct=application/json\n}, 'http_post: body echoed');
    is($res->{headers}{'content-type'}, 'text/plain', 'http_post: headers hash');

    # a request whose body never fully arrives must time out, not hang: a
    # 3 s alarm bounds the call (a bound, not a measured duration)
    my $alarmed = 0;
    {
        local $SIG{ALRM} = sub { $alarmed = 1; die "alarm\n" };
        alarm 3;
        $res = eval {
            Test::Nginx::Util::http_request(port => $port, timeout => 0.5,
                raw => "POST /slow HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\nhello");
        };
        alarm 0;
    }
    ok($res && $res->{timed_out}, 'http_request: timeout reported');
    ok(!$alarmed, 'http_request: timeout honoured (returned before a 3 s alarm)');

    my $pid = Test::Nginx::Util::nginx_pid();
    nginx_stop();
    ok(!Test::Nginx::Util::process_alive($pid), 'nginx_stop: process gone');
    ok(!Test::Nginx::Util::port_accepts($port), 'nginx_stop: port free');

    eval { nginx_start('', 'location = /x { no_such_directive_zz; }') };
    like($@, qr/unknown directive "no_such_directive_zz"/, 'nginx_start: dies with nginx stderr');

    {
        local $ENV{TEST_NGINX_LOAD_MODULES} = '/nonexistent/ngx_fake_module.so';
        eval { nginx_start('', '') };
        like($@, qr{dlopen\(\) "/nonexistent/ngx_fake_module\.so" failed},
            'TEST_NGINX_LOAD_MODULES: load_module is used');
    }

    # master process + 2 workers: all of them must go away on stop
    $pid = nginx_start('', 'location = /m { return 200 "m\n"; }', master => 1, workers => 2);
    is(http_get($port, '/m')->{body}, "m\n", 'master mode: request served');
    my @workers = Test::Nginx::Util::_children_of($pid);
    is(scalar @workers, 2, 'master mode: two workers');
    nginx_stop();
    ok(!(grep { Test::Nginx::Util::process_alive($_) } $pid, @workers),
        'master mode: master and workers gone after nginx_stop');
}

# ---------------------------------------------------------------------------
# Solgate::Sim (skipped when the simulator has not been built)
# ---------------------------------------------------------------------------

SKIP: {
    skip 'solana-sim not built (' . sim_binary() . ')', 6 unless sim_available();
    my $sport = $ENV{TEST_NGINX_SIM_TEST_PORT} || 18899;
    sim_start(port => $sport, args => ['--slot-ms', 400]);
    ok(sim_running($sport), 'sim_start: running');
    my $res = http_post($sport, '/', '{"jsonrpc":"2.0","id":1,"method":"getSlot"}',
        { 'Content-Type' => 'application/json' });
    is($res->{status}, 200, 'sim: getSlot status');
    my $stats = sim_stats($sport);
    is(ref $stats->{calls}, 'HASH', 'sim_stats: calls hash');
    ok(($stats->{calls}{getSlot} || 0) >= 1, 'sim_stats: getSlot counted');
    sim_reset($sport);
    is(sim_stats($sport)->{total} || 0, 0, 'sim_reset: counters cleared');
    sim_kill($sport);
    ok(!Test::Nginx::Util::port_accepts($sport), 'sim_kill: port closed');
}

eval { local $ENV{TEST_NGINX_SIM} = '/nonexistent/solana-sim'; sim_start(port => 18898) };
like($@, qr/binary not found/, 'sim_start: dies clearly when the binary is missing');

# ---------------------------------------------------------------------------
# waiting for conditions: wait_for, wait_until and the error_log polling
# ---------------------------------------------------------------------------

{
    my $looks = 0;
    my $v = wait_until(sub { ++$looks >= 3 ? "seen" : 0 }, 2, 'three looks');
    is($v, 'seen', "wait_until: returns the condition's true value");
    is($looks, 3, 'wait_until: looks again until the condition holds, then stops');
    $looks = 0;
    is(wait_for('wait_for: passes once the condition holds', sub { ++$looks >= 2 && 42 }, 2),
       42, "wait_for: returns the condition's true value");
    $looks = 0;
    ok(wait_until(sub { die "not yet\n" if ++$looks < 3; 1 }, 2),
       'wait_until: a condition that dies counts as false, not as an error');

    # the interval between two looks: never shorter than asked, and a last
    # look at the deadline: 2 to 4 looks in 0.25 s at 0.1 s
    $looks = 0;
    Test::Nginx::Socket::_poll(sub { ++$looks; 0 }, 0.25, 0.1);
    ok($looks >= 2 && $looks <= 4, "_poll: looks every interval, then once at the deadline ($looks)");

    # the error log is read again until every error_log pattern matches
    my @reads = ('', "a line\n", "a line\nthe late line\n");
    my $reads = 0;
    my $log = Test::Nginx::Socket::_wait_log(
        sub { $reads++; $reads[$reads - 1 < $#reads ? $reads - 1 : $#reads] },
        ['the late line', qr/a line/], 2);
    like($log, qr/the late line/, '_wait_log: waits for a line logged late');
    is($reads, 3, '_wait_log: stops reading once every pattern matches');
    $reads = 0;
    Test::Nginx::Socket::_wait_log(sub { $reads++; 'x' }, [], 2);
    is($reads, 1, '_wait_log: reads once when there is no pattern');
    {
        local $ENV{TEST_NGINX_WAIT_TIMEOUT} = '0.5';
        is(wait_timeout(), 0.5, 'wait_timeout: from $TEST_NGINX_WAIT_TIMEOUT');
    }
    is(wait_timeout(), 5, 'wait_timeout: 5 s by default');
}

# ---------------------------------------------------------------------------
# failures the runner must report: run a small test file in a child perl
# (its own servroot; the port is free here) and read its TAP
# ---------------------------------------------------------------------------

sub child_tap {
    my ($data) = @_;
    my $dir = File::Spec->catdir(Test::Nginx::Util::t_dir(), 'servroot-selftest');
    File::Path::remove_tree($dir);
    File::Path::make_path($dir);
    my $file = File::Spec->catfile($dir, 'child.t');
    open my $fh, '>', $file or die "cannot write $file: $!";
    print $fh "use Test::Nginx::Socket 'no_plan';\nno_root_location();\nrun_tests();\n__DATA__\n$data";
    close $fh;
    my $lib = File::Spec->catdir(Test::Nginx::Util::t_dir(), 'lib');
    local $ENV{TEST_NGINX_SERVROOT} = File::Spec->catdir($dir, 'servroot');
    local $ENV{TEST_NGINX_HTML_DIR} = File::Spec->catdir($dir, 'servroot', 'html');
    my $out = `$^X -I$lib $file 2>&1`;
    my $rc = $? >> 8;
    File::Path::remove_tree($dir);
    return ($out, $rc);
}

{
    my ($out, $rc) = child_tap(<<'_EOT_');
=== TEST 1: a condition that never holds
--- wait_timeout: 0.3
--- wait_for eval
['never', sub { 0 }]
--- config
    location = /t { return 200 "ok\n"; }
--- request
GET /t



=== TEST 2: a fixed wait is refused
--- config
    location = /t { return 200 "ok\n"; }
--- request
GET /t
--- wait: 0.1



=== TEST 3: a step that dies, a precondition that times out
--- config
    location = /t { return 200 "ok\n"; }
--- request eval
["GET /t", sub { wait_until(sub { 0 }, 0.2, 'the precondition') }, sub { die "boom\n" }, "GET /t"]



=== TEST 4: an error_log pattern that never comes
--- wait_timeout: 0.3
--- config
    location = /t { return 200 "ok\n"; }
--- request
GET /t
--- error_log
this line is never logged
_EOT_
    isnt($rc, 0, 'child: the failing file fails');
    like($out, qr/^not ok \d+ - TEST 1: a condition that never holds - wait_for: never \(not true within 0\.3 s\)$/m,
         'wait_for section: a timeout fails with a clear message');
    like($out, qr/^ok \d+ - TEST 1: a condition that never holds - status code ok$/m,
         'wait_for section: the requests still run after a timeout');
    like($out, qr/^not ok \d+ - TEST 2: a fixed wait is refused - --- wait is not supported: it sleeps a fixed time/m,
         '--- wait is refused');
    unlike($out, qr/^ok \d+ - TEST 2:/m, '--- wait: the block is not run');
    like($out, qr/^not ok \d+ - the precondition: not true within 0\.2 s$/m,
         'wait_until: a timeout fails with a clear message');
    like($out, qr/^not ok \d+ - TEST 3: a step that dies, a precondition that times out - step before req 1 failed: boom$/m,
         'a step that dies fails the block');
    unlike($out, qr/TEST 3: .* - req 1 - status code/, 'the requests after a failed step are not sent');
    like($out, qr/^not ok \d+ - TEST 4: an error_log pattern that never comes - pattern "this line is never logged" matches a line in error\.log$/m,
         'error_log: a line that never comes fails after the bound');
}

$ENV{TEST_NGINX_GREETING} = 'hello from env';

# default checks for every block that does not state its own
my $preprocessed = 0;
add_block_preprocessor(sub {
    my $block = shift;
    $preprocessed++;
    if (!defined $block->no_error_log && !defined $block->must_die) {
        $block->set_value(no_error_log => "[alert]\n[crit]\n[emerg]\n");
    }
});

run_tests();

is($preprocessed, scalar(blocks()), 'add_block_preprocessor ran once per block');

# after run_tests nothing may be left running
ok(!Test::Nginx::Util::nginx_running(), 'no nginx left running after run_tests');
ok(!Test::Nginx::Util::port_accepts(server_port()), 'server port free after run_tests');

__DATA__

=== TEST 1: response_body exact
--- config
    location = /t {
        return 200 "ok\n";
    }
--- request
GET /t
--- response_body
ok
--- no_error_log
[error]
[alert]



=== TEST 2: error_code, response_body_like and error_log for a missing file
--- config
    location /nofile/ {
        root $TEST_NGINX_HTML_DIR;
    }
--- request
GET /nofile/missing.txt
--- error_code: 404
--- response_body_like: 404 Not Found
--- response_body_unlike: 200 OK
--- error_log eval
["No such file or directory", qr/\[error\] .*open\(\) ".*missing\.txt" failed/]



=== TEST 3: response_headers present and absent, response_headers_like
--- config
    location = /h {
        add_header X-Test hello;
        add_header X-Empty-Not-Added "";
        return 200 "h\n";
    }
--- request
GET /h
--- response_headers
X-Test: hello
Content-Type: text/plain
!X-Absent
!X-Empty-Not-Added
--- response_headers_like
Server: nginx(/[\d.]+)?
Content-Length: \d+
--- response_body
h



=== TEST 4: more_headers are sent
--- config
    location = /mh {
        return 200 "foo=$http_x_foo bar=$http_x_bar\n";
    }
--- request
GET /mh
--- more_headers
X-Foo: foo value
X-Bar: $TEST_NGINX_SERVER_PORT
--- response_body eval
"foo=foo value bar=$ENV{TEST_NGINX_SERVER_PORT}\n"



=== TEST 5: POST body (Content-Length and echoed through a proxy)
--- config
    location = /len {
        return 200 "len=$content_length\n";
    }
    location = /echo {
        proxy_pass http://127.0.0.1:$TEST_NGINX_SERVER_PORT/back;
        proxy_set_header X-Body $request_body;
    }
    location = /back {
        return 200 "$request_method $http_x_body\n";
    }
--- request eval
["POST /len\nhello world\n", "POST /echo\nhello world"]
--- response_body eval
["len=12\n", "POST hello world\n"]



=== TEST 6: literal request section: the final newline is not part of the body
--- config
    location = /len {
        return 200 "len=$content_length\n";
    }
--- request
POST /len
{"jsonrpc":"2.0","id":1,"method":"getSlot"}
--- response_body
len=43



=== TEST 7: request eval with an array of requests, indexed expectations
--- config
    location = /a { return 200 "a\n"; }
    location = /b { return 201 "b\n"; }
    location = /c { return 404; }
--- request eval
["GET /a", "GET /b", "GET /c"]
--- error_code eval
[200, 201, 404]
--- response_body_like eval
[qr/^a$/, qr/^b\n\z/, qr/404 Not Found/]



=== TEST 8: error_log / no_error_log with rewrite_log notices
--- config
    rewrite_log on;
    location /r/ {
        rewrite ^/r/(.*)$ /t/$1 last;
    }
    location /t/ {
        return 200 "$uri\n";
    }
--- request
GET /r/xyz
--- response_body
/t/xyz
--- error_log
"^/r/(.*)$" matches "/r/xyz"
rewritten data: "/t/xyz"
--- no_error_log eval
[qr/\[error\]/, "[alert]", "[emerg]"]



=== TEST 9: must_die with a bad directive
--- config
    location = /t {
        this_is_not_a_directive on;
    }
--- must_die
--- error_log
unknown directive "this_is_not_a_directive"



=== TEST 10: must_die with a bad main_config directive
--- main_config
worker_rlimit_nofile abc;
--- must_die
--- error_log eval
qr/"worker_rlimit_nofile" directive invalid number/



=== TEST 11: $TEST_NGINX_* expansion in main_config, http_config and config
--- main_config
env TEST_NGINX_GREETING;
--- http_config
    map $uri $tn_port {
        default "$TEST_NGINX_SERVER_PORT";
    }
--- config
    location = /p {
        return 200 "port=$tn_port greeting=$TEST_NGINX_GREETING servroot=${TEST_NGINX_SERVROOT}\n";
    }
--- request
GET /p
--- response_body eval
"port=$ENV{TEST_NGINX_SERVER_PORT} greeting=hello from env servroot=$ENV{TEST_NGINX_SERVROOT}\n"



=== TEST 12: error_log is polled: a line logged after the response is not missed
With lingering_close always, nginx reads the client's close after it sent
the response, and logs it then; the runner reads error.log again until the
line is there (no fixed wait).
--- config
    lingering_close always;
    location = /w {
        access_log logs/access.log;
        return 200 "w\n";
    }
--- request
GET /w
--- response_body
w
--- error_log
http finalize request
http lingering close handler
--- no_error_log
[error]



=== TEST 13: chunked transfer encoding is decoded
--- config
    location = /chunked {
        sub_filter 'hello' 'bye';
        sub_filter_types *;
        return 200 "hello world\n";
    }
--- request
GET /chunked
--- response_headers
Transfer-Encoding: chunked
!Content-Length
--- response_body
bye world



=== TEST 14: raw_request sent as-is (HTTP/1.0)
--- config
    location = /raw {
        return 200 "proto=$server_protocol\n";
    }
--- raw_request eval
"GET /raw HTTP/1.0\r\nHost: localhost\r\n\r\n"
--- response_body
proto=HTTP/1.0



=== TEST 15: init runs before the request; user_files land in html/
--- init
my $f = "$ENV{TEST_NGINX_HTML_DIR}/from-init.txt";
open my $fh, '>', $f or die "cannot write $f: $!";
print $fh "written by init\n";
close $fh;
--- user_files
>>> static/hello.txt
hello file
--- request eval
["GET /from-init.txt", "GET /static/hello.txt"]
--- response_body eval
["written by init\n", "hello file\n"]



=== TEST 16: timeout + abort: a hanging request is cut, without failing
--- config
    location = /hang {
        proxy_pass http://127.0.0.1:$TEST_NGINX_SERVER_PORT/back;
    }
    location = /back { return 200; }
--- raw_request eval
"POST /hang HTTP/1.1\r\nHost: localhost\r\nContent-Length: 50\r\n\r\npartial"
--- timeout: 0.3
--- abort
--- ignore_response



=== TEST 17: grep_error_log
--- config
    rewrite_log on;
    location /g/ {
        rewrite ^/g/(.*)$ /t/$1 last;
    }
    location /t/ {
        return 200 "$uri\n";
    }
--- request
GET /g/abc
--- grep_error_log eval
qr/rewritten data: "[^"]+"/
--- grep_error_log_out
rewritten data: "/t/abc"



=== TEST 18: log_level per block
--- log_level: warn
--- config
    rewrite_log on;
    location /r/ {
        rewrite ^/r/(.*)$ /t/$1 last;
    }
    location /t/ {
        return 200 "$uri\n";
    }
--- request
GET /r/q
--- response_body
/t/q
--- no_error_log
rewritten data
[debug]



=== TEST 19: setup runs before nginx starts, once the servroot is ready
--- setup
my $f = "$ENV{TEST_NGINX_SERVROOT}/conf/from-setup.conf";
open my $fh, '>', $f or die "cannot write $f: $!";
print $fh qq{location = /s { return 200 "from setup\\n"; }\n};
close $fh;
--- config
    include $TEST_NGINX_SERVROOT/conf/from-setup.conf;
--- request
GET /s
--- response_body
from setup



=== TEST 20: wait_for polls each condition until it holds (eval form)
--- init
$main::Looks = 0;
--- wait_for eval
[['the third look', sub { ++$main::Looks >= 3 }],
 sub { $main::Looks == 3 }]
--- config
    location = /t { return 200 "ok\n"; }
--- request
GET /t
--- response_body
ok
--- check
is($main::Looks, 3, 'wait_for stopped looking once the condition held');



=== TEST 21: wait_for, literal form: one Perl expression
--- init
$main::Looks = 0;
--- wait_for: ++$main::Looks >= 2
--- wait_timeout: 2
--- config
    location = /t { return 200 "ok\n"; }
--- request
GET /t
--- response_body
ok



=== TEST 22: steps run between requests; deferred requests are built when sent; check gets the responses
--- config
    location /f/ {
        root $TEST_NGINX_HTML_DIR;
    }
--- request eval
["GET /f/late.txt",
 step {
     my $d = "$ENV{TEST_NGINX_HTML_DIR}/f";
     mkdir $d;
     open my $fh, '>', "$d/late.txt" or die "cannot write: $!";
     print $fh "written by a step\n";
     close $fh;
     $main::Name = 'late.txt';
 },
 "GET /f/late.txt",
 deferred { "GET /f/$main::Name" }]
--- error_code eval
[404, 200, 200]
--- response_body eval
[undef, "written by a step\n", "written by a step\n"]
--- more_headers eval
["X-N: 0", "X-N: 1", "X-N: 2"]
--- check
is(scalar @_, 3, 'check gets one response per request (steps are not requests)');
is($_[0]{status}, 404, 'check: the responses in order');
is($_[2]{body}, "written by a step\n", 'check: the deferred request was built after the step');



=== TEST 23: workers: a master with N workers; nginx_reload replaces them
--- workers: 2
--- config
    location = /t { return 200 "ok\n"; }
--- request eval
["GET /t", step { @main::Before = nginx_workers(); nginx_reload() }, "GET /t"]
--- check
is(scalar @main::Before, 2, 'two worker processes');
wait_for('the reload replaced both workers', sub {
    my %old = map { $_ => 1 } @main::Before;
    my @now = nginx_workers();
    return @now == 2 && !grep { $old{$_} } @now;
}, 5);



=== TEST 24: nginx_restart: graceful and kill -9, on the same servroot
--- config
    location = /pid { return 200 "$pid\n"; }
--- request eval
["GET /pid", step { nginx_restart() }, "GET /pid", step { nginx_restart(kill => 1) }, "GET /pid"]
--- check
my @pids = map { $_->{body} =~ /^(\d+)$/ ? $1 : '?' } @_;
is(scalar(keys %{{ map { $_ => 1 } @pids }}), 3, 'each restart is a new nginx');
ok(!Test::Nginx::Util::process_alive($pids[1]), 'the killed nginx is gone');
open my $fh, '<', "$ENV{TEST_NGINX_SERVROOT}/logs/access.log" or die "no access.log: $!";
my @lines = <$fh>;
is(scalar @lines, 3, 'the servroot (access.log) is kept across restarts');
--- error_log
signal 3 (SIGQUIT) received



=== TEST 25: shutdown_check runs once nginx has stopped
--- config
    location = /t { return 200 "ok\n"; }
--- request
GET /t
--- check
$main::Pid = Test::Nginx::Util::nginx_pid();
--- shutdown_check
ok(!Test::Nginx::Util::process_alive($main::Pid), 'nginx is gone');
like(Test::Nginx::Util::read_error_log(), qr/\[notice\] .*exit/, 'shutdown_check sees the whole error.log');



=== TEST 26: raw_request lists take steps too
--- config
    location = /n { return 200 "n=$arg_n\n"; }
--- raw_request eval
["GET /n?n=1 HTTP/1.0\r\nHost: localhost\r\n\r\n",
 step { $main::Between = 1 },
 "GET /n?n=2 HTTP/1.0\r\nHost: localhost\r\n\r\n"]
--- response_body eval
["n=1\n", "n=2\n"]
--- check
is($main::Between, 1, 'the step ran');
is(scalar @_, 2, 'two responses');
