#include "base/digest.h"

#include <openssl/sha.h>

#include <algorithm>

namespace solgate {

std::string Sha256Hex(std::string_view text, size_t bytes) {
    unsigned char digest[SHA256_DIGEST_LENGTH];
    SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(),
           digest);
    static const char kHex[] = "0123456789abcdef";
    std::string hex;
    bytes = std::min<size_t>(bytes, SHA256_DIGEST_LENGTH);
    for (size_t i = 0; i < bytes; i++) {
        hex.push_back(kHex[digest[i] >> 4]);
        hex.push_back(kHex[digest[i] & 0x0f]);
    }
    return hex;
}

}  // namespace solgate
