#include "base/tls_failure.h"

#include <curl/curl.h>

#include <string_view>

namespace solgate {
namespace {

bool Contains(std::string_view text, std::string_view part) {
    return text.find(part) != std::string_view::npos;
}

// nginx's pages for ssl_verify_client (ngx_http_special_response.c): the
// status line says 400, the title says why.
constexpr std::string_view kNoClientCertificate =
    "No required SSL certificate was sent";
constexpr std::string_view kClientCertificateRefused =
    "The SSL certificate error";

// An OpenSSL alert from the upstream about our certificate: TLS 1.3's
// "certificate required", or a chain it does not trust.
bool AlertsOurCertificate(std::string_view text) {
    return Contains(text, "alert certificate required") ||
           Contains(text, "alert unknown ca") ||
           Contains(text, "alert bad certificate") ||
           Contains(text, "alert certificate unknown");
}

TlsProblem CurlTlsProblem(int code, std::string_view text) {
    switch (code) {
    case CURLE_PEER_FAILED_VERIFICATION:  // 60 (51 before curl 7.62)
    case 51:
        return TlsProblem::kServerCertificate;
    case CURLE_SSL_CERTPROBLEM:  // 58: ours cannot be used
    case CURLE_SSL_CLIENTCERT:   // 98: the upstream wants one
        return TlsProblem::kClientCertificate;
    case CURLE_SSL_CONNECT_ERROR:  // 35
        return AlertsOurCertificate(text) ? TlsProblem::kClientCertificate
                                          : TlsProblem::kOther;
    case CURLE_SSL_ENGINE_NOTFOUND:     // 53
    case CURLE_SSL_ENGINE_SETFAILED:    // 54
    case CURLE_SSL_CIPHER:              // 59
    case CURLE_USE_SSL_FAILED:          // 64
    case CURLE_SSL_ENGINE_INITFAILED:   // 66
    case CURLE_SSL_CACERT_BADFILE:      // 77
    case CURLE_SSL_SHUTDOWN_FAILED:     // 80
    case CURLE_SSL_CRL_BADFILE:         // 82
    case CURLE_SSL_ISSUER_ERROR:        // 83
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:  // 90
    case CURLE_SSL_INVALIDCERTSTATUS:   // 91
        return TlsProblem::kOther;
    case CURLE_SEND_ERROR:  // 55, 56: only when OpenSSL says why; a
    case CURLE_RECV_ERROR:  // reset connection is no TLS problem
        if (AlertsOurCertificate(text)) {
            return TlsProblem::kClientCertificate;
        }
        return Contains(text, "SSL routines") ? TlsProblem::kOther
                                              : TlsProblem::kNone;
    default:
        return TlsProblem::kNone;
    }
}

}  // namespace

TlsProblem TlsProblemOf(const HttpResult& result) {
    if (result.transport_error != 0) {
        return CurlTlsProblem(result.transport_error, result.error_text);
    }
    if (result.http_status == 400 &&
        (Contains(result.body, kNoClientCertificate) ||
         Contains(result.body, kClientCertificateRefused))) {
        return TlsProblem::kClientCertificate;
    }
    return TlsProblem::kNone;
}

std::string TlsFailureText(const HttpResult& result) {
    if (TlsProblemOf(result) == TlsProblem::kNone) {
        return "";
    }
    if (result.transport_error != 0) {
        return "TLS: " + result.error_text;
    }
    std::string_view page = Contains(result.body, kNoClientCertificate)
                                ? kNoClientCertificate
                                : kClientCertificateRefused;
    return "TLS: HTTP 400 \"" + std::string(page) + "\"";
}

}  // namespace solgate
