// Whether a failed call failed in TLS, and on which side, so the poller
// can say "TLS: ..." where it would otherwise say "transport error 60"
// (an operator then looks at certificates, not at the network).
#pragma once

#include "base/transport.h"

namespace solgate {

enum class TlsProblem {
    kNone,               // not a TLS failure (or no failure at all)
    kServerCertificate,  // the upstream's certificate failed our checks
    kClientCertificate,  // ours is missing, refused, or cannot be used
    kOther,              // the handshake, a cipher, the CA data, ...
};

// A libcurl error of TLS's (the handshake, a certificate check, the client
// certificate, the CA data; a read or write that OpenSSL failed with an
// alert), or nginx's answer to a client certificate that is missing or
// refused (HTTP 400 "No required SSL certificate was sent", "The SSL
// certificate error"): vendors are often nginx.
TlsProblem TlsProblemOf(const HttpResult& result);

// What went wrong, for a log line or a cordon reason, starting "TLS: "
// (curl's own text, or what nginx's 400 page says); "" when
// TlsProblemOf(result) is kNone.
std::string TlsFailureText(const HttpResult& result);

}  // namespace solgate
