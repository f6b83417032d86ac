#!/usr/bin/env bash
# Instructions per request, baseline vs Solgate (and the lua router), with
# valgrind's callgrind on a single nginx process (master_process off), in
# front of the same fixed-answer upstream as tools/bench/run.sh.  `make
# bench` runs it for getBalance; it is also the tool for explaining a
# missed target.
#
#   tools/bench/profile.sh [SCENARIO] [SECONDS]     (default: getslot 10)
#
# Prints, per variant, the instructions (Ir) and heap allocations (calls to
# malloc, calloc, realloc and the memalign family) per request of the
# worker's event-loop thread, the one requests run on, and the process's
# instructions with the poller thread; the functions that cost most per
# request; for Solgate also the part spent in the module and libcore.
# For getBalance (balance) it checks issue 17's targets: Solgate's
# instructions per request at most baseline's + 3,000, and no allocation
# per request beyond baseline's (build/bench/targets/profile-balance.tsv;
# PROFILE_TARGETS=0 leaves them out).  PROFILE_VARIANTS picks variants (default "baseline
# lua solgate"; also solgate_off, solgate_hedge, solgate_consensus,
# solgate_broadcast: see solgate_bench_policy in lib.sh).  Output files: build/bench/profile/<scenario>-<variant>.*
# Needs valgrind (Debian package valgrind).  Ports 19640-19642 and the
# upstream ports of run.sh; loopback only; stops what it starts.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE=$ROOT/tools/bench
SCENARIO=${1:-getslot}
SECS=${2:-10}
VARIANTS=${PROFILE_VARIANTS:-baseline lua solgate}

source "$HERE/lib.sh"
bench_defaults
WORK=$ROOT/build/bench/profile
declare -A GW_PORT=([baseline]=19640 [lua]=19641 [solgate]=19642 [solgate_off]=19644
                   [solgate_hedge]=19645 [solgate_consensus]=19646 [solgate_broadcast]=19647
                   [solgate_fleet]=19648)
REDIS_PORT=19651

command -v valgrind > /dev/null || bench_die "valgrind is not installed (apt-get install valgrind)"
case " $ALL_SCENARIOS " in *" $SCENARIO "*) ;; *) bench_die "unknown scenario $SCENARIO" ;; esac

on_exit() { local rc=$?; trap - EXIT INT TERM; bench_cleanup; exit "$rc"; }
trap on_exit EXIT
trap 'exit 130' INT TERM

rm -rf "$WORK"/gw-* "$WORK/up" "$WORK/$SCENARIO"-*; mkdir -p "$WORK/req"
for s in $ALL_SCENARIOS; do printf '%s' "${REQ[$s]}" > "$WORK/req/$s.json"; done
bench_start_upstream "$WORK/up"
case " $VARIANTS " in *" solgate_fleet "*) bench_start_redis "$WORK/redis" "$REDIS_PORT" ;; esac

for v in $VARIANTS; do
    prefix=$WORK/gw-$v
    write_gateway_conf "$v" "$prefix" "${GW_PORT[$v]}" "${UP_PORT[$SCENARIO]}"
    # one process, the poller thread included: master_process off
    sed -i 's/^master_process on;/master_process off;/; /^worker_cpu_affinity/d' "$prefix/conf/nginx.conf"
    out=$WORK/$SCENARIO-$v
    # a profile per thread: the event loop's apart from the poller's
    taskset -c 0 valgrind --tool=callgrind --instr-atstart=no --separate-threads=yes \
        --callgrind-out-file="$out.callgrind" \
        "$NGINX_BIN" -p "$prefix/" -e "$prefix/logs/error.log" -c conf/nginx.conf > "$out.valgrind.log" 2>&1 &
    pid=$!
    BENCH_PIDS+=("$pid")
    for _ in $(seq 300); do
        curl -s -m 2 -o /dev/null "http://127.0.0.1:${GW_PORT[$v]}/" && break
        # a configuration nginx refuses: say why now, not after a minute
        kill -0 "$pid" 2> /dev/null \
            || bench_die "$v: nginx exited at start: $(grep -m1 emerg "$prefix/logs/error.log" || tail -n 3 "$out.valgrind.log")"
        sleep 0.2
    done
    if [[ $v == solgate* ]]; then
        for _ in $(seq 150); do
            curl -s -m 2 "http://127.0.0.1:${GW_PORT[$v]}/_bench/metrics" \
                | grep -Eq '^solgate_network_indexed_tip_slot\{[^}]*\} [1-9]' && break
            sleep 0.2
        done
    fi
    callgrind_control -i on "$pid" > /dev/null 2>&1
    # warm-up, then count only the measured window
    BENCH_BODY=$WORK/req/$SCENARIO.json BENCH_EXPECT=${EXPECT[$SCENARIO]} \
        timeout 60 taskset -c 1 wrk -t1 -c4 -d2s -s "$HERE/wrk_post.lua" "http://127.0.0.1:${GW_PORT[$v]}/" > /dev/null
    callgrind_control -z "$pid" > /dev/null 2>&1
    BENCH_BODY=$WORK/req/$SCENARIO.json BENCH_EXPECT=${EXPECT[$SCENARIO]} \
        timeout $((SECS + 60)) taskset -c 1 wrk -t1 -c4 -d"${SECS}s" -s "$HERE/wrk_post.lua" \
        "http://127.0.0.1:${GW_PORT[$v]}/" > "$out.wrk"
    callgrind_control -d "$pid" > /dev/null 2>&1
    stop_pid "$pid"; forget_pid "$pid"
    requests=$(sed -n 's/^BENCH requests=\([0-9]*\).*/\1/p' "$out.wrk")
    [ -n "$requests" ] && [ "$requests" -gt 0 ] || bench_die "$v: no requests measured"
    grep -q 'err_status=0 err_timeout=0 bad_body=0' "$out.wrk" || { cat "$out.wrk"; bench_die "$v: errors"; }
    # the dump of the measured window (the plain one is shutdown), thread 1
    # being the event loop
    dump=$out.callgrind.1-01
    [ -f "$dump" ] || bench_die "$v: no callgrind dump $dump"
    cat "$out".callgrind.1-* | sed -n 's/^summary: *//p' | awk '{ n += $1 } END { print n }' > "$out.process_ir"
    callgrind_annotate --auto=no --threshold=100 "$dump" > "$out.self.txt" 2>/dev/null
    callgrind_annotate --auto=no --inclusive=yes --threshold=100 "$dump" > "$out.inclusive.txt" 2>/dev/null
    echo "$requests" > "$out.requests"
done

# ---- summary --------------------------------------------------------------
perl -e '
    my ($dir, $scenario, @variants) = @ARGV;
    sub load {   # callgrind_annotate output -> (total, {function => Ir})
        my ($file) = @_;
        open my $fh, "<", $file or die "$file: $!";
        my ($total, %f);
        while (<$fh>) {
            if (/^\s*([\d,]+)\s+\(100\.0%\)\s+PROGRAM TOTALS/) { ($total = $1) =~ s/,//g; next }
            next unless /^\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(\S.*)$/;
            my ($ir, $name) = ($1, $2);
            $ir =~ s/,//g;
            $f{$name} += $ir;
        }
        return ($total, \%f);
    }
    # calls to the heap allocator in a callgrind dump: the calls= lines
    # under a cfn= naming one of them (names are given once, then by id)
    # (and, by caller, in %$by_caller)
    sub allocs {
        my ($file, $by_caller) = @_;
        open my $fh, "<", $file or die "$file: $!";
        my (%name, $caller, $callee, $n);
        # operator new counts where it is called from (it calls malloc);
        # the helpers inside glibc (_mid_memalign) are not callers
        my $alloc = qr/^(?:malloc|calloc|realloc|posix_memalign|memalign|aligned_alloc|valloc|operator new(?:\[\])?\(.*\))$/;
        my $inner = qr/^_\w*(?:malloc|memalign|calloc|realloc)/;
        while (<$fh>) {
            if (/^(c?)fn=\((\d+)\)(?: (.*))?$/) {
                my ($is_call, $id) = ($1, $2);
                $name{$id} = $3 if defined $3;
                if ($is_call) { $callee = $name{$id} } else { $caller = $name{$id}; $callee = undef }
            } elsif (/^calls=(\d+)/) {
                my $calls = $1;
                if (defined $callee && $callee =~ $alloc && $caller !~ $alloc && $caller !~ $inner) {
                    $n += $calls;
                    $by_caller->{$caller} += $calls if $by_caller;
                }
                $callee = undef;
            }
        }
        return $n // 0;
    }
    sub short { my $n = shift; $n =~ s{/work/main/}{}g; $n =~ s{ \[.*\]$}{}; $n =~ s/std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >/std::string/g; substr($n, 0, 120) }
    my (%per, %self, %incl, %alloc, %alloc_by, %process);
    for my $v (@variants) {
        open my $rq, "<", "$dir/$scenario-$v.requests" or next;
        chomp(my $n = <$rq>);
        my ($t, $s) = load("$dir/$scenario-$v.self.txt");
        my (undef, $i) = load("$dir/$scenario-$v.inclusive.txt");
        $per{$v} = $t / $n;
        my %callers;
        $alloc{$v} = allocs("$dir/$scenario-$v.callgrind.1-01", \%callers) / $n;
        $alloc_by{$v} = { map {; $_ => $callers{$_} / $n } keys %callers };
        if (open my $pf, "<", "$dir/$scenario-$v.process_ir") { chomp(my $p = <$pf>); $process{$v} = $p / $n }
        $self{$v} = { map {; $_ => $s->{$_} / $n } keys %$s };
        $incl{$v} = { map {; $_ => $i->{$_} / $n } keys %$i };
    }
    print "\nscenario $scenario: per request, user-space instructions (callgrind Ir; the kernel is not counted)\n",
          "of the event-loop thread and of the whole process (the poller thread too), and heap allocations\n",
          "(malloc, calloc, realloc, memalign, operator new) of the event-loop thread\n";
    printf "  %-9s %8.0f Ir%s  process %8.0f Ir  %6.2f allocations%s\n", $_, $per{$_},
        ($per{baseline} && $_ ne "baseline") ? sprintf(" (%+6.0f vs baseline, %.2fx)", $per{$_} - $per{baseline}, $per{$_} / $per{baseline}) : " " x 29,
        $process{$_} // 0, $alloc{$_},
        ($per{baseline} && $_ ne "baseline") ? sprintf(" (%+.2f vs baseline)", $alloc{$_} - $alloc{baseline}) : ""
        for grep { $per{$_} } @variants;
    # issue 17: getBalance forwarding costs at most 3,000 instructions and
    # no heap allocation per request over bare proxy_pass
    if ($scenario eq "balance" && $per{baseline} && $per{solgate} && ($ENV{PROFILE_TARGETS} // "1") ne "0") {
        my @t = (["getBalance: Solgate instructions per request <= baseline + 3000",
                  $per{solgate} - $per{baseline} <= 3000,
                  sprintf("%+.0f (%.0f vs %.0f)", $per{solgate} - $per{baseline}, $per{solgate}, $per{baseline})],
                 ["getBalance: no heap allocation per request beyond baseline (<= +0.05)",
                  $alloc{solgate} - $alloc{baseline} <= 0.05,
                  sprintf("%+.2f (%.2f vs %.2f)", $alloc{solgate} - $alloc{baseline}, $alloc{solgate}, $alloc{baseline})]);
        print "\nTargets:\n";
        printf "  %-6s %-70s %s\n", $_->[1] ? "met" : "MISSED", $_->[0], $_->[2] for @t;
        my $tdir = "$dir/../targets";
        mkdir $tdir;
        open my $tf, ">", "$tdir/profile-$scenario.tsv" or die "$tdir: $!";
        print $tf join("\t", $_->[1] ? "met" : "missed", $_->[0], $_->[2]), "\n" for @t;
    }
    if ($incl{solgate}) {
        print "\nSolgate functions, inclusive instructions per request (the access and body handlers also\ninclude the nginx proxy work they start, so they overlap the rest):\n";
        my %i;   # one line per function (callgrind_annotate may list one twice)
        for (grep { m{ngx_module/src|libcore/src|:sg_} } keys %{ $incl{solgate} }) {
            my $k = short($_);
            $i{$k} = $incl{solgate}{$_} if ($i{$k} // 0) < $incl{solgate}{$_};
        }
        my @f = sort { $i{$b} <=> $i{$a} } keys %i;
        printf "  %8.0f  %s\n", $i{$_}, $_ for @f[0 .. ($#f < 19 ? $#f : 19)];
    }
    for my $v (grep { $alloc_by{$_} && $_ ne "baseline" } @variants) {
        my $by = $alloc_by{$v};
        my @f = grep { $by->{$_} >= 0.01 } sort { $by->{$b} <=> $by->{$a} } keys %$by;
        next unless @f;
        print "\n$v: heap allocations per request by the function that made them:\n";
        printf "  %6.2f  %s\n", $by->{$_}, short($_) for @f[0 .. ($#f < 14 ? $#f : 14)];
    }
    if ($self{solgate} && $self{baseline}) {
        print "\nlargest self-cost differences, Solgate minus baseline, instructions per request:\n";
        my ($sg, $bl) = ($self{solgate}, $self{baseline});
        my %k = (%$sg, %$bl);
        my %d = map {; $_ => ($sg->{$_} // 0) - ($bl->{$_} // 0) } keys %k;
        my @f = sort { $d{$b} <=> $d{$a} } keys %d;
        printf "  %+8.0f  (%6.0f -> %6.0f)  %s\n", $d{$_}, $bl->{$_} // 0, $sg->{$_} // 0, short($_)
            for @f[0 .. 19];
    }
' "$WORK" "$SCENARIO" $VARIANTS | tee "$WORK/$SCENARIO-summary.txt"
