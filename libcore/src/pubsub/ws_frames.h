// Where the frames of a WebSocket byte stream begin and end, without
// keeping them: the gateway pipes an upstream's frames to the client and
// may end the connection only between two of them, with a close frame of
// its own (RFC 6455 5.2).
#pragma once

#include <cstddef>
#include <cstdint>

namespace solgate {

class WsFrameBoundary {
public:
    // Follows n more bytes of the stream.
    void Feed(const unsigned char* data, size_t n);
    // How many bytes may be read before the stream is between two frames
    // at most (0: it is between two now). Inside a frame's header the
    // header's length is not known yet, so this is the least it has left.
    uint64_t ToBoundary() const;
    bool AtBoundary() const { return ToBoundary() == 0; }

private:
    // the header read so far: 2 bytes, then 0, 2 or 8 of length, 4 of mask
    unsigned char head_[14] = {};
    size_t head_len_ = 0;
    uint64_t payload_left_ = 0;
    size_t HeadSize() const;
};

}  // namespace solgate
