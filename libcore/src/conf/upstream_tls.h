// The tls_* options of `upstream ID https://... [tls_verify=on|off]
// [tls_trusted_certificate=FILE] [tls_name=NAME] [tls_certificate=FILE
// tls_certificate_key=FILE]`: how the state poller checks the upstream's
// certificate and which certificate it presents. The poller does not go
// through nginx's proxy module, and that module keeps its proxy_ssl_*
// settings to itself, so an upstream says here what they say to nginx.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/transport.h"

namespace solgate::conf {

struct UpstreamTls {
    bool verify = true;                // tls_verify=
    std::string name;                  // tls_name=: checked, and sent as SNI
    std::string trusted_certificate;   // the files as written
    std::string certificate;
    std::string certificate_key;
    std::string first_option;          // the first tls_* given, for messages
};

// Whether option is one of the tls_* options (or meant to be).
bool IsTlsOption(std::string_view option);

// One tls_* option into *out; nullopt, or the message. `in` ends it:
// ` in upstream "ID"`.
std::optional<std::string> ParseTlsOption(std::string_view option,
                                          std::string_view in,
                                          UpstreamTls* out);

// The options together, once the line is read: TLS needs an https:// URL,
// and a client certificate its key (and the key a certificate).
std::optional<std::string> CheckTls(const UpstreamTls& tls, bool https,
                                    std::string_view in);

// Reads the files (a relative name is taken from conf_prefix, nginx's
// configuration directory, as for proxy_ssl_trusted_certificate) into
// *out, as nginx reads its own certificates when it reads the
// configuration: the workers need no access to them later. Refuses a file
// that cannot be read, is larger than kMaxTlsFileBytes, holds no PEM
// certificate (or key), or an encrypted key.
constexpr size_t kMaxTlsFileBytes = 1 << 20;

std::optional<std::string> LoadTls(const UpstreamTls& tls,
                                   std::string_view conf_prefix,
                                   std::string_view in, TlsSettings* out);

}  // namespace solgate::conf
