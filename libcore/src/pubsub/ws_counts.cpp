#include "pubsub/ws_counts.h"

#include "pubsub/subscriber_moves.h"

namespace solgate {

static_assert(kWsEnds == static_cast<size_t>(SubscriberMove::kShutdown) + 1,
              "a count per SubscriberMove, and one for 'closed'");

void CountWsOpened(const Network& network, size_t i, ProcessIdentity self) {
    UpstreamHostRecord& record = network.host(i);
    // counted open before its holder has it: a kill in between leaves one
    // too many open, never one too few
    record.ws_open.fetch_add(1, std::memory_order_relaxed);
    record.ws_opened.fetch_add(1, std::memory_order_relaxed);
    WsHolders(network.table(), self).Opened(network.RecordIndex(i));
}

void CountWsClosed(const Network& network, size_t i, unsigned end,
                   uint64_t to_client, uint64_t from_client,
                   ProcessIdentity self) {
    UpstreamHostRecord& record = network.host(i);
    WsHolders(network.table(), self).Closed(network.RecordIndex(i));
    record.ws_open.fetch_sub(1, std::memory_order_relaxed);
    record.ws_closed[end < kWsEnds ? end : 0].fetch_add(
        1, std::memory_order_relaxed);
    record.ws_bytes_to_client.fetch_add(to_client, std::memory_order_relaxed);
    record.ws_bytes_from_client.fetch_add(from_client,
                                          std::memory_order_relaxed);
}

std::string_view WsEndName(size_t end) {
    if (end == 0 || end >= kWsEnds) {
        return "closed";
    }
    return SubscriberMoveCause(static_cast<SubscriberMove>(end));
}

}  // namespace solgate
