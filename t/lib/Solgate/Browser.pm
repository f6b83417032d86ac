package Solgate::Browser;

# Headless Chromium (Debian's chromium, which `make deps` installs) for the
# tests that need a real browser: a page's script run, its DOM read back.
#
#   use Solgate::Browser;
#   skip '...', N unless chromium_binary();
#   my $dom = chromium($url, $dir, '--dump-dom', '--virtual-time-budget=5000');
#
# Each run is bounded by timeout(1) (60 s) and gets a fresh profile under
# $dir, removed afterwards; Chromium's stderr goes to $dir/chromium.log.

use strict;
use warnings;

use Exporter 'import';
use File::Path ();
use File::Spec;

our @EXPORT = qw(chromium_binary chromium);

# Debian's chromium, or undef (a test then skips its browser checks).
sub chromium_binary {
    return (grep { -x $_ } '/usr/bin/chromium', '/usr/bin/chromium-browser')[0];
}

# chromium($url, $dir, @args): what Chromium printed on stdout for $url.
sub chromium {
    my ($url, $dir, @args) = @_;
    my $binary = chromium_binary() // die "chromium is not installed\n";
    File::Path::make_path($dir);
    my $profile = File::Spec->catdir($dir, "chromium-profile-" . int(rand(1e9)));
    my $log = File::Spec->catfile($dir, 'chromium.log');
    my @cmd = ('timeout', '60', $binary, '--headless', '--no-sandbox',
               '--disable-gpu', '--disable-quic', '--no-first-run',
               '--disable-background-networking', '--disable-component-update',
               '--disable-sync', '--disable-dev-shm-usage',
               "--user-data-dir=$profile", @args, $url);
    my $pid = open(my $out, '-|') // die "fork: $!";
    if ($pid == 0) {
        open STDERR, '>>', $log or die "cannot write $log: $!";
        exec @cmd or die "exec $binary: $!";
    }
    local $/;
    my $text = <$out>;
    close $out;
    Test::More::diag("chromium exited with " . ($? >> 8) . "; see $log") if $?;
    File::Path::remove_tree($profile);
    return $text // '';
}

1;
