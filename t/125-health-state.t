# solgate_health (a load balancer's check: 200 while an upstream may take
# client traffic, 503 with the reason when none may).

use Test::Nginx::Socket 'no_plan';
use Solgate::Sim;
use Solgate::TestConf;
use Solgate::Gateway;

our @Ports = (20151, 20152, 20153);
our $Later = 20154;             # a node that is down, then started
our $Dead = 20155;              # nothing ever listens there
our $WsDead = 20156;            # sim-a's ws=, never connected to here
sim_start(port => $_, args => ['--skip-rate', 0, '--quiet']) for @Ports;

sub http_config {
    return network_conf('mainnet', upstreams => [
            ['sim-a', "http://127.0.0.1:$Ports[0]", "ws=ws://127.0.0.1:$WsDead"],
            ['sim-b', "http://127.0.0.1:$Ports[1]"],
            ['sim-c', "http://127.0.0.1:$Ports[2]"]])
      . network_conf('down', upstreams => [
            ['gone-1', "http://127.0.0.1:$Dead"],
            ['later', "http://127.0.0.1:$Later"]]);
}

our $Config = solgate_locations('mainnet')
  . "    location = /health { solgate_health mainnet; }\n"
  . "    location = /health/down { solgate_health down; }\n"
  . "    location /solgate/ { solgate_admin; }\n";

our $Bad = "[error]\n[alert]\n[crit]\n[emerg]\n";

sub clean { for my $p (@Ports) { sim_fault($p, 'clear'); sim_reset($p) } }
sub health { http_get(server_port(), $_[0] || '/health') }
sub state_of { upstream_state($_[0], 'mainnet') || {} }
sub polled { (state_of('sim-c')->{processed_slot} || 0) > 0 }

add_block_preprocessor(sub {
    my $block = shift;
    $block->set_value(http_config => http_config()) unless defined $block->http_config;
    $block->set_value(config => $Config) unless defined $block->config;
    $block->set_value(setup => 'clean();') unless defined $block->setup;
    $block->set_value(no_error_log => $Bad)
        unless defined $block->no_error_log || defined $block->must_die;
});

no_shuffle();
no_root_location();
run_tests();

__DATA__

=== TEST 1: health: 200 with the number of eligible upstreams, to GET and HEAD; other methods 405
--- wait_for eval
['the nodes are polled', \&polled, 5]
--- request eval
["GET /health", "HEAD /health", "POST /health\nx"]
--- error_code eval
[200, 200, 405]
--- response_body eval
['{"status":"ok","eligible":3}', '', undef]
--- response_headers eval
["Content-Type: application/json; charset=utf-8", "Content-Length: 28", undef]



=== TEST 2: health: cordons take upstreams out of the count; 503 with the reason once every one is cordoned, to HEAD too
--- wait_for eval
['the nodes are polled', \&polled, 5]
--- request eval
["POST /solgate/cordon?network=mainnet&upstream=sim-a&reason=one",
 "POST /solgate/cordon?network=mainnet&upstream=sim-b&reason=two",
 "GET /health",
 "POST /solgate/cordon?network=mainnet&upstream=sim-c&reason=three",
 "GET /health",
 "HEAD /health",
 "POST /solgate/uncordon?network=mainnet&upstream=sim-b",
 "GET /health"]
--- error_code eval
[200, 200, 200, 200, 503, 503, 200, 200]
--- response_body eval
[undef, undef, '{"status":"ok","eligible":1}', undef,
 '{"status":"unavailable","eligible":0,"reason":"every upstream is cordoned"}',
 '', undef, '{"status":"ok","eligible":1}']



=== TEST 3: health: a network whose nodes are down is unavailable, and available again once one comes up
The poller cordons a node whose getHealth gets no answer.
--- wait_for eval
['the dead nodes are cordoned', sub { health('/health/down')->{status} == 503 }, 5]
--- request eval
["GET /health/down",
 step {
     sim_start(port => $Later, args => ['--skip-rate', 0, '--quiet']);
     wait_for('the node that came up is eligible',
              sub { health('/health/down')->{body} eq '{"status":"ok","eligible":1}' }, 5);
     sim_stop($Later);
 }]
--- error_code: 503
--- response_body: {"status":"unavailable","eligible":0,"reason":"every upstream is cordoned"}
