#include "websocket.h"

#include <array>

namespace solsim {

namespace {

// SHA-1 (FIPS 180-4), only for the handshake's accept key: the simulator
// links no crypto library.
std::array<uint8_t, 20> sha1(std::string_view text) {
    uint32_t h[5] = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
    std::string msg(text);
    const uint64_t bits = static_cast<uint64_t>(msg.size()) * 8;
    msg += static_cast<char>(0x80);
    while (msg.size() % 64 != 56) msg += '\0';
    for (int i = 7; i >= 0; --i) msg += static_cast<char>((bits >> (i * 8)) & 0xff);

    auto rotl = [](uint32_t x, int n) { return (x << n) | (x >> (32 - n)); };
    for (size_t block = 0; block < msg.size(); block += 64) {
        uint32_t w[80];
        for (int i = 0; i < 16; ++i) {
            const auto* p = reinterpret_cast<const uint8_t*>(msg.data() + block + i * 4);
            w[i] = (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
        }
        for (int i = 16; i < 80; ++i) w[i] = rotl(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
        uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
        for (int i = 0; i < 80; ++i) {
            uint32_t f, k;
            if (i < 20) {
                f = (b & c) | (~b & d);
                k = 0x5A827999;
            } else if (i < 40) {
                f = b ^ c ^ d;
                k = 0x6ED9EBA1;
            } else if (i < 60) {
                f = (b & c) | (b & d) | (c & d);
                k = 0x8F1BBCDC;
            } else {
                f = b ^ c ^ d;
                k = 0xCA62C1D6;
            }
            const uint32_t t = rotl(a, 5) + f + e + k + w[i];
            e = d;
            d = c;
            c = rotl(b, 30);
            b = a;
            a = t;
        }
        h[0] += a;
        h[1] += b;
        h[2] += c;
        h[3] += d;
        h[4] += e;
    }
    std::array<uint8_t, 20> out{};
    for (int i = 0; i < 20; ++i) out[i] = static_cast<uint8_t>(h[i / 4] >> (24 - (i % 4) * 8));
    return out;
}

std::string base64(const uint8_t* data, size_t len) {
    static const char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    for (size_t i = 0; i < len; i += 3) {
        uint32_t n = uint32_t{data[i]} << 16;
        if (i + 1 < len) n |= uint32_t{data[i + 1]} << 8;
        if (i + 2 < len) n |= data[i + 2];
        out += kAlphabet[(n >> 18) & 63];
        out += kAlphabet[(n >> 12) & 63];
        out += i + 1 < len ? kAlphabet[(n >> 6) & 63] : '=';
        out += i + 2 < len ? kAlphabet[n & 63] : '=';
    }
    return out;
}

}  // namespace

std::string ws_accept_key(std::string_view client_key) {
    std::string text(client_key);
    text += "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
    const auto digest = sha1(text);
    return base64(digest.data(), digest.size());
}

std::string ws_frame(uint8_t opcode, std::string_view payload) {
    std::string out;
    out += static_cast<char>(0x80 | (opcode & 0x0f));
    const uint64_t len = payload.size();
    if (len < 126) {
        out += static_cast<char>(len);
    } else if (len <= 0xffff) {
        out += static_cast<char>(126);
        out += static_cast<char>((len >> 8) & 0xff);
        out += static_cast<char>(len & 0xff);
    } else {
        out += static_cast<char>(127);
        for (int i = 7; i >= 0; --i) out += static_cast<char>((len >> (i * 8)) & 0xff);
    }
    out.append(payload.data(), payload.size());
    return out;
}

std::string ws_close_frame(uint16_t code, std::string_view reason) {
    std::string payload;
    payload += static_cast<char>(code >> 8);
    payload += static_cast<char>(code & 0xff);
    payload.append(reason.substr(0, 123));
    return ws_frame(kWsClose, payload);
}

bool WsReader::Fail(uint16_t code, const char* why) {
    error_ = why;
    error_code_ = code;
    return false;
}

bool WsReader::Next(WsMessage& out) {
    while (error_ == nullptr) {
        if (in_.size() < 2) return false;
        const auto* p = reinterpret_cast<const uint8_t*>(in_.data());
        const bool fin = (p[0] & 0x80) != 0;
        const uint8_t opcode = p[0] & 0x0f;
        if ((p[0] & 0x70) != 0) return Fail(1002, "reserved bits set");
        if ((p[1] & 0x80) == 0) return Fail(1002, "client frame not masked");
        uint64_t len = p[1] & 0x7f;
        size_t head = 2;
        if (len == 126) {
            if (in_.size() < 4) return false;
            len = (uint64_t{p[2]} << 8) | p[3];
            head = 4;
        } else if (len == 127) {
            if (in_.size() < 10) return false;
            len = 0;
            for (int i = 0; i < 8; ++i) len = (len << 8) | p[2 + i];
            head = 10;
        }
        const bool control = (opcode & 0x08) != 0;
        if (control && (len > 125 || !fin)) return Fail(1002, "bad control frame");
        if (len > kMaxMessage || fragments_.size() + len > kMaxMessage) return Fail(1009, "message too big");
        if (in_.size() < head + 4 + len) return false;
        const uint8_t* mask = p + head;
        std::string payload(in_, head + 4, static_cast<size_t>(len));
        for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<char>(payload[i] ^ mask[i % 4]);
        in_.erase(0, head + 4 + static_cast<size_t>(len));

        if (control) {
            if (opcode != kWsClose && opcode != kWsPing && opcode != kWsPong) return Fail(1002, "unknown opcode");
            out.opcode = opcode;
            out.payload = std::move(payload);
            return true;
        }
        if (opcode == kWsContinuation) {
            if (fragment_opcode_ == 0) return Fail(1002, "continuation without a message");
            fragments_ += payload;
        } else if (opcode == kWsText || opcode == kWsBinary) {
            if (fragment_opcode_ != 0) return Fail(1002, "new message inside a fragmented one");
            fragment_opcode_ = opcode;
            fragments_ = std::move(payload);
        } else {
            return Fail(1002, "unknown opcode");
        }
        if (fin) {
            out.opcode = fragment_opcode_;
            out.payload = std::move(fragments_);
            fragments_.clear();
            fragment_opcode_ = 0;
            return true;
        }
    }
    return false;
}

}  // namespace solsim
