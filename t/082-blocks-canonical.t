# Cube Runner sends the ledger the call as it parsed it, written anew:
# never the client's bytes, which another parser could read otherwise
# (spaces, escapes, key order and an id of its own come back as the
# client sent them). A recording proxy between the gateway and the
# simulated node logs every body the node receives.

use Test::Nginx::Socket 'no_plan';
use Solgate::Sim;
use Solgate::TestConf;
use Solgate::Gateway;
use File::Path ();
use File::Spec;

our $Sim = 19821;
our $Recorder = 19822;
sim_start(port => $Sim, args => ['--quiet']);

our $Dir = File::Spec->catdir(Test::Nginx::Util::t_dir(), 'canonical-tmp');
File::Path::remove_tree($Dir);
File::Path::make_path($Dir);
END { File::Path::remove_tree($Dir) if $Dir }
our $Log = "$Dir/bodies.log";

our $Http = <<"_EOC_";
    log_format bodies escape=none '\$request_body';
    server {
        listen 127.0.0.1:$Recorder;
        location / {
            access_log $Log bodies;
            proxy_pass http://127.0.0.1:$Sim;
        }
    }
    map \$http_x_api_key \$solgate_plan { default ""; key-free free; }
_EOC_
$Http .= network_conf('mainnet', upstreams => [['node', "http://127.0.0.1:$Recorder"]]);
$Http .= <<"_EOC_";
    solgate_blocks mainnet {
        region us-east;
        cache $Dir/cache;
        state $Dir/state;
        api_key \$http_x_api_key;
        plan \$solgate_plan;
    }
_EOC_

# the getBlock bodies the node received, in order
sub received {
    open my $fh, '<', $Log or return ();
    return grep { /getBlock/ } map { chomp; $_ } <$fh>;
}
sub finalized { (network_state('mainnet')->{tips} || {})->{finalized} }
# a slot at or below $s the node did not skip
sub produced_slot {
    my ($s) = @_;
    $s-- while http_post($Sim, '/', get_block_call(0, $s, '{"transactionDetails":"none"}'))->{body} =~ /-32007/;
    return $s;
}

add_block_preprocessor(sub {
    my $block = shift;
    $block->set_value(http_config => $Http);
    $block->set_value(config => solgate_locations('mainnet') . "    location /solgate/ { solgate_admin; }\n");
    $block->set_value(no_error_log => "[error]\n[crit]\n[alert]\n[emerg]\n");
});

no_shuffle();
no_root_location();
run_tests();

__DATA__

=== TEST 1: a getBlock goes to the ledger as Solgate wrote it, and comes back with the client's id
--- wait_for eval
['the finalized tip is known', sub { main::finalized() }, 8]
--- request eval
[step {
     my $s = main::produced_slot(main::finalized() - 20);
     my $before = () = main::received();
     my $body = qq({ "params" : [ $s , {"commitment":"confirmed", "rewards":false, "encoding":"js\\u006fn", "transactionDetails":"none"} ], "method":"getBlock", "id":"x y", "jsonrpc":"2.0" });
     my $res = http_post(server_port(), '/', $body, { 'X-Api-Key' => 'key-free' });
     is($res->{status}, 200, 'answered');
     like($res->{body}, qr/"result":\{.*"id":"x y"\}$/s, 'the block, with the client\'s id');
     my @got = main::received();
     is(scalar(@got) - $before, 1, 'one call reached the node');
     is($got[-1],
        qq({"jsonrpc":"2.0","id":"x y","method":"getBlock","params":[$s,{"encoding":"json","transactionDetails":"none","rewards":false,"commitment":"confirmed"}]}),
        'the node received the canonical call');
 }]



=== TEST 2: a getBlock with an option Solgate does not know goes as it came, and is not cached
--- wait_for eval
['the finalized tip is known', sub { main::finalized() }, 8]
--- request eval
[step {
     my $s = main::produced_slot(main::finalized() - 40);
     my $body = qq({"jsonrpc":"2.0","id":2,"method":"getBlock","params":[$s,{"transactionDetails":"none","fancy":true}]});
     for my $i (1, 2) {
         my $res = http_post(server_port(), '/', $body, { 'X-Api-Key' => 'key-free' });
         is($res->{status}, 200, "answered ($i)");
     }
     my @got = grep { /"fancy"/ } main::received();
     is(scalar @got, 2, 'both went to the node (nothing cached)');
     is($got[-1], $body, 'as the client sent it');
 }]
