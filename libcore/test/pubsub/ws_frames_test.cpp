// Frame boundaries of a server's WebSocket stream, however it is cut.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pubsub/ws_frames.h"

namespace solgate {
namespace {

std::string Frame(size_t payload, bool masked = false) {
    std::string f;
    f += static_cast<char>(0x81);
    const char mask_bit = masked ? static_cast<char>(0x80) : 0;
    if (payload < 126) {
        f += static_cast<char>(mask_bit | static_cast<char>(payload));
    } else if (payload <= 0xffff) {
        f += static_cast<char>(mask_bit | 126);
        f += static_cast<char>(payload >> 8);
        f += static_cast<char>(payload & 0xff);
    } else {
        f += static_cast<char>(mask_bit | 127);
        for (int i = 7; i >= 0; i--) {
            f += static_cast<char>((static_cast<uint64_t>(payload) >> (i * 8)) & 0xff);
        }
    }
    if (masked) {
        f += std::string(4, 'm');
    }
    f += std::string(payload, 'x');
    return f;
}

void Feed(WsFrameBoundary& b, const std::string& bytes) {
    b.Feed(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
}

TEST(WsFrameBoundary, WholeFramesEndAtABoundary) {
    WsFrameBoundary b;
    EXPECT_TRUE(b.AtBoundary());
    Feed(b, Frame(5) + Frame(200) + Frame(70000) + Frame(0, true));
    EXPECT_TRUE(b.AtBoundary());
}

TEST(WsFrameBoundary, InsideAFrameItSaysWhatIsLeft) {
    WsFrameBoundary b;
    std::string f = Frame(300);           // 4 bytes of header, 300 of payload
    Feed(b, f.substr(0, 1));
    EXPECT_EQ(b.ToBoundary(), 1u);        // the header's second byte at least
    Feed(b, f.substr(1, 1));
    EXPECT_EQ(b.ToBoundary(), 2u);        // then its 16-bit length
    Feed(b, f.substr(2, 2));
    EXPECT_EQ(b.ToBoundary(), 300u);
    Feed(b, f.substr(4, 100));
    EXPECT_EQ(b.ToBoundary(), 200u);
    Feed(b, f.substr(104));
    EXPECT_TRUE(b.AtBoundary());
}

// Reading no more than ToBoundary() at a time, as the gateway does while
// it drains a connection, stops exactly between two frames.
TEST(WsFrameBoundary, ReadingUpToTheBoundaryStopsBetweenFrames) {
    std::string stream = Frame(3) + Frame(129) + Frame(70000) + Frame(1);
    std::vector<size_t> ends = {5, 5 + 133, 5 + 133 + 70010, stream.size()};
    for (size_t cut = 1; cut < 200; cut += 37) {
        WsFrameBoundary b;
        Feed(b, stream.substr(0, cut));   // read freely until the drain
        size_t at = cut;
        while (!b.AtBoundary()) {
            size_t n = static_cast<size_t>(b.ToBoundary());
            Feed(b, stream.substr(at, n));
            at += n;
        }
        EXPECT_NE(std::find(ends.begin(), ends.end(), at), ends.end()) << cut;
        EXPECT_GE(at, cut);
    }
}

}  // namespace
}  // namespace solgate
