package Solgate::WebSocket;

# A small blocking WebSocket client (RFC 6455) for the suites: connects to
# 127.0.0.1, does the handshake, sends masked text frames and reads
# messages with a deadline. Nothing here waits without a bound.
#
#   my $ws = Solgate::WebSocket->connect(port => 8900, path => '/');
#   die $Solgate::WebSocket::Error unless $ws;   # e.g. "HTTP 503: {...}"
#   $ws->send_text('{"jsonrpc":"2.0","id":1,"method":"slotSubscribe"}');
#   my $m = $ws->next_message(5);   # {opcode => 1, text => '...'} or undef
#   my $j = $ws->next_json(5);      # decoded text message, or undef
#   $ws->close(1000);
#
# A close frame from the server comes back as {opcode => 8, code => N,
# reason => '...'}; a connection closed without one as {opcode => -1}.

use strict;
use warnings;

use Digest::SHA ();
use IO::Select ();
use IO::Socket::INET ();
use JSON::PP ();
use MIME::Base64 ();
use Time::HiRes ();

our $Error = '';
our $RefusedHead = '';   # the status line and headers of the last refusal
my $Guid = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

# connect(port => N, path => '/', host => 'localhost', timeout => 5,
#         headers => { Name => value }, early => TEXT, tls => 1)
# early: a text frame sent in the same write as the handshake, before the
# answer (a pipelining client's); tls: wss:// (the server's certificate
# is not checked).
sub connect {
    my ($class, %o) = @_;
    my $timeout = $o{timeout} || 5;
    my $sock = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $o{port},
                                     Proto => 'tcp', Timeout => $timeout);
    unless ($sock) {
        $Error = "connect to 127.0.0.1:$o{port}: $!";
        return undef;
    }
    if ($o{tls}) {
        require IO::Socket::SSL;
        unless (IO::Socket::SSL->start_SSL($sock, SSL_verify_mode => 0,
                                           Timeout => $timeout)) {
            $Error = "TLS handshake with 127.0.0.1:$o{port}: $IO::Socket::SSL::SSL_ERROR";
            return undef;
        }
    }
    $sock->autoflush(1);
    binmode $sock;
    my $key = MIME::Base64::encode_base64(join('', map { chr int rand 256 } 1 .. 16), '');
    my $head = "GET " . ($o{path} || '/') . " HTTP/1.1\r\n"
             . "Host: " . ($o{host} || 'localhost') . "\r\n"
             . "Upgrade: websocket\r\nConnection: Upgrade\r\n"
             . "Sec-WebSocket-Key: $key\r\nSec-WebSocket-Version: 13\r\n";
    my $extra = $o{headers} || {};
    $head .= "$_: $extra->{$_}\r\n" for sort keys %$extra;
    print {$sock} "$head\r\n" . (defined $o{early} ? _frame(1, $o{early}) : '');

    my $self = bless { sock => $sock, in => '' }, $class;
    my $deadline = Time::HiRes::time() + $timeout;
    while (index($self->{in}, "\r\n\r\n") < 0) {
        unless ($self->_fill($deadline)) {
            $Error = "no handshake answer within ${timeout}s: $self->{in}";
            return undef;
        }
    }
    my $end = index($self->{in}, "\r\n\r\n");
    my $response = substr($self->{in}, 0, $end);
    substr($self->{in}, 0, $end + 4) = '';
    my ($status) = $response =~ m{^HTTP/1\.[01] (\d{3})};
    $status ||= 0;
    if ($status != 101) {
        my ($len) = $response =~ /^Content-Length:\s*(\d+)/mi;
        $self->_fill($deadline) while defined $len && length($self->{in}) < $len;
        $Error = "HTTP $status: $self->{in}";
        $RefusedHead = $response;
        $self->{status} = $status;
        $self->{body} = $self->{in};
        CORE::close($sock);
        return undef;
    }
    my $want = MIME::Base64::encode_base64(Digest::SHA::sha1($key . $Guid), '');
    my ($accept) = $response =~ /^Sec-WebSocket-Accept:\s*(\S+)/mi;
    unless (defined $accept && $accept eq $want) {
        $Error = "bad Sec-WebSocket-Accept in: $response";
        CORE::close($sock);
        return undef;
    }
    $self->{response} = $response;
    return $self;
}

# The last refused handshake's status and body (after connect returned undef).
sub refused_status { $Error =~ /^HTTP (\d+)/ ? $1 : undef }
sub refused_body   { $Error =~ /^HTTP \d+: (.*)\z/s ? $1 : undef }
sub refused_header { my ($name) = @_; $RefusedHead =~ /^\Q$name\E:\s*([^\r\n]*)/mi ? $1 : undef }

# Reads more bytes before the deadline; false on timeout or end of stream.
sub _fill {
    my ($self, $deadline) = @_;
    my $left = $deadline - Time::HiRes::time();
    return 0 if $left <= 0 || $self->{eof};
    my $sel = IO::Select->new($self->{sock});
    # TLS may hold decrypted bytes the socket no longer shows
    my $pending = $self->{sock}->can('pending') && $self->{sock}->pending;
    return 0 unless $pending || $sel->can_read($left);
    my $n = sysread($self->{sock}, my $buf, 65536);
    unless ($n) {
        $self->{eof} = 1;
        return 0;
    }
    $self->{in} .= $buf;
    return 1;
}

sub _frame {
    my ($opcode, $payload) = @_;
    my $len = length $payload;
    my $out = chr(0x80 | $opcode);
    if ($len < 126) {
        $out .= chr(0x80 | $len);
    } elsif ($len <= 0xffff) {
        $out .= chr(0x80 | 126) . pack('n', $len);
    } else {
        $out .= chr(0x80 | 127) . pack('Q>', $len);
    }
    my $mask = join '', map { chr int rand 256 } 1 .. 4;
    my $masked = $payload ^ substr($mask x (int($len / 4) + 1), 0, $len);
    return $out . $mask . $masked;
}

sub send_text {
    my ($self, $text) = @_;
    utf8::encode($text) if utf8::is_utf8($text);
    return syswrite($self->{sock}, _frame(1, $text));
}

sub send_json {
    my ($self, $data) = @_;
    return $self->send_text(JSON::PP->new->canonical->encode($data));
}

sub ping {
    my ($self, $payload) = @_;
    return syswrite($self->{sock}, _frame(9, defined $payload ? $payload : ''));
}

# The next message, waiting at most $timeout seconds; undef on timeout.
sub next_message {
    my ($self, $timeout) = @_;
    my $deadline = Time::HiRes::time() + (defined $timeout ? $timeout : 5);
    for (;;) {
        my $m = $self->_take;
        return $m if $m;
        next if $self->_fill($deadline);
        return { opcode => -1 } if $self->{eof};
        return undef;
    }
}

# The next text message decoded as JSON, skipping pongs; undef on timeout.
sub next_json {
    my ($self, $timeout) = @_;
    my $deadline = Time::HiRes::time() + (defined $timeout ? $timeout : 5);
    for (;;) {
        my $m = $self->next_message($deadline - Time::HiRes::time());
        return undef unless $m;
        return $m if $m->{opcode} == 8 || $m->{opcode} == -1;
        next unless $m->{opcode} == 1;
        my $j = eval { JSON::PP->new->decode($m->{text}) };
        return $j if ref $j;
    }
}

# Waits for a message whose decoded JSON passes $test; returns it or undef
# (a close ends the wait and is returned as is).
sub wait_json {
    my ($self, $timeout, $test) = @_;
    my $deadline = Time::HiRes::time() + $timeout;
    while ((my $left = $deadline - Time::HiRes::time()) > 0) {
        my $j = $self->next_json($left);
        return undef unless $j;
        return $j if exists $j->{opcode} || $test->($j);
    }
    return undef;
}

# One whole server frame from the buffer (server frames are unmasked).
sub _take {
    my ($self) = @_;
    my $in = \$self->{in};
    return undef if length($$in) < 2;
    my ($b0, $b1) = unpack('CC', $$in);
    my $len = $b1 & 0x7f;
    my $head = 2;
    if ($len == 126) {
        return undef if length($$in) < 4;
        $len = unpack('n', substr($$in, 2, 2));
        $head = 4;
    } elsif ($len == 127) {
        return undef if length($$in) < 10;
        $len = unpack('Q>', substr($$in, 2, 8));
        $head = 10;
    }
    return undef if length($$in) < $head + $len;
    my $payload = substr($$in, $head, $len);
    substr($$in, 0, $head + $len) = '';
    my $opcode = $b0 & 0x0f;
    if ($opcode == 8) {
        my ($code, $reason) = length($payload) >= 2
            ? (unpack('n', $payload), substr($payload, 2)) : (1005, '');
        return { opcode => 8, code => $code, reason => $reason };
    }
    if ($opcode == 0) {
        # fragments: joined into the message they continue
        $self->{fragments} .= $payload;
        return undef unless $b0 & 0x80;
        return { opcode => delete $self->{fragment_opcode},
                 text => delete $self->{fragments} };
    }
    unless ($b0 & 0x80) {
        $self->{fragment_opcode} = $opcode;
        $self->{fragments} = $payload;
        return $self->_take;
    }
    return { opcode => $opcode, text => $payload };
}

sub close {
    my ($self, $code) = @_;
    return unless $self->{sock};
    syswrite($self->{sock}, _frame(8, pack('n', $code || 1000)));
    CORE::close($self->{sock});
    delete $self->{sock};
}

sub DESTROY { CORE::close $_[0]{sock} if $_[0]{sock} }

1;
