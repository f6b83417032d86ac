package Solgate::TestConf;

# The nginx.conf pieces most Solgate tests share: a solgate_network over
# simulated nodes, and the client and retry locations with the shipped
# solgate_proxy.conf.  Paths come from $TEST_NGINX_CONF_DIR (set by make).

use strict;
use warnings;
use Exporter 'import';

our @EXPORT = qw(network_conf solgate_locations sim_upstreams run_solgate_blocks);

# network_conf('mainnet', cluster => 'mainnet-beta',
#              upstreams => [[id, url, extra], ...],
#              settings => 'max_slot_lag 0; ...')
sub network_conf {
    my ($name, %o) = @_;
    my $cluster = $o{cluster} || 'mainnet-beta';
    my $conf = "    solgate_network $name {\n        cluster $cluster;\n";
    $conf .= "        $o{settings}\n" if $o{settings};
    for my $u (@{ $o{upstreams} }) {
        my ($id, $url, $extra) = @$u;
        $conf .= "        upstream $id $url" . ($extra ? " $extra" : '') . ";\n";
    }
    return $conf . "    }\n";
}

# [[sim-a, http://127.0.0.1:PORT], ...] for a list of sim ports
sub sim_upstreams {
    my @ports = @_;
    my @ids = ('a' .. 'z');
    return [ map { ["sim-$ids[$_]", "http://127.0.0.1:$ports[$_]"] } 0 .. $#ports ];
}

# The client location (default "/") and @solgate_retry, both routed to
# $network; $extra goes into the client location; snippet =>
# 'solgate_dispatch.conf' includes that one instead of solgate_proxy.conf
# (its http_config then needs `upstream solgate { solgate_dispatch; }`).
sub solgate_locations {
    my ($network, %o) = @_;
    my $path = $o{path} || '/';
    my $extra = $o{extra} || '';
    my $snippet = $o{snippet} || 'solgate_proxy.conf';
    return <<"_EOC_";
    location $path {
        solgate_pass $network;
        include \$TEST_NGINX_CONF_DIR/$snippet;
        $extra
    }
    location \@solgate_retry {
        solgate_pass $network;
        include \$TEST_NGINX_CONF_DIR/$snippet;
    }
_EOC_
}

# run_solgate_blocks(http_config => TEXT, config => TEXT, setup => PERL,
#                    no_error_log => TEXT): runs the file's blocks in
# order, each taking these sections unless it has its own (a must_die
# block takes no no_error_log).
sub run_solgate_blocks {
    my %default = @_;
    Test::Nginx::Socket::add_block_preprocessor(sub {
        my $block = shift;
        for my $section (qw(http_config config setup)) {
            my $value = $default{$section};
            next if !defined $value || defined $block->$section;
            $block->set_value($section => $value);
        }
        $block->set_value(no_error_log => $default{no_error_log})
            if defined $default{no_error_log}
               && !defined $block->no_error_log && !defined $block->must_die;
    });
    Test::Nginx::Socket::no_shuffle();
    Test::Nginx::Socket::no_root_location();
    Test::Nginx::Socket::run_tests();
}

1;
