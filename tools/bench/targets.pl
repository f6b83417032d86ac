#!/usr/bin/perl
# The last lines of `make bench`: every target the bench scripts checked
# (build/bench/targets/*.tsv: run.sh's report, profile.sh, cached_block.sh),
# each with its measured value and "met" or "MISSED".
use strict;
use warnings;

my $dir = shift // 'build/bench/targets';
my @order = qw(run profile-balance cached_block ws_subscribers);
my %rank = map { $order[$_] => $_ } 0 .. $#order;
my @files = sort { ($rank{$a =~ s{.*/|\.tsv$}{}gr} // 99) <=> ($rank{$b =~ s{.*/|\.tsv$}{}gr} // 99) }
            glob "$dir/*.tsv";
die "no targets in $dir: run make bench\n" unless @files;

my ($met, $all) = (0, 0);
print "\nAll targets of this run:\n";
for my $file (@files) {
    open my $fh, '<', $file or die "$file: $!\n";
    while (<$fh>) {
        chomp;
        my ($verdict, $name, $value) = split /\t/;
        next unless defined $value;
        $all++;
        $met++ if $verdict eq 'met';
        printf "  %-6s %-84s %s\n", $verdict eq 'met' ? 'met' : 'MISSED', $name, $value;
    }
}
printf "\n%d of %d targets met\n", $met, $all;
