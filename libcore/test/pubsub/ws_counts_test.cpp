// A host's subscription counts, as the solgate_ws_* metrics show them.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "pubsub/subscriber_moves.h"
#include "pubsub/ws_counts.h"
#include "status/metrics_text.h"
#include "support/fakes.h"

namespace solgate {
namespace {

TEST(WsCounts, OpenedAndClosedByCauseWithTheirBytes) {
    testing::PubsubTestNetwork t(2, {0});   // up-1 has no ws=
    Network& n = t.network;

    CountWsOpened(n, 0);
    CountWsOpened(n, 0);
    CountWsOpened(n, 0);
    CountWsOpened(n, 0);
    EXPECT_EQ(n.WsOpen(), 4u);
    CountWsClosed(n, 0, 0, 1000, 50);
    CountWsClosed(n, 0, static_cast<unsigned>(SubscriberMove::kCordoned), 10, 5);
    CountWsClosed(n, 0, static_cast<unsigned>(SubscriberMove::kShutdown), 0, 0);
    EXPECT_EQ(n.WsOpen(), 1u);
    EXPECT_EQ(WsEndName(0), "closed");
    EXPECT_EQ(WsEndName(1), "cordoned");
    EXPECT_EQ(WsEndName(2), "lagging");
    EXPECT_EQ(WsEndName(4), "shutdown");
    EXPECT_EQ(WsEndName(7), "closed");

    std::string text = RenderMetrics({&n}, 0);
    for (const char* line :
         {"solgate_ws_connections{network=\"mainnet\",upstream=\"up-0\"} 1\n",
          "solgate_ws_connections_total{network=\"mainnet\",upstream=\"up-0\"} 4\n",
          "solgate_ws_closed_total{network=\"mainnet\",upstream=\"up-0\",cause=\"closed\"} 1\n",
          "solgate_ws_closed_total{network=\"mainnet\",upstream=\"up-0\",cause=\"cordoned\"} 1\n",
          "solgate_ws_closed_total{network=\"mainnet\",upstream=\"up-0\",cause=\"lagging\"} 0\n",
          "solgate_ws_closed_total{network=\"mainnet\",upstream=\"up-0\",cause=\"shutdown\"} 1\n",
          "solgate_ws_bytes_total{network=\"mainnet\",upstream=\"up-0\",direction=\"to_client\"} 1010\n",
          "solgate_ws_bytes_total{network=\"mainnet\",upstream=\"up-0\",direction=\"from_client\"} 55\n"}) {
        EXPECT_NE(text.find(line), std::string::npos) << line;
    }
    EXPECT_EQ(text.find("solgate_ws_connections{network=\"mainnet\",upstream=\"up-1\"}"),
              std::string::npos);   // no ws=: no samples
}

}  // namespace
}  // namespace solgate
