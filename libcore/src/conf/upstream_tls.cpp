#include "conf/upstream_tls.h"

#include <cstring>
#include <tuple>

#include "base/regular_file.h"
#include "conf/conf_messages.h"
#include "conf/conf_words.h"

namespace solgate::conf {
namespace {

constexpr std::string_view kOptions =
    "\"tls_verify=\", \"tls_trusted_certificate=\", \"tls_name=\", "
    "\"tls_certificate=\" or \"tls_certificate_key=\"";

// A name a certificate can carry: a DNS name or an IPv4 address.
bool IsTlsName(std::string_view name) {
    if (name.empty() || name.size() > 253) {
        return false;
    }
    for (char c : name) {
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                  (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_';
        if (!ok) {
            return false;
        }
    }
    return true;
}

std::string_view Key(std::string_view option) {
    return option.substr(0, option.find('=') + 1);
}

std::string Joined(std::string_view prefix, std::string_view file) {
    if (file.front() == '/' || prefix.empty()) {
        return std::string(file);
    }
    std::string path(prefix);
    if (path.back() != '/') {
        path += '/';
    }
    return path + std::string(file);
}

// The file's text, or why it cannot be had (after `"key=" file "PATH"`).
std::optional<std::string> ReadSmallFile(const std::string& path,
                                         std::string* out) {
    // TLS files are often links (into /etc/letsencrypt/live, say)
    RegularFileRead read = ReadRegularFile(path, kMaxTlsFileBytes, true, out);
    switch (read.outcome) {
    case RegularFileRead::kRead:
        return std::nullopt;
    case RegularFileRead::kNotRegular:
        return std::string("is not a file");
    case RegularFileRead::kTooLarge:
        return "is larger than " + std::to_string(kMaxTlsFileBytes >> 20) +
               "m";
    default:
        return "cannot be read (" + std::to_string(read.error) + ": " +
               strerror(read.error) + ")";
    }
}

bool Has(const std::string& text, std::string_view part) {
    return text.find(part) != std::string::npos;
}

// What is wrong with a PEM file's text for its option, or nullopt.
std::optional<std::string> PemProblem(std::string_view key,
                                      const std::string& text) {
    if (key != "tls_certificate_key=") {
        if (!Has(text, "-----BEGIN CERTIFICATE-----")) {
            return std::string("holds no PEM certificate");
        }
        return std::nullopt;
    }
    if (Has(text, "ENCRYPTED")) {
        return std::string("holds an encrypted key, which the state poller "
                           "cannot use");
    }
    if (!Has(text, "-----BEGIN ") || !Has(text, "PRIVATE KEY-----")) {
        return std::string("holds no PEM private key");
    }
    return std::nullopt;
}

std::optional<std::string> LoadFile(std::string_view key,
                                    const std::string& file,
                                    std::string_view conf_prefix,
                                    std::string_view in, std::string* out) {
    if (file.empty()) {
        return std::nullopt;
    }
    std::string path = Joined(conf_prefix, file);
    std::optional<std::string> problem = ReadSmallFile(path, out);
    if (!problem) {
        problem = PemProblem(key, *out);
    }
    if (!problem) {
        return std::nullopt;
    }
    out->clear();
    return Quoted(key) + " file " + Quoted(path) + std::string(in) + " " +
           *problem;
}

}  // namespace

bool IsTlsOption(std::string_view option) {
    return option.substr(0, 4) == "tls_";
}

std::optional<std::string> ParseTlsOption(std::string_view option,
                                          std::string_view in,
                                          UpstreamTls* out) {
    if (out->first_option.empty()) {
        out->first_option = std::string(Key(option));
    }
    if (auto verify = OptionValue(option, "tls_verify=")) {
        if (*verify != "on" && *verify != "off") {
            return "invalid \"tls_verify=\" " + Quoted(*verify) +
                   std::string(in) + ": must be \"on\" or \"off\"";
        }
        out->verify = *verify == "on";
        return std::nullopt;
    }
    if (auto name = OptionValue(option, "tls_name=")) {
        if (!IsTlsName(*name)) {
            return "invalid \"tls_name=\" " + Quoted(*name) +
                   std::string(in) +
                   ": must be a host name (letters, digits, '-', '_', '.') "
                   "or an IPv4 address";
        }
        out->name = std::string(*name);
        return std::nullopt;
    }
    for (auto [key, file] :
         {std::pair{"tls_trusted_certificate=", &out->trusted_certificate},
          std::pair{"tls_certificate=", &out->certificate},
          std::pair{"tls_certificate_key=", &out->certificate_key}}) {
        if (auto value = OptionValue(option, key)) {
            if (value->empty()) {
                return "empty " + Quoted(key) + std::string(in);
            }
            *file = std::string(*value);
            return std::nullopt;
        }
    }
    return "invalid parameter " + Quoted(option) + std::string(in) +
           ", expected " + std::string(kOptions);
}

std::optional<std::string> CheckTls(const UpstreamTls& tls, bool https,
                                    std::string_view in) {
    if (tls.first_option.empty()) {
        return std::nullopt;
    }
    if (!https) {
        return Quoted(tls.first_option) + std::string(in) +
               " needs an \"https://\" URL";
    }
    if (!tls.certificate.empty() && tls.certificate_key.empty()) {
        return "\"tls_certificate=\"" + std::string(in) +
               " needs \"tls_certificate_key=\"";
    }
    if (tls.certificate.empty() && !tls.certificate_key.empty()) {
        return "\"tls_certificate_key=\"" + std::string(in) +
               " needs \"tls_certificate=\"";
    }
    return std::nullopt;
}

std::optional<std::string> LoadTls(const UpstreamTls& tls,
                                   std::string_view conf_prefix,
                                   std::string_view in, TlsSettings* out) {
    *out = TlsSettings{};
    out->verify = tls.verify;
    for (auto [key, file, pem] :
         {std::tuple{"tls_trusted_certificate=", &tls.trusted_certificate,
                     &out->trusted_pem},
          std::tuple{"tls_certificate=", &tls.certificate,
                     &out->certificate_pem},
          std::tuple{"tls_certificate_key=", &tls.certificate_key,
                     &out->certificate_key_pem}}) {
        if (auto bad = LoadFile(key, *file, conf_prefix, in, pem)) {
            return bad;
        }
    }
    return std::nullopt;
}

}  // namespace solgate::conf
