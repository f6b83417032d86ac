#include "codec.h"

namespace solsim {

namespace {

const char kBase58Alphabet[] = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
const char kBase64Alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// 58^5 fits in 30 bits, so a limb times 2^32 plus carry fits in 64 bits.
// Working on 32-bit input groups and base-58^5 output limbs makes the
// quadratic base conversion ~20x cheaper than the byte-by-byte textbook
// version, which matters when a multi-megabyte block is rendered in base58.
constexpr uint64_t kLimbBase = 656356768ULL;  // 58^5
constexpr int kDigitsPerLimb = 5;

}  // namespace

void base58_append(std::string& out, const uint8_t* data, size_t len) {
    size_t zeros = 0;
    while (zeros < len && data[zeros] == 0) ++zeros;

    std::vector<uint32_t> limbs;  // little-endian base 58^5
    limbs.reserve((len - zeros) * 138 / 100 / kDigitsPerLimb + 2);

    size_t pos = zeros;
    size_t group_len = (len - zeros) % 4;
    if (group_len == 0) group_len = 4;
    while (pos < len) {
        uint64_t group = 0;
        for (size_t k = 0; k < group_len; ++k) group = (group << 8) | data[pos++];
        const uint64_t multiplier = 1ULL << (8 * group_len);
        uint64_t carry = group;
        for (uint32_t& limb : limbs) {
            uint64_t v = static_cast<uint64_t>(limb) * multiplier + carry;
            limb = static_cast<uint32_t>(v % kLimbBase);
            carry = v / kLimbBase;
        }
        while (carry != 0) {
            limbs.push_back(static_cast<uint32_t>(carry % kLimbBase));
            carry /= kLimbBase;
        }
        group_len = 4;
    }

    out.append(zeros, '1');
    if (limbs.empty()) return;

    // Most significant limb without leading zero digits, the rest zero-padded.
    char digits[kDigitsPerLimb];
    uint32_t top = limbs.back();
    int n = 0;
    while (top != 0) {
        digits[n++] = kBase58Alphabet[top % 58];
        top /= 58;
    }
    while (n > 0) out.push_back(digits[--n]);
    for (size_t i = limbs.size() - 1; i-- > 0;) {
        uint32_t v = limbs[i];
        for (int k = kDigitsPerLimb - 1; k >= 0; --k) {
            digits[k] = kBase58Alphabet[v % 58];
            v /= 58;
        }
        out.append(digits, kDigitsPerLimb);
    }
}

std::string base58_encode(const uint8_t* data, size_t len) {
    std::string out;
    out.reserve(len * 138 / 100 + 1);
    base58_append(out, data, len);
    return out;
}

bool base58_decode(std::string_view text, std::vector<uint8_t>& out) {
    // Only used at start-up for a handful of program ids, so the simple
    // quadratic algorithm is fine here.
    size_t zeros = 0;
    while (zeros < text.size() && text[zeros] == '1') ++zeros;
    std::vector<uint8_t> bytes;  // little-endian base 256
    for (size_t i = zeros; i < text.size(); ++i) {
        int digit = -1;
        for (int k = 0; k < 58; ++k) {
            if (kBase58Alphabet[k] == text[i]) {
                digit = k;
                break;
            }
        }
        if (digit < 0) return false;
        uint32_t carry = static_cast<uint32_t>(digit);
        for (uint8_t& b : bytes) {
            carry += static_cast<uint32_t>(b) * 58;
            b = static_cast<uint8_t>(carry & 0xff);
            carry >>= 8;
        }
        while (carry != 0) {
            bytes.push_back(static_cast<uint8_t>(carry & 0xff));
            carry >>= 8;
        }
    }
    out.assign(zeros, 0);
    out.insert(out.end(), bytes.rbegin(), bytes.rend());
    return true;
}

bool base58_decodes_to(std::string_view text, size_t bytes) {
    if (text.empty() || text.size() > 100) return false;
    std::vector<uint8_t> raw;
    return base58_decode(text, raw) && raw.size() == bytes;
}

void base64_append(std::string& out, const uint8_t* data, size_t len) {
    out.reserve(out.size() + (len + 2) / 3 * 4);
    size_t i = 0;
    for (; i + 3 <= len; i += 3) {
        uint32_t v = (uint32_t(data[i]) << 16) | (uint32_t(data[i + 1]) << 8) | data[i + 2];
        out.push_back(kBase64Alphabet[(v >> 18) & 63]);
        out.push_back(kBase64Alphabet[(v >> 12) & 63]);
        out.push_back(kBase64Alphabet[(v >> 6) & 63]);
        out.push_back(kBase64Alphabet[v & 63]);
    }
    if (i < len) {
        uint32_t v = uint32_t(data[i]) << 16;
        if (i + 1 < len) v |= uint32_t(data[i + 1]) << 8;
        out.push_back(kBase64Alphabet[(v >> 18) & 63]);
        out.push_back(kBase64Alphabet[(v >> 12) & 63]);
        out.push_back(i + 1 < len ? kBase64Alphabet[(v >> 6) & 63] : '=');
        out.push_back('=');
    }
}

bool base64_decode(std::string_view text, std::vector<uint8_t>& out) {
    out.clear();
    if (text.size() % 4 != 0) return false;
    auto value = [](char c) -> int {
        if (c >= 'A' && c <= 'Z') return c - 'A';
        if (c >= 'a' && c <= 'z') return c - 'a' + 26;
        if (c >= '0' && c <= '9') return c - '0' + 52;
        if (c == '+') return 62;
        if (c == '/') return 63;
        return -1;
    };
    for (size_t i = 0; i < text.size(); i += 4) {
        uint32_t v = 0;
        int pad = 0;
        for (size_t k = 0; k < 4; k++) {
            char c = text[i + k];
            if (c == '=' && i + 4 == text.size() && k >= 2) {
                pad++;
                v <<= 6;
                continue;
            }
            int d = value(c);
            if (d < 0 || pad > 0) return false;
            v = (v << 6) | static_cast<uint32_t>(d);
        }
        out.push_back(static_cast<uint8_t>(v >> 16));
        if (pad < 2) out.push_back(static_cast<uint8_t>(v >> 8));
        if (pad < 1) out.push_back(static_cast<uint8_t>(v));
    }
    return true;
}

}  // namespace solsim
