// The counts of a host's WebSocket subscription connections, per upstream
// in the network's zone: the solgate_ws_* metrics and ws_max_connections.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "pubsub/ws_holders.h"
#include "routing/network.h"

namespace solgate {

// A connection on upstream i opened, or ended, in process `self` (which
// counts it in its holder too, pubsub/ws_holders.h). `end`: 0 closed (by
// its client, its node or the idle timeout), else the SubscriberMove that
// closed it.
void CountWsOpened(const Network& network, size_t i,
                   ProcessIdentity self = ThisProcess());
void CountWsClosed(const Network& network, size_t i, unsigned end,
                   uint64_t to_client, uint64_t from_client,
                   ProcessIdentity self = ThisProcess());
// solgate_ws_closed_total's cause label of an end: "closed", then
// SubscriberMoveCause's ("cordoned", "lagging", "drained", "shutdown").
std::string_view WsEndName(size_t end);

}  // namespace solgate
