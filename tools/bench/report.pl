#!/usr/bin/perl
# Turns the raw numbers of tools/bench/run.sh into the table on stdout, the
# PASS/FAIL lines of the design targets, and build/bench/results.json.
use strict;
use warnings;
use Getopt::Long;
use JSON::PP;

my %opt = (work => 'build/bench');
GetOptions(\%opt, 'work=s', 'rounds=i', 'seconds=f', 'slice=f', 'warmup=f', 'connections=i',
           'elapsed=i', 'block-bytes=i', 'upstream-cpu=s', 'pinned=i') or die "bad options\n";
my $work = $opt{work};

my @scenario_order = qw(getslot balance genesis guard block batch);
my %label = (
    getslot => '1 getSlot forward',
    balance => '2 getBalance envelope',
    genesis => '3a getGenesisHash local',
    guard   => '3b getBlock guard local',
    block   => '4 getBlock 5 MB',
    batch   => '5 batch 10x getSlot',
);
my @variant_order = qw(baseline lua solgate solgate_fleet);

sub median {
    my @v = sort { $a <=> $b } grep { defined } @_;
    return undef unless @v;
    my $n = @v;
    return $n % 2 ? $v[$n / 2] : ($v[$n / 2 - 1] + $v[$n / 2]) / 2;
}
sub num { my $x = shift; defined $x ? 0 + sprintf('%.6g', $x) : undef }

sub read_tsv {
    my ($file) = @_;
    open my $fh, '<', $file or return ();
    chomp(my $head = <$fh> // '');
    my @cols = split /\t/, $head;
    my @rows;
    while (my $line = <$fh>) {
        chomp $line;
        next unless length $line;
        my %r;
        @r{@cols} = split /\t/, $line;
        push @rows, \%r;
    }
    return @rows;
}

# ---- runs --------------------------------------------------------------

my %runs;   # scenario -> variant -> [rounds]
for my $r (read_tsv("$work/raw.tsv")) {
    my $secs = $r->{duration_us} / 1e6;
    push @{ $runs{$r->{scenario}}{$r->{variant}} }, {
        round        => 0 + $r->{round},
        requests     => 0 + $r->{requests},
        seconds      => num($secs),
        rps          => num($r->{requests} / $secs),
        mb_per_s     => num($r->{bytes} / $secs / 1e6),
        bytes        => 0 + $r->{bytes},
        p50_us       => 0 + $r->{p50_us},
        p99_us       => 0 + $r->{p99_us},
        max_us       => 0 + $r->{max_us},
        gateway_cpu  => num($r->{gw_cpu}),
        upstream_cpu => num($r->{up_cpu}),
        wrk_cpu      => num($r->{wrk_cpu}),
        cpu0_busy    => num($r->{cpu0_busy}),
        cpu1_busy    => num($r->{cpu1_busy}),
        cpu_outside  => num($r->{kernel_out}),
        forks        => 0 + $r->{forks},
        foreign_cpu  => num($r->{foreign}),
        # the headline: the gateway worker's own CPU time (utime + stime,
        # on whichever CPU it ran) per request
        worker_us_per_request => num($r->{gw_cpu} * 1e6 / ($r->{requests} / $secs)),
        # pinned, the second view: all of CPU 0, which only the gateway
        # uses (its worker and the kernel's network work for it)
        ($opt{pinned} ? (cpu0_us_per_request => num($r->{cpu0_busy} * 1e6 / ($r->{requests} / $secs))) : ()),
        disturbed    => ($r->{disturbed} // 0) == 1 ? 'other processes'
                      : ($r->{disturbed} // 0) == 2 ? 'kernel network work outside the worker' : JSON::PP::false,
        retries      => 0 + ($r->{retries} // 0),
        rss_before_kb => 0 + $r->{rss_before_kb},
        rss_after_kb  => 0 + $r->{rss_after_kb},
        hwm_kb        => 0 + $r->{hwm_kb},
    };
}
my %mem;
for my $r (read_tsv("$work/mem.tsv")) {
    $mem{$r->{scenario}}{$r->{variant}} = {
        rss_start_kb => 0 + $r->{rss_start_kb},
        rss_end_kb   => 0 + $r->{rss_end_kb},
        rss_peak_kb  => 0 + $r->{hwm_end_kb},
    };
}

my %result;
my @scenarios = grep { $runs{$_} } @scenario_order;
for my $s (@scenarios) {
    for my $v (@variant_order) {
        my $all = $runs{$s}{$v} or next;
        # flagged rounds (disturbed, or the kernel's softirq path) count only
        # when a variant has no clean round
        my @clean = grep { !$_->{disturbed} } @$all;
        my $rounds = @clean ? \@clean : $all;
        my %m;
        for my $k (qw(rps p99_us p50_us mb_per_s gateway_cpu cpu_outside worker_us_per_request cpu0_us_per_request upstream_cpu wrk_cpu cpu0_busy cpu1_busy foreign_cpu)) {
            $m{$k} = num(median(map { $_->{$k} } @$rounds));
        }
        my @rps = map { $_->{rps} } @$rounds;
        my ($lo, $hi) = (sort { $a <=> $b } @rps)[0, -1];
        $m{rps_spread} = num($m{rps} ? ($hi - $lo) / $m{rps} : 0);
        $m{flagged_rounds} = scalar grep { $_->{disturbed} } @$all;
        $m{rounds_used} = scalar @$rounds;
        $result{$s}{$v} = { rounds => $all, median => \%m, memory => $mem{$s}{$v} };
    }
    # Ratios to baseline are paired: each round's value over baseline's in
    # the same round (measured seconds apart), then the median over the
    # rounds.  That cancels drift of the machine's speed between rounds,
    # which a ratio of the two medians would not.
    my $base = $result{$s}{baseline} or next;
    for my $v (@variant_order) {
        my $res = $result{$s}{$v} or next;
        my $m = $res->{median};
        my %ratios = paired_ratios($res, $base, rps_ratio => 'rps', p99_ratio => 'p99_us',
                                   cpu_per_request_ratio => 'worker_us_per_request',
                                   cpu0_per_request_ratio => 'cpu0_us_per_request');
        my $lua = $result{$s}{lua};
        %ratios = (%ratios, paired_ratios($res, $lua, rps_ratio_to_lua => 'rps',
                                          cpu_per_request_ratio_to_lua => 'worker_us_per_request'))
            if $lua && $v ne 'lua';
        for my $k (keys %ratios) {
            $m->{$k} = num(median(@{ $ratios{$k} }));
            $m->{"${k}_per_round"} = [map { num($_) } @{ $ratios{$k} }];
        }
        $m->{rps_ratio_of_medians} = num($base->{median}{rps} ? $m->{rps} / $base->{median}{rps} : undef);
    }
}

# paired_ratios(RESULT, OTHER, NAME => KEY, ...): for each NAME, the list of
# RESULT's KEY over OTHER's in the same round, over the rounds where both
# are clean (else all rounds both have)
sub paired_ratios {
    my ($res, $other, %keys) = @_;
    my %other_round = map { $_->{round} => $_ } @{ $other->{rounds} };
    my @pairs = grep { $other_round{$_->{round}} } @{ $res->{rounds} };
    my @clean = grep { !$_->{disturbed} && !$other_round{$_->{round}}{disturbed} } @pairs;
    @pairs = @clean if @clean;
    my %ratios;
    for my $r (@pairs) {
        my $o = $other_round{$r->{round}};
        for my $name (keys %keys) {
            my $k = $keys{$name};
            push @{ $ratios{$name} }, $r->{$k} / $o->{$k} if $o->{$k} && defined $r->{$k};
        }
    }
    return %ratios;
}

# ---- the table ---------------------------------------------------------

printf "\nSolgate benchmark: %d rounds x %gs per variant in %gs slices taken in turn (+%gs warm-up), wrk -t1 -c%d on CPU 1; gateway worker_processes 1 %s; upstream nginx + solana-sim on CPU %s\n\n",
    $opt{rounds}, $opt{seconds}, $opt{slice} // $opt{seconds}, $opt{warmup}, $opt{connections},
    $opt{pinned} ? 'pinned to CPU 0 (BENCH_PIN=1)' : 'not pinned', $opt{'upstream-cpu'};
my $fmt = "%-25s %-13s %9s %8s %8s %8s %6s %6s %7s %8s %8s %8s %6s  %s\n";
printf $fmt, 'scenario', 'variant', 'req/s', 'p99 ms', 'req/s x', 'p99 x', 'spread', 'gw', 'gw us', 'us/req x', 'us/req x', 'cpu0 us', 'up', 'notes';
printf $fmt, '', '', '(median)', '(median)', 'baseline', 'baseline', '', 'cpu', '/req', 'baseline', 'lua', 'x base', 'cpu', '';
print '-' x 150, "\n";
my $ratio = sub { defined $_[0] ? sprintf('%.3f', $_[0]) : '-' };
for my $s (@scenarios) {
    for my $v (@variant_order) {
        my $m = $result{$s}{$v} && $result{$s}{$v}{median} or next;
        my $notes = '';
        $notes = "$m->{flagged_rounds} round(s) flagged" . ($m->{rounds_used} < @{ $result{$s}{$v}{rounds} } ? ', left out' : ', all flagged: kept') . '; '
            if $m->{flagged_rounds};
        if ($s eq 'block') {
            my $mm = $result{$s}{$v}{memory} // {};
            $notes .= sprintf '%.0f MB/s; RSS start %.1f MiB, peak %.1f MiB', $m->{mb_per_s},
                ($mm->{rss_start_kb} // 0) / 1024, ($mm->{rss_peak_kb} // 0) / 1024;
        }
        printf $fmt, $label{$s}, $v, sprintf('%.0f', $m->{rps}), sprintf('%.3f', $m->{p99_us} / 1000),
            $ratio->($m->{rps_ratio}), $ratio->($m->{p99_ratio}),
            sprintf('%.1f%%', 100 * $m->{rps_spread}),
            sprintf('%.0f%%', 100 * $m->{gateway_cpu}), sprintf('%.1f', $m->{worker_us_per_request}),
            $ratio->($m->{cpu_per_request_ratio}), $ratio->($m->{cpu_per_request_ratio_to_lua}),
            $ratio->($m->{cpu0_per_request_ratio}),
            sprintf('%.0f%%', 100 * $m->{upstream_cpu}), $notes;
    }
}
print "\nreq/s, p99, gw us/req: medians over the rounds; a round measures the variants in turn, a slice\n",
      "each, so drift within it falls on all of them alike (its p99: the median of its slices').\n",
      "\"x baseline\", \"x lua\" columns: median over the rounds of the variant's value / that variant's value\n",
      "in the same round (paired, so drift between rounds cancels).  spread = (max - min) / median of\n",
      "req/s over the rounds.  gw cpu / up cpu = share of one core the gateway worker / the upstream\n",
      "worker used.  gw us/req = the gateway worker's own CPU time (utime + stime, any CPU) per\n",
      "request: the headline.  cpu0 us x base (BENCH_PIN=1 only) = busy time of CPU 0 per request (the\n",
      "worker and the kernel's work for it) over baseline's.\n";
my @noisy = map { my $s = $_; map { "$s/$_" } grep { $result{$s}{$_} && $result{$s}{$_}{median}{rps_spread} > 0.10 } @variant_order } @scenarios;
print "\nNOISY: req/s spread above 10% for ", join(', ', @noisy),
      ": the machine's speed changed during the scenario (see build/bench/raw.tsv); re-run, or raise BENCH_ROUNDS.\n"
    if @noisy;

# ---- poll cost ---------------------------------------------------------

my @poll;
if (open my $fh, '<', "$work/poll_cost.txt") {
    my @lines = <$fh>;
    if (@lines) {
        print "\n6 poll cost (tools/bench/poll_cost.sh: requests/s one simulated node receives from the poller)\n";
        print "  $_" for @lines;
    }
    for (@lines) {
        next unless /^(\d+)\s+(\S+)\s+([\d.]+)\s+([\d.]+)(?:\s+([\d.]+))?/;
        push @poll, { workers => 0 + $1, traffic => $2, polls_per_s => 0 + $3, getslot_polls_per_s => 0 + $4,
                      (defined $5 ? (gethealth_polls_per_s => 0 + $5) : ()) };
    }
}

# ---- shared memory ------------------------------------------------------

my %shm;
if (open my $fh, '<', "$work/shm.txt") {
    while (<$fh>) {
        chomp;
        my ($k, $v) = split / /, $_, 2;
        $shm{$k} = $v if defined $v;
    }
}
if (%shm) {
    print "\n7 shared memory zone (solgate_network zone)\n";
    if ($shm{network_shared_bytes}) {
        printf "  upstream table (NetworkShared): %d bytes = %.1f KiB for %d upstream slots and %d lanes\n",
            $shm{network_shared_bytes}, $shm{network_shared_bytes} / 1024, $shm{max_upstreams}, $shm{max_lanes};
        printf "  per upstream slot: %d bytes (UpstreamRecord); table / %d slots = %.0f bytes per upstream\n",
            $shm{upstream_slot_bytes}, $shm{max_upstreams}, $shm{network_shared_bytes} / $shm{max_upstreams};
        printf "  per lane: %d bytes; fixed part (counters, %d lanes + 'all'): %d bytes\n",
            $shm{lane_bytes}, $shm{max_lanes},
            $shm{network_shared_bytes} - $shm{max_upstreams} * $shm{upstream_slot_bytes};
    }
    printf "  minimum zone from nginx -t: %sk (%s)\n", $shm{zone_minimum_kb} // '?', $shm{zone_message} // '';
    print  "  the table is fixed-size: the zone needs the same minimum for 1 or 256 upstreams\n";
}

# ---- fleet mode ------------------------------------------------------------

# Fleet mode's cost on the forwarding path: paired per round with plain
# Solgate, and the Redis commands the fleet gateway sent meanwhile.
my %fleet;
for my $s (@scenarios) {
    my ($f, $g) = ($result{$s}{solgate_fleet}, $result{$s}{solgate});
    next unless $f && $g;
    my %ratios = paired_ratios($f, $g, cpu_ratio => 'worker_us_per_request', rps_ratio => 'rps');
    $fleet{$s}{$_} = num(median(@{ $ratios{$_} || [] })) for qw(cpu_ratio rps_ratio);
}
for my $r (read_tsv("$work/redis_ops.tsv")) {
    next unless $r->{seconds} > 0;
    $fleet{$r->{scenario}}{commands_per_s} = num($r->{commands} / $r->{seconds});
    $fleet{$r->{scenario}}{redis_operations_per_s} = num($r->{operations} / $r->{seconds});
}
my @fleet_scenarios = grep { $fleet{$_} && defined $fleet{$_}{cpu_ratio} } @scenarios;
if (@fleet_scenarios) {
    print "\n8 fleet mode (solgate_fleet: Solgate with solgate_shared_state over a redis-server of its own, 1 network, 1 upstream)\n";
    for my $s (@fleet_scenarios) {
        printf "  %-25s gw us/req %.3fx Solgate, req/s %.3fx Solgate; sent %.1f Redis commands/s (%.1f operations/s in redis-server, scripts' calls counted)\n",
            $label{$s}, $fleet{$s}{cpu_ratio} // 0, $fleet{$s}{rps_ratio} // 0,
            $fleet{$s}{commands_per_s} // 0, $fleet{$s}{redis_operations_per_s} // 0;
    }
}

# ---- targets ------------------------------------------------------------

my @targets;
our $target_shaky = 0;
sub target {
    my ($name, $value, $op, $limit, $fmtv, $pass) = @_;
    $pass //= defined $value
        && ($op eq '>=' ? $value >= $limit : $op eq '<=' ? $value <= $limit : $value > $limit);
    $fmtv .= ' [from flagged runs: unreliable]' if $target_shaky;
    push @targets, { name => $name, value => num($value), op => $op, limit => num($limit),
                     unreliable => $target_shaky ? JSON::PP::true : JSON::PP::false,
                     pass => $pass ? JSON::PP::true : JSON::PP::false,
                     text => defined $value ? sprintf($fmtv, $value) : 'n/a' };
}
sub med { my ($s, $v, $k) = @_; $result{$s} && $result{$s}{$v} ? $result{$s}{$v}{median}{$k} : undef }
# a ratio that had to use flagged rounds (a variant with no clean round)
sub shaky { my ($s, @v) = @_; scalar grep { my $m = $result{$s}{$_} && $result{$s}{$_}{median};
                                              $m && $m->{flagged_rounds} && $m->{rounds_used} == $m->{flagged_rounds} } @v }

# issue 17's targets: the worker's whole CPU per request is the headline
my %cpu_limit = (getslot => 1.10, balance => 1.10, batch => 1.25);
for my $s (grep { $result{$_} } qw(getslot balance batch)) {
    local $target_shaky = shaky($s, qw(baseline lua solgate));
    target("$label{$s}: Solgate gw us/req <= ${\ sprintf '%.2f', $cpu_limit{$s}}x baseline",
           med($s, 'solgate', 'cpu_per_request_ratio'), '<=', $cpu_limit{$s}, '%.3fx');
    target("$label{$s}: Solgate gw us/req <= 0.80x the lua router",
           med($s, 'solgate', 'cpu_per_request_ratio_to_lua'), '<=', 0.80, '%.3fx lua')
        unless $s eq 'batch';
    target("$label{$s}: Solgate req/s >= 0.95x baseline", med($s, 'solgate', 'rps_ratio'), '>=', 0.95, '%.3fx');
    target("$label{$s}: Solgate p99 <= 1.10x baseline", med($s, 'solgate', 'p99_ratio'), '<=', 1.10, '%.3fx');
}
for my $s (grep { $result{$_} } qw(genesis guard)) {
    local $target_shaky = shaky($s, qw(baseline solgate));
    target("$label{$s}: Solgate req/s >= 2x baseline", med($s, 'solgate', 'rps_ratio'), '>=', 2.0, '%.3fx');
}
my $flat_limit_kb = 16 * 1024;
if ($result{block}) {
    local $target_shaky = shaky('block', qw(baseline solgate));
    target("$label{block}: Solgate req/s >= 0.95x baseline", med('block', 'solgate', 'rps_ratio'), '>=', 0.95, '%.3fx');
    my $mm = $mem{block}{solgate};
    target("$label{block}: Solgate worker memory flat (peak - start RSS <= 16 MiB)",
           $mm ? ($mm->{rss_peak_kb} - $mm->{rss_start_kb}) / 1024 : undef, '<=', 16, '+%.1f MiB');
}
if (@poll) {
    for my $traffic (qw(idle envelope)) {
        my ($one) = grep { $_->{workers} == 1 && $_->{traffic} eq $traffic } @poll;
        my ($four) = grep { $_->{workers} == 4 && $_->{traffic} eq $traffic } @poll;
        next unless $one && $four && $one->{polls_per_s} > 0;
        # independent: 4 workers poll within 15% (or 1 request/s) of 1 worker
        my $ratio = $four->{polls_per_s} / $one->{polls_per_s};
        my $pass = ($ratio >= 0.85 && $ratio <= 1.15)
                || abs($four->{polls_per_s} - $one->{polls_per_s}) <= 1.0;
        target("6 poll cost ($traffic): polls/s with 4 workers = 1 worker (+-15%)", $ratio, 'within', 0.15,
               sprintf('%.2f vs %.2f polls/s, ', $four->{polls_per_s}, $one->{polls_per_s}) . '%.3fx', $pass ? 1 : 0);
    }
    # getHealth goes out once per 400 ms tick, and 4 workers poll a node as
    # often as 1 does (the bounds t/050-slot-tracking.t used to assert)
    my ($one) = grep { $_->{workers} == 1 && $_->{traffic} eq 'idle' } @poll;
    my ($four) = grep { $_->{workers} == 4 && $_->{traffic} eq 'idle' } @poll;
    if ($one && $four && defined $one->{gethealth_polls_per_s} && defined $four->{gethealth_polls_per_s}) {
        my ($g1, $g4) = ($one->{gethealth_polls_per_s}, $four->{gethealth_polls_per_s});
        target('6 poll cost (idle): getHealth once per 400 ms tick (1.5-2.75/s)', $g1, 'within', 0,
               '%.2f getHealth/s', ($g1 > 1.5 && $g1 <= 2.75) ? 1 : 0);
        target('6 poll cost (idle): getHealth, 4 workers <= 1.25x 1 worker + 0.3/s', $g4, '<=', $g1 * 1.25 + 0.3,
               sprintf('%%.2f vs %.2f getHealth/s', $g1));
    }
}

for my $s (@fleet_scenarios) {
    local $target_shaky = shaky($s, qw(solgate solgate_fleet));
    target("$label{$s}: fleet mode costs nothing per request (gw us/req <= 1.05x Solgate)",
           $fleet{$s}{cpu_ratio}, '<=', 1.05, '%.3fx');
}

print "\nTargets:\n";
for my $t (@targets) {
    printf "  %-6s %-70s %s\n", $t->{pass} ? 'met' : 'MISSED', $t->{name}, $t->{text};
}
my @missed = grep { !$_->{pass} } @targets;
print @missed ? sprintf("\n%d of %d targets missed\n", scalar @missed, scalar @targets)
              : sprintf("\nall %d targets met\n", scalar @targets);
# for tools/bench/targets.pl, which prints every script's targets at the end
mkdir "$work/targets";
if (open my $tf, '>', "$work/targets/run.tsv") {
    print $tf join("\t", $_->{pass} ? 'met' : 'missed', $_->{name}, $_->{text}), "\n" for @targets;
}

# ---- harness notes: is the gateway the bottleneck? ----------------------

my @notes;
for my $s (@scenarios) {
    for my $v (@variant_order) {
        my $rounds = $result{$s}{$v} && $result{$s}{$v}{rounds} or next;
        for my $r (grep { !$_->{disturbed} } @$rounds) {
            push @notes, sprintf('%s/%s round %d: the gateway worker only %.0f%% busy (CPU 0 %.0f%%, CPU 1 %.0f%%)',
                                 $s, $v, $r->{round}, 100 * $r->{gateway_cpu}, 100 * $r->{cpu0_busy}, 100 * $r->{cpu1_busy})
                if ($opt{pinned} ? $r->{cpu0_busy} : $r->{gateway_cpu}) < 0.90;
        }
    }
}
my @disturbed;
for my $s (@scenarios) {
    for my $v (@variant_order) {
        my $rounds = $result{$s}{$v} && $result{$s}{$v}{rounds} or next;
        push @disturbed, map { sprintf '%s/%s round %d: %s (other processes %.0f%% of a CPU, %d forks; busy outside our processes %.0f%%)',
                               $s, $v, $_->{round}, $_->{disturbed}, 100 * $_->{foreign_cpu}, $_->{forks}, 100 * $_->{cpu_outside} }
                         grep { $_->{disturbed} } @$rounds;
    }
}
if (@disturbed) {
    print "\nWARNING: these runs were flagged after retries (left out of the medians and ratios when the\n",
          "variant has clean rounds): other processes took CPU, or the kernel did the gateway's network work\n",
          "in interrupt context instead of in the worker, a different data path whose numbers are not comparable:\n";
    print "  $_\n" for @disturbed;
}
if (@notes) {
    print "\nNote: in these runs the gateway was not saturated, so something else (CPU 1: wrk + upstream) limited them:\n";
    print "  $_\n" for @notes;
}

my @log_warnings;
if (open my $fh, '<', "$work/log_warnings.txt") {
    chomp(@log_warnings = <$fh>);
    print "\nWARNING: gateways logged warnings during the runs:\n", map { "  $_\n" } @log_warnings;
}

printf "\nrun time: %d s; raw numbers and medians: %s/results.json\n", $opt{elapsed} // 0, $work;

my %json = (
    config => {
        rounds => $opt{rounds}, seconds => $opt{seconds}, slice_seconds => $opt{slice} // $opt{seconds},
        warmup_seconds => $opt{warmup},
        connections => $opt{connections}, wrk_threads => 1, wrk_cpu => 1, gateway_cpu => $opt{pinned} ? 0 : 'any',
        upstream_cpu => $opt{'upstream-cpu'}, block_bytes => $opt{'block-bytes'},
        elapsed_seconds => $opt{elapsed},
    },
    scenarios => { map { $_ => { label => $label{$_}, variants => $result{$_} } } @scenarios },
    fleet => \%fleet,
    poll_cost => \@poll,
    shm => { map { $_ => ($shm{$_} =~ /^\d+$/ ? 0 + $shm{$_} : $shm{$_}) } keys %shm },
    targets => \@targets,
    harness_notes => [@notes, @disturbed, @log_warnings],
);
open my $out, '>', "$work/results.json" or die "cannot write $work/results.json: $!\n";
print $out JSON::PP->new->canonical->pretty->encode(\%json);
close $out;
exit 0;
