# HTTPS upstreams with a private CA (issue 18 item 7). The test makes a CA
# and certificates signed by it, and runs TLS fronts (servers of the same
# nginx) in front of a simulated node: the state poller, which does not go
# through nginx's proxy module, checks and presents TLS per upstream
# (tls_verify=, tls_trusted_certificate=, tls_name=, tls_certificate=,
# tls_certificate_key=), names a TLS failure as such in the cordon reason,
# and nginx -t refuses files that cannot serve.

use Test::Nginx::Socket 'no_plan';
use File::Copy ();
use File::Temp ();
use Solgate::Sim;
use Solgate::TestConf;
use Solgate::Gateway;

our ($SimTls, $SimPlain) = (20250, 20251);       # behind the fronts; direct
our ($FrontLocal, $FrontNamed, $FrontClient) = (20252, 20253, 20254);

# The test's PKI: a CA; a server certificate for 127.0.0.1 (and localhost),
# one for rpc.test only, and a client certificate, all signed by the CA.
our $Tls = File::Temp::tempdir(CLEANUP => 1);
sub openssl {
    my ($args) = @_;
    system("openssl $args >/dev/null 2>&1") == 0
        or die "openssl $args: failed\n";
}
sub signed {
    my ($name, $subject, $ext) = @_;
    openssl("req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
            . "-subj /CN=$subject -keyout $Tls/$name.key -out $Tls/$name.csr");
    open my $fh, '>', "$Tls/$name.ext" or die $!;
    print $fh "$ext\n";
    close $fh;
    openssl("x509 -req -in $Tls/$name.csr -CA $Tls/ca.pem -CAkey $Tls/ca.key "
            . "-set_serial 0x" . unpack('H*', $name) . " -days 1 "
            . "-extfile $Tls/$name.ext -out $Tls/$name.pem");
}
openssl("req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
        . "-subj '/CN=Solgate Test CA' -days 1 -keyout $Tls/ca.key -out $Tls/ca.pem");
signed('local', 'localhost', 'subjectAltName=DNS:localhost,IP:127.0.0.1');
signed('named', 'rpc.test', 'subjectAltName=DNS:rpc.test');
signed('client', 'solgate-poller', 'extendedKeyUsage=clientAuth');

sim_start(port => $_, args => ['--skip-rate', 0, '--quiet']) for $SimTls, $SimPlain;

# Three TLS fronts of the simulated node: a certificate for 127.0.0.1; one
# for rpc.test alone, answering only a client that asked for rpc.test
# (SNI); and one that asks for a client certificate signed by the CA.
our $Fronts = <<"_EOC_";
    server {
        listen 127.0.0.1:$FrontLocal ssl;
        ssl_certificate $Tls/local.pem;
        ssl_certificate_key $Tls/local.key;
        location / { proxy_pass http://127.0.0.1:$SimTls; }
    }
    server {
        listen 127.0.0.1:$FrontNamed ssl;
        ssl_certificate $Tls/named.pem;
        ssl_certificate_key $Tls/named.key;
        location / {
            if (\$ssl_server_name != "rpc.test") { return 421; }
            proxy_pass http://127.0.0.1:$SimTls;
        }
    }
    server {
        listen 127.0.0.1:$FrontClient ssl;
        ssl_certificate $Tls/local.pem;
        ssl_certificate_key $Tls/local.key;
        ssl_client_certificate $Tls/ca.pem;
        ssl_verify_client on;
        location / { proxy_pass http://127.0.0.1:$SimTls; }
    }
_EOC_

# A network of the direct node ("plain") and the TLS upstreams given.
sub tls_network {
    my @tls = @_;
    return network_conf('mainnet', upstreams => [
        ['plain', "http://127.0.0.1:$SimPlain"], @tls]) . $Fronts;
}

# $extra goes into both client locations (nginx's own proxy_ssl_* lines).
sub tls_locations {
    my ($extra) = @_;
    my $locations = solgate_locations('mainnet', extra => $extra || '');
    $locations =~ s/(location \@solgate_retry \{\n)/$1        $extra\n/ if $extra;
    return $locations . "    location /solgate/ { solgate_admin; }\n";
}

our $Account = '"83astBRguLMdt2h5U1Tpdq5tjFoJ6noeGwaY3mDLVcri"';
our $Bad = "[error]\n[alert]\n[crit]\n[emerg]\n";

sub clean { for my $p ($SimTls, $SimPlain) { sim_fault($p, 'clear'); sim_reset($p) } }

# Waits (bounded) until the poller's getHealth to $id succeeded and its
# slots came in: it polled through TLS.
sub polled_healthy {
    my ($id) = @_;
    return ["$id is polled over TLS, healthy", sub {
        my $u = upstream_state($id) or return 0;
        return $u->{health} eq 'ok' && $u->{processed_slot} > 0;
    }, 5];
}

sub cordoned_by_poller {
    my ($id) = @_;
    return ["$id is cordoned by the poller", sub {
        my $c = (upstream_state($id) || {})->{cordon};
        return $c && $c->{by} eq 'poller';
    }, 5];
}

sub reason_of { upstream_state($_[0])->{cordon}{reason} }

add_block_preprocessor(sub {
    my $block = shift;
    $block->set_value(config => tls_locations()) unless defined $block->config;
    $block->set_value(setup => 'clean();') unless defined $block->setup;
    $block->set_value(no_error_log => $Bad)
        unless defined $block->no_error_log || defined $block->must_die;
});

no_root_location();
run_tests();

__DATA__

=== TEST 1: without the CA the poller refuses the certificate, cordons with a TLS reason, and the upstream gets no traffic
nginx's proxy would forward to it (proxy_ssl_verify is off by default);
the poller verifies by default, with the system's CAs.
--- http_config eval
tls_network(['vendor', "https://127.0.0.1:$FrontLocal/"])
--- wait_for eval
[cordoned_by_poller('vendor'), polled_healthy('plain')]
--- request eval
[step {
     is(reason_of('vendor'),
        'svm state poller: getHealth failed: TLS: SSL certificate problem: '
        . 'unable to get local issuer certificate (tls_trusted_certificate not set)',
        'the reason says TLS, the certificate problem and the option not set');
 },
 @{ rpc_requests('/', map { [$_, 'getBalance', "[$Account]"] } 1 .. 10) }]
--- response_body_like: "context"
--- check
is(sim_client_calls($SimTls), 0, 'the cordoned upstream gets no client traffic');
--- error_log eval
[qr/\[warn\] .*svm state poller: getHealth failed: network=mainnet upstream=vendor TLS: SSL certificate problem: unable to get local issuer certificate \(tls_trusted_certificate not set\)/,
 qr/\[warn\] .*cordoning out of rotation: network=mainnet upstream=vendor .*reason="svm state poller: getHealth failed: TLS: SSL certificate problem/]



=== TEST 2: tls_trusted_certificate=CA: polled healthy, and a client call reaches it through nginx's proxy
--- http_config eval
tls_network(['vendor', "https://127.0.0.1:$FrontLocal/", "tls_trusted_certificate=$Tls/ca.pem"])
--- wait_for eval
[polled_healthy('vendor')]
--- request eval
rpc_request('/', 1, 'getBalance', "[$Account]")
--- more_headers
X-Solgate-Use-Upstream: vendor
--- response_body_like: "context"
--- check
is(upstream_state('vendor')->{cordon}, undef, 'not cordoned');
is(sim_client_calls($SimTls, 'getBalance'), 1, 'the call went through the TLS front');



=== TEST 3: a relative tls_trusted_certificate is taken from nginx's configuration directory
--- http_config eval
tls_network(['vendor', "https://127.0.0.1:$FrontLocal/", 'tls_trusted_certificate=test-ca.pem'])
--- setup
clean();
File::Copy::copy("$Tls/ca.pem", servroot() . '/conf/test-ca.pem') or die "copy: $!";
--- wait_for eval
[polled_healthy('vendor')]
--- request eval
rpc_request('/', 1, 'getSlot')
--- check
is(upstream_state('vendor')->{cordon}, undef, 'not cordoned');



=== TEST 4: tls_verify=off polls it as nginx's proxy forwards to it, without checks
--- http_config eval
tls_network(['vendor', "https://127.0.0.1:$FrontLocal/", 'tls_verify=off'],
            ['named', "https://127.0.0.1:$FrontNamed/", 'tls_verify=off tls_name=rpc.test'])
--- wait_for eval
[polled_healthy('vendor'), polled_healthy('named')]
--- request eval
rpc_request('/', 1, 'getSlot')
--- check
is(upstream_state($_)->{cordon}, undef, "$_ not cordoned") for qw(vendor named);



=== TEST 5: a front that wants a client certificate: cordoned with a TLS reason without one, polled with tls_certificate=
nginx answers a client without a certificate HTTP 400 "No required SSL
certificate was sent"; nginx's own proxy presents the same certificate
with proxy_ssl_certificate, so the client call reaches the node too.
--- http_config eval
tls_network(['without', "https://127.0.0.1:$FrontClient/", "tls_trusted_certificate=$Tls/ca.pem"],
            ['with', "https://127.0.0.1:$FrontClient/",
             "tls_trusted_certificate=$Tls/ca.pem tls_certificate=$Tls/client.pem tls_certificate_key=$Tls/client.key"])
--- config eval
tls_locations("proxy_ssl_certificate $Tls/client.pem; proxy_ssl_certificate_key $Tls/client.key;")
--- wait_for eval
[cordoned_by_poller('without'), polled_healthy('with')]
--- request eval
rpc_request('/', 1, 'getBalance', "[$Account]")
--- more_headers
X-Solgate-Use-Upstream: with
--- response_body_like: "context"
--- check
is(reason_of('without'),
   'svm state poller: getHealth failed: TLS: HTTP 400 "No required SSL certificate was sent" (tls_certificate not set)',
   'the reason says TLS and that no client certificate was set');
is(upstream_state('with')->{cordon}, undef, 'with the certificate: not cordoned');
is(sim_client_calls($SimTls, 'getBalance'), 1, 'the call went through the front');
--- error_log eval
qr/\[warn\] .*getHealth failed: network=mainnet upstream=without TLS: HTTP 400 "No required SSL certificate was sent" \(tls_certificate not set\)/



=== TEST 6: tls_name= names the certificate and SNI where the URL has an address
The front's certificate is for rpc.test alone and it answers only a
client that asked for rpc.test. nginx's proxy is told the same name
(proxy_ssl_name, proxy_ssl_server_name) for the client call.
--- http_config eval
tls_network(['named', "https://127.0.0.1:$FrontNamed/", "tls_trusted_certificate=$Tls/ca.pem tls_name=rpc.test"],
            ['unnamed', "https://127.0.0.1:$FrontNamed/", "tls_trusted_certificate=$Tls/ca.pem"])
--- config eval
tls_locations("proxy_ssl_name rpc.test; proxy_ssl_server_name on;")
--- wait_for eval
[polled_healthy('named'), cordoned_by_poller('unnamed')]
--- request eval
rpc_request('/', 1, 'getBalance', "[$Account]")
--- more_headers
X-Solgate-Use-Upstream: named
--- response_body_like: "context"
--- check
is(upstream_state('named')->{cordon}, undef, 'tls_name=rpc.test: not cordoned');
is(reason_of('unnamed'),
   "svm state poller: getHealth failed: TLS: SSL: no alternative certificate subject name matches target host name '127.0.0.1' (tls_name not set)",
   'without it: the name is the TLS problem');
is(sim_client_calls($SimTls, 'getBalance'), 1, 'the call went through the front');



=== TEST 7: nginx -t refuses a CA file that is not there
--- http_config eval
network_conf('mainnet', upstreams => [['vendor', "https://127.0.0.1:$FrontLocal/", "tls_trusted_certificate=$Tls/missing.pem"]])
--- must_die
--- error_log eval
qr/"tls_trusted_certificate=" file "\Q$Tls\E\/missing\.pem" in upstream "vendor" cannot be read \(2: No such file or directory\) in \S+nginx\.conf:\d+/



=== TEST 8: nginx -t refuses a CA file that holds no certificate
--- http_config eval
network_conf('mainnet', upstreams => [['vendor', "https://127.0.0.1:$FrontLocal/", "tls_trusted_certificate=$Tls/ca.key"]])
--- must_die
--- error_log eval
qr/"tls_trusted_certificate=" file "\Q$Tls\E\/ca\.key" in upstream "vendor" holds no PEM certificate in \S+nginx\.conf:\d+/



=== TEST 9: nginx -t refuses a client certificate without its key
--- http_config eval
network_conf('mainnet', upstreams => [['vendor', "https://127.0.0.1:$FrontClient/", "tls_certificate=$Tls/client.pem"]])
--- must_die
--- error_log eval
qr/"tls_certificate=" in upstream "vendor" needs "tls_certificate_key=" in \S+nginx\.conf:\d+/



=== TEST 10: nginx -t refuses tls_* options on an http:// upstream
--- http_config eval
network_conf('mainnet', upstreams => [['plain', "http://127.0.0.1:$SimPlain", 'tls_name=rpc.test']])
--- must_die
--- error_log eval
qr/"tls_name=" in upstream "plain" needs an "https:\/\/" URL in \S+nginx\.conf:\d+/



=== TEST 11: nginx -t refuses tls_verify= other than on or off
--- http_config eval
network_conf('mainnet', upstreams => [['vendor', "https://127.0.0.1:$FrontLocal/", 'tls_verify=yes']])
--- must_die
--- error_log eval
qr/invalid "tls_verify=" "yes" in upstream "vendor": must be "on" or "off" in \S+nginx\.conf:\d+/
