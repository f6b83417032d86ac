// The extern "C" shims of WebSocket subscriptions: which upstreams'
// subscribers move, and where a piped stream is between two frames.
#include <new>

#include "capi/c_api_util.h"
#include "capi/c_handles.h"
#include "pubsub/subscriber_moves.h"
#include "pubsub/ws_counts.h"
#include "pubsub/ws_frames.h"
#include "pubsub/ws_handshake.h"
#include "pubsub/ws_holders.h"
#include "solgate/solgate.h"

struct sg_ws_frames_s {
    solgate::WsFrameBoundary boundary;
};

namespace {

using solgate::capi::Guard;
using solgate::capi::ToStr;

}  // namespace

extern "C" {

unsigned sg_ws_handshake_refusal(const sg_ws_handshake_t* handshake,
                                 sg_str_t* body) noexcept {
    if (handshake == nullptr || body == nullptr) {
        return 400;
    }
    auto present = [](sg_str_t s) -> std::optional<std::string_view> {
        if (s.data == nullptr) {
            return std::nullopt;
        }
        return std::string_view(s.data, s.len);
    };
    auto refusal = solgate::JudgeWsHandshake(
        present(handshake->connection), present(handshake->key),
        present(handshake->version), handshake->has_body != 0);
    if (!refusal) {
        *body = sg_str_t{nullptr, 0};
        return 0;
    }
    *body = sg_str_t{refusal->body.data(), refusal->body.size()};
    return refusal->http_status;
}

int sg_ws_frames_new(sg_ws_frames_t** out) noexcept {
    if (out == nullptr) {
        return SG_INVALID;
    }
    *out = new (std::nothrow) sg_ws_frames_s();
    return *out != nullptr ? SG_OK : SG_ERROR;
}

void sg_ws_frames_free(sg_ws_frames_t* frames) noexcept { delete frames; }

void sg_ws_frames_feed(sg_ws_frames_t* frames, const unsigned char* data,
                       size_t n) noexcept {
    if (frames != nullptr && data != nullptr) {
        frames->boundary.Feed(data, n);
    }
}

uint64_t sg_ws_frames_to_boundary(const sg_ws_frames_t* frames) noexcept {
    return frames != nullptr ? frames->boundary.ToBoundary() : 0;
}

int sg_network_ws_moves(const sg_network_t* net, int64_t now_ms,
                        int shutting_down, unsigned char* out,
                        size_t n) noexcept {
    if (net == nullptr || out == nullptr || n < net->network.size()) {
        return SG_INVALID;
    }
    return Guard(SG_ERROR, [&] {
        // a killed worker's subscriptions leave the counts here at the latest
        solgate::ReapWsHolders(net->network);
        std::vector<solgate::SubscriberMove> moves =
            solgate::SubscriberMoves(net->network, now_ms,
                                     shutting_down
                                         ? solgate::WorkerPhase::kShuttingDown
                                         : solgate::WorkerPhase::kServing);
        for (size_t i = 0; i < moves.size(); i++) {
            out[i] = static_cast<unsigned char>(moves[i]);
        }
        return SG_OK;
    });
}

void sg_network_ws_opened(const sg_network_t* net, size_t i) noexcept {
    if (net != nullptr && net->network.bound() && i < net->network.size()) {
        solgate::CountWsOpened(net->network, i);
    }
}

void sg_network_ws_closed(const sg_network_t* net, size_t i, unsigned move,
                          uint64_t to_client, uint64_t from_client) noexcept {
    if (net != nullptr && net->network.bound() && i < net->network.size()) {
        solgate::CountWsClosed(net->network, i, move, to_client, from_client);
    }
}

sg_str_t sg_ws_move_cause(unsigned move) noexcept {
    if (move > static_cast<unsigned>(solgate::SubscriberMove::kShutdown)) {
        return ToStr("");
    }
    return ToStr(solgate::SubscriberMoveCause(
        static_cast<solgate::SubscriberMove>(move)));
}

}  // extern "C"
