package Solgate::Gateway;

# Helpers for tests that talk to a running Solgate gateway: JSON-RPC
# bodies and request sections, the admin state (`solgate_admin`), the
# metrics (`solgate_metrics`) and the processes of a gateway.
#
#   use Solgate::Gateway;
#   rpc(1, 'getSlot')                          # {"jsonrpc":"2.0","id":1,"method":"getSlot"}
#   rpc_requests('/', map { [$_, 'getSlot'] } 1 .. 3)   # for --- request eval
#   upstream_state('sim-b')->{cordon}          # from GET /solgate/state
#   metric(qr/^solgate_x\{...\} (\d+)$/m)      # $1 of a match in GET /metrics
#
# Every function that talks to a gateway takes an optional port last; the
# default is the test's server port. See t/lib/README.md.

use strict;
use warnings;

use Exporter 'import';
use JSON::PP ();
use Test::Nginx::Util ();

our @EXPORT = qw(
    rpc rpc_request rpc_requests get_block_call sans_id
    admin_state network_state upstream_state upstreams
    metrics_text metric equal_costs
    process_threads
);

sub _port { defined $_[0] ? $_[0] : Test::Nginx::Util::server_port() }

# rpc($id, $method, $params): a JSON-RPC 2.0 call; $id and $params are
# JSON text ($params is left out when undef).
sub rpc {
    my ($id, $method, $params) = @_;
    return qq({"jsonrpc":"2.0","id":$id,"method":"$method")
        . (defined $params ? qq(,"params":$params) : '') . '}';
}

# rpc_request($uri, $id, $method, $params): "POST $uri\n<call>", one
# request of a request section.
sub rpc_request {
    my ($uri, @call) = @_;
    return "POST $uri\n" . rpc(@call);
}

# rpc_requests($uri, [$id, $method, $params], ...): a list of them.
sub rpc_requests {
    my ($uri, @calls) = @_;
    return [ map { rpc_request($uri, @$_) } @calls ];
}

# getBlock as a current client sends it: maxSupportedTransactionVersion 0
# unless $opts (JSON text) says otherwise.
sub get_block_call {
    my ($id, $slot, $opts) = @_;
    $opts = '{"maxSupportedTransactionVersion":0}' unless defined $opts;
    return rpc($id, 'getBlock', "[$slot,$opts]");
}

# The answer without its id: what must be identical whichever source
# served it.
sub sans_id {
    my ($body) = @_;
    $body =~ s/"id":(?:\d+|"[^"]*"|null)//;
    return $body;
}

# GET /solgate/state, decoded. Dies if the answer is not JSON.
sub admin_state {
    my ($port) = @_;
    my $res = Test::Nginx::Util::http_get(_port($port), '/solgate/state');
    my $data = eval { JSON::PP->new->decode($res->{body}) };
    die "admin_state: GET /solgate/state answered "
        . (defined $res->{status} ? $res->{status} : $res->{error})
        . ", not JSON: " . substr($res->{body} // '', 0, 200) . "\n"
        unless ref $data;
    return $data;
}

# The network called $name (the first network when $name is undef).
sub network_state {
    my ($name, $port) = @_;
    my @nets = @{ admin_state($port)->{networks} };
    return $nets[0] unless defined $name;
    my ($n) = grep { $_->{name} eq $name } @nets;
    return $n;
}

# The upstreams of a network (the first one when $network is undef).
sub upstreams {
    my ($network, $port) = @_;
    my $n = network_state($network, $port) or return ();
    return @{ $n->{upstreams} };
}

# The upstream with id $id in the first network (or in $network).
sub upstream_state {
    my ($id, $network, $port) = @_;
    my ($u) = grep { $_->{id} eq $id } upstreams($network, $port);
    return $u;
}

sub metrics_text {
    my ($port) = @_;
    return Test::Nginx::Util::http_get(_port($port), '/metrics')->{body};
}

# metric($re, $port): $1 of $re matched against GET /metrics, or undef.
sub metric {
    my ($re, $port) = @_;
    return metrics_text($port) =~ $re ? $1 : undef;
}

# equal_costs($network, $upstreams_re, $count, $port): true when exactly
# $count upstreams of $network whose id matches $upstreams_re have been
# polled (a slot seen) and cost the same to the picker: each poll round
# trip measured and under the 5 ms latency floor.  A picker takes strict
# turns only then (a loaded or sanitized gateway's first polls are slower).
sub equal_costs {
    my ($network, $upstreams_re, $count, $port) = @_;
    my $m = metrics_text($port);
    my $of = sub {   # the values of a per-upstream family, for the matching ids
        my ($family) = @_;
        my %v = $m =~ /^\Q$family\E\{network="\Q$network\E",upstream="([^"]*)"\} (\S+)$/mg;
        return map { $v{$_} } grep { $_ =~ $upstreams_re } keys %v;
    };
    my @slots = $of->('solgate_upstream_latest_slot');
    my @ewma = $of->('solgate_upstream_latency_ewma_seconds');
    return @slots == $count && !grep({ $_ == 0 } @slots)
        && @ewma == $count && !grep { $_ == 0 || $_ >= 0.005 } @ewma;
}

# The number of threads of a process (0 when it is gone).
sub process_threads {
    my ($pid) = @_;
    opendir my $dh, "/proc/$pid/task" or return 0;
    my $n = grep { /^\d+$/ } readdir $dh;
    closedir $dh;
    return $n;
}

1;
