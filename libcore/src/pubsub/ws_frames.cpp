#include "pubsub/ws_frames.h"

#include <algorithm>

namespace solgate {

size_t WsFrameBoundary::HeadSize() const {
    if (head_len_ < 2) {
        return 2;
    }
    size_t size = 2;
    const unsigned len7 = head_[1] & 0x7f;
    size += len7 == 126 ? 2 : len7 == 127 ? 8 : 0;
    size += (head_[1] & 0x80) != 0 ? 4 : 0;   // masked (client frames)
    return size;
}

void WsFrameBoundary::Feed(const unsigned char* data, size_t n) {
    while (n > 0) {
        if (payload_left_ > 0) {
            uint64_t take = std::min<uint64_t>(payload_left_, n);
            payload_left_ -= take;
            data += take;
            n -= static_cast<size_t>(take);
            continue;
        }
        head_[head_len_++] = *data++;
        n--;
        if (head_len_ < HeadSize()) {
            continue;
        }
        const unsigned len7 = head_[1] & 0x7f;
        uint64_t len = len7;
        if (len7 == 126) {
            len = (uint64_t{head_[2]} << 8) | head_[3];
        } else if (len7 == 127) {
            len = 0;
            for (size_t i = 2; i < 10; i++) {
                len = (len << 8) | head_[i];
            }
        }
        payload_left_ = len;
        head_len_ = 0;
    }
}

uint64_t WsFrameBoundary::ToBoundary() const {
    if (head_len_ > 0) {
        return HeadSize() - head_len_;
    }
    return payload_left_;
}

}  // namespace solgate
