// WebSocket (RFC 6455) pieces the simulator's pubsub port needs: the
// handshake's accept key, a reader for client frames and a writer for
// server frames. Only what a server must do: client frames must be
// masked, server frames never are, no extensions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace solsim {

// Sec-WebSocket-Accept for a client's Sec-WebSocket-Key.
std::string ws_accept_key(std::string_view client_key);

enum WsOpcode : uint8_t {
    kWsContinuation = 0x0,
    kWsText = 0x1,
    kWsBinary = 0x2,
    kWsClose = 0x8,
    kWsPing = 0x9,
    kWsPong = 0xA,
};

// A server frame (FIN set, unmasked).
std::string ws_frame(uint8_t opcode, std::string_view payload);
// A close frame with a status code and reason.
std::string ws_close_frame(uint16_t code, std::string_view reason);

struct WsMessage {
    uint8_t opcode = kWsText;  // kWsText, kWsBinary, kWsClose, kWsPing, kWsPong
    std::string payload;       // a whole message: fragments are joined
};

// Reads client frames from a byte stream. Feed() appends; Next() takes one
// complete message. A protocol error (an unmasked frame, a bad opcode, a
// message over kMaxMessage) is sticky: error() names it and the caller
// closes with 1002 or 1009.
class WsReader {
  public:
    static constexpr size_t kMaxMessage = 1 << 20;

    void Feed(const char* data, size_t len) { in_.append(data, len); }
    bool Next(WsMessage& out);
    const char* error() const { return error_; }
    uint16_t error_code() const { return error_code_; }

  private:
    bool Fail(uint16_t code, const char* why);

    std::string in_;
    std::string fragments_;
    uint8_t fragment_opcode_ = 0;
    const char* error_ = nullptr;
    uint16_t error_code_ = 0;
};

}  // namespace solsim
