# The Debian package and the production example.  conf/solgate-production.conf
# passes nginx -t; `make deb` builds libnginx-mod-http-solgate with
# debhelper (reused when up to date) and lintian finds no error in it; its
# files, extracted with dpkg -x into a temporary root, are what Debian's
# module packages hold, and Debian's nginx runs the extracted module (and
# its core library, found beside it) against a simulated node.

use Test::Nginx::Socket 'no_plan';
use Solgate::Sim;
use Solgate::Gateway;
use File::Spec;
use File::Temp ();

our $Root = Test::Nginx::Util::repo_root();
our $Nginx = $ENV{TEST_NGINX_BINARY} || '/usr/sbin/nginx';
our $Tmp = File::Temp->newdir("$Root/build/package-test-XXXXXX");
our $SimPort = 20101;

sub slurp { my ($f) = @_; open my $in, '<', $f or die "$f: $!"; local $/; my $t = <$in>; close $in; $t }
sub spew { my ($f, $t) = @_; open my $out, '>', $f or die "$f: $!"; print $out $t; close $out or die "$f: $!" }

# The production example, as an operator installs it (conf.d/ of Debian's
# nginx.conf), with its paths moved into $dir: the snippet from $snippets,
# the cache and state directories, and one key file in its key directory.
sub production_test {
    my ($what, $module, $snippets) = @_;
    my $dir = "$Tmp/production-$what";
    mkdir $dir; mkdir "$dir/keys";
    spew("$dir/keys/customers.map", "test-key-1 blade_runner;\ntest-key-2 free;\n");
    my $conf = slurp("$Root/conf/solgate-production.conf");
    $conf =~ s{/etc/nginx/snippets/}{$snippets/}g;
    $conf =~ s{/var/cache/solgate/}{$dir/cache/}g;
    $conf =~ s{/var/lib/solgate/}{$dir/lib/}g;
    $conf =~ s{/etc/nginx/solgate-keys\.d/}{$dir/keys/}g;
    (my $active = $conf) =~ s/#.*//g;
    my @host = grep { $_ ne '/etc/ssl/certs/ca-certificates.crt' }
        $active =~ m{(?<![\w/])(/(?:etc|var|usr)/[^\s;]+)}g;
    is("@host", '', "$what: the example names no other path of the host");
    spew("$dir/solgate.conf", $conf);
    spew("$dir/nginx.conf", "load_module $module;\nerror_log $dir/error.log notice;\n"
        . "pid $dir/nginx.pid;\nevents {}\nhttp {\n    include $dir/solgate.conf;\n}\n");
    my $out = `$Nginx -t -p $dir/ -c $dir/nginx.conf 2>&1`;
    is($?, 0, "$what: nginx -t accepts conf/solgate-production.conf") or diag($out);
    like(slurp("$dir/error.log"), qr/solgate 0\.1\.0: 1 network\(s\), 3 upstream\(s\)/,
         "$what: its network and three upstreams are read");
    ok(-d "$dir/cache/blocks" && -d "$dir/lib/blocks", "$what: the cache and state directories are made");
}

# Its metrics and admin locations answer only the addresses allowed.
{
    my $conf = slurp("$Root/conf/solgate-production.conf");
    my @private = grep { /\bsolgate_(?:metrics|admin)\s*;/ }
        $conf =~ /^\s*location\s+[^{]*\{([^{}]*)\}/mg;
    is(scalar @private, 2, 'the production example has its metrics and admin locations');
    for my $body (@private) {
        my ($what) = $body =~ /\b(solgate_\w+)\s*;/;
        like($body, qr/^\s*allow\s+\S+;.*^\s*deny\s+all;/ms,
             "production example: the $what location allows some addresses, denies the rest");
    }
    like($conf, qr/^\s*proxy_ssl_name\s+\$solgate_upstream_host;/m,
         'the vendor is asked for by its host= name (SNI)');
}

production_test('built', File::Spec->rel2abs($ENV{TEST_NGINX_LOAD_MODULES}), "$Root/conf");

# The package is built from build/, not from the sanitized build: under
# SANITIZE the example's check above is all this file does.
if ($ENV{SOLGATE_ASAN_LOG}) {
    diag('SANITIZE: the package is built from the normal build; not checked here');
    exit 0;
}

our ($Deb, $Pkg);
{
    local @ENV{qw(MAKEFLAGS MFLAGS MAKELEVEL)};
    my $out = `make -C $Root --no-print-directory deb 2>&1`;
    is($?, 0, 'make deb builds the package and lintian finds no error') or diag($out);
    ($Deb) = glob("$Root/build/deb/libnginx-mod-http-solgate_0.1.0_*.deb");
    ok($Deb && -f $Deb, 'build/deb holds libnginx-mod-http-solgate_0.1.0_ARCH.deb')
        or BAIL_OUT('no package');
    my @errors = grep { /^E: / } split /\n/, slurp("$Root/build/deb/lintian.txt");
    is(scalar @errors, 0, 'lintian: no errors') or diag(join "\n", @errors);
    diag(sprintf 'package: %s, %d bytes', $Deb =~ s{.*/}{}r, -s $Deb);
}

# What the package says of itself: Debian's nginx module layout and the
# runtime libraries, with the nginx ABI the installed nginx provides.
{
    my %f = map { my $v = `dpkg-deb -f $Deb $_`; chomp $v; ($_ => $v) }
        qw(Package Version Depends Section Multi-Arch);
    is($f{Package}, 'libnginx-mod-http-solgate', 'Package');
    is($f{Version}, '0.1.0', 'Version is the Makefile\'s');
    my ($abi) = `dpkg-query -W -f='\${Provides}' nginx` =~ /(nginx-abi-[\w.~+-]+)/;
    ok($abi, "the installed nginx provides $abi");
    my ($runtime) = slurp("$Root/Makefile") =~ /^RUNTIME_PACKAGES\s*:=\s*(.+)$/m;
    my @runtime = split ' ', $runtime // '';
    ok(@runtime >= 5, "the Makefile's RUNTIME_PACKAGES: @runtime");
    for my $dep ($abi, @runtime, 'libstdc++6') {
        like($f{Depends}, qr/(?:^|, )\Q$dep\E(?: \(|,|$)/, "Depends: $dep");
    }
    my $control = "$Tmp/control";
    system('dpkg-deb', '-e', $Deb, $control) == 0 or BAIL_OUT("dpkg-deb -e $Deb failed");
    like(slurp("$control/postinst"),
         qr{confpair in mod-http-solgate\.conf:50-mod-http-solgate\.conf .*ln -sf /usr/share/nginx/modules-available/\$from\s+\\\s+/etc/nginx/modules-enabled/\$to}s,
         'postinst (dh_nginx) links modules-available/mod-http-solgate.conf as modules-enabled/50-mod-http-solgate.conf');
    like(slurp("$control/postrm"), qr{"\$1" = "purge".*rm /etc/nginx/modules-enabled/\$to}s,
         'purging removes the link');
    is(slurp("$control/conffiles"),
       "/etc/nginx/snippets/solgate_dispatch.conf\n/etc/nginx/snippets/solgate_proxy.conf\n",
       'the snippets are conffiles');
    ok(!-e "$control/shlibs" && !-e "$control/triggers",
       'no shlibs or ldconfig trigger for the private core library');
}

# dpkg -x into a temporary root: the files, stripped.
{
    $Pkg = "$Tmp/root";
    system('dpkg-deb', '-x', $Deb, $Pkg) == 0 or BAIL_OUT("dpkg -x $Deb failed");
    my $mods = "$Pkg/usr/lib/nginx/modules";
    my @so = map { s{.*/}{}r } glob("$mods/*");
    is_deeply([sort @so], ['libsolgate_core.so.0.1.0', 'ngx_http_solgate_module.so'],
              'usr/lib/nginx/modules: the module and the versioned core library, nothing else');
    is(slurp("$Pkg/usr/share/nginx/modules-available/mod-http-solgate.conf"),
       "load_module modules/ngx_http_solgate_module.so;\n",
       'modules-available/mod-http-solgate.conf loads it as Debian\'s modules are loaded');
    for my $snippet (qw(solgate_proxy.conf solgate_dispatch.conf)) {
        is(slurp("$Pkg/etc/nginx/snippets/$snippet"), slurp("$Root/conf/$snippet"),
           "the snippet is /etc/nginx/snippets/$snippet");
    }
    my $doc = "$Pkg/usr/share/doc/libnginx-mod-http-solgate";
    ok(-f "$doc/$_", "doc: $_") for qw(copyright changelog.gz README.md.gz
        examples/solgate-production.conf examples/solgate-fleet.conf);
    for my $so (map { "$mods/$_" } @so) {
        my $sections = `readelf -S -W $so`;
        unlike($sections, qr/\.debug_info|\.symtab/, ($so =~ s{.*/}{}r) . ' is stripped')
            or diag(sprintf '%d bytes', -s $so);
    }
    my $dyn = `readelf -d $mods/ngx_http_solgate_module.so`;
    like($dyn, qr/NEEDED.*\[libsolgate_core\.so\.0\.1\.0\]/, 'the module needs libsolgate_core.so.0.1.0');
    like($dyn, qr/RUNPATH.*\[\$ORIGIN\]/, 'and finds it beside itself');
    like(`readelf -d $mods/libsolgate_core.so.0.1.0`, qr/SONAME.*\[libsolgate_core\.so\.0\.1\.0\]/,
         'its soname carries the version');
}

production_test('package', "$Pkg/usr/lib/nginx/modules/ngx_http_solgate_module.so",
                "$Pkg/etc/nginx/snippets");

# The blocks below run Debian's nginx with the extracted module.
$ENV{TEST_NGINX_LOAD_MODULES} = "$Pkg/usr/lib/nginx/modules/ngx_http_solgate_module.so";
$ENV{TEST_NGINX_PKG_ROOT} = $Pkg;
$ENV{TEST_NGINX_SIM_PORT} = $SimPort;
sim_start(port => $SimPort, args => ['--slot-ms', 100, '--quiet']);

no_shuffle();
no_root_location();
run_tests();

# the libraries a running nginx has mapped, by file name
sub mapped {
    my $pid = slurp(servroot() . '/logs/nginx.pid') =~ s/\s+//gr;
    my %seen;
    for (split /\n/, slurp("/proc/$pid/maps")) {
        $seen{$1} = 1 if m{\s(/\S*solgate\S*)$};
    }
    return sort keys %seen;
}

__DATA__

=== TEST 1: the extracted module (and its core library) answers JSON-RPC through a simulated node
--- http_config
    upstream sim { server 127.0.0.1:$TEST_NGINX_SIM_PORT; keepalive 4; }
    solgate_network mainnet {
        cluster mainnet-beta;
        upstream sim-a http://sim;
    }
--- config
    location / {
        solgate_pass mainnet;
        include $TEST_NGINX_PKG_ROOT/etc/nginx/snippets/solgate_proxy.conf;
        add_header X-Solgate-Upstream $solgate_upstream always;
    }
    location @solgate_retry {
        solgate_pass mainnet;
        include $TEST_NGINX_PKG_ROOT/etc/nginx/snippets/solgate_proxy.conf;
    }
    location = /metrics { solgate_metrics; }
    location /solgate/ { solgate_admin; }
--- wait_for eval
['the simulated node is polled', sub { (upstream_state('sim-a')->{processed_slot} // 0) > 0 }]
--- request eval
[rpc_request('/', 1, 'getSlot'),
 rpc_request('/', 2, 'getBalance', '["83astBRguLMdt2h5U1Tpdq5tjFoJ6noeGwaY3mDLVcri"]'),
 rpc_request('/', 3, 'getGenesisHash'),
 "GET /metrics"]
--- response_body_like eval
[qr/^\{"jsonrpc":"2\.0","result":\d+,"id":1\}$/,
 qr/^\{"jsonrpc":"2\.0","result":\{"context":\{"apiVersion":"[^"]+","slot":\d+\},"value":\d+\},"id":2\}$/,
 qr/^\{"jsonrpc":"2\.0","result":"5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d","id":3\}$/,
 qr/solgate_upstream_latest_slot\{network="mainnet",upstream="sim-a"\} [1-9]/]
--- response_headers eval
["X-Solgate-Upstream: sim-a", "X-Solgate-Upstream: sim-a", undef, undef]
--- check
my @libs = main::mapped();
is_deeply(\@libs, ["$ENV{TEST_NGINX_PKG_ROOT}/usr/lib/nginx/modules/libsolgate_core.so.0.1.0",
                   "$ENV{TEST_NGINX_PKG_ROOT}/usr/lib/nginx/modules/ngx_http_solgate_module.so"],
          'nginx runs the extracted module and core library, nothing from build/');
--- error_log
solgate 0.1.0: 1 network(s), 1 upstream(s)
--- no_error_log
[error]
[alert]
[crit]
