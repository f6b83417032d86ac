// The Prometheus metrics (metrics_text.h): samples and their labels,
// one HELP and TYPE per family in a fixed order, escaping, and the text
// format line by line.
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support/fakes.h"
#include "routing/request_metrics.h"
#include "slots/state_poller.h"
#include "status/metrics_text.h"
#include "status/status_fixtures.h"

namespace solgate {
namespace {

using testing::CordonByOperator;
using testing::CordonByPollerForLag;
using testing::kNowWall;
using testing::Mainnet;
using testing::NamedNetwork;
using testing::TestNetwork;

std::vector<std::string> Lines(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        lines.push_back(line);
    }
    return lines;
}

bool HasLine(const std::string& text, const std::string& line) {
    for (const auto& l : Lines(text)) {
        if (l == line) {
            return true;
        }
    }
    return false;
}

// Every sample line of the text format: name, optional labels, value.
const std::regex& SampleLine() {
    static const std::regex kSample(
        R"(^[a-zA-Z_:][a-zA-Z0-9_:]*)"
        R"((\{[a-zA-Z_][a-zA-Z0-9_]*="(\\[\\"n]|[^\\"\n])*")"
        R"((,[a-zA-Z_][a-zA-Z0-9_]*="(\\[\\"n]|[^\\"\n])*")*\})?)"
        R"( -?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$)");
    return kSample;
}

const std::regex& CommentLine() {
    static const std::regex kComment(
        R"(^# (HELP [a-zA-Z_:][a-zA-Z0-9_:]* .+|)"
        R"(TYPE [a-zA-Z_:][a-zA-Z0-9_:]* (gauge|counter|histogram))$)");
    return kComment;
}

std::string MetricName(const std::string& sample) {
    return sample.substr(0, sample.find_first_of("{ "));
}

TEST(StatusRenderMetrics, UpstreamSamples) {
    TestNetwork net(2, Mainnet());
    UpstreamRecord& slot = net.network.record(0);
    slot.processed = 100;
    slot.finalized = 68;
    slot.shred = 350;
    slot.host.polls[kPollGetSlotProcessed] = 12;
    slot.host.poll_errors[kPollGetHealth] = 2;
    slot.host.cordon_events = 1;
    slot.host.large_rollbacks = 4;
    slot.host.gate_skipped_ticks = 9;
    slot.host.harvested = 31;
    CordonByPollerForLag(slot, 250, kNowWall);
    std::string m = RenderMetrics({&net.network}, 0);

    // "solgate_upstream_<family>{network="mainnet",upstream="up-<u>"<extra>} v"
    auto has = [&m](const std::string& family, int u, const std::string& value,
                    const std::string& extra = "") {
        return HasLine(m, "solgate_upstream_" + family +
                              "{network=\"mainnet\",upstream=\"up-" +
                              std::to_string(u) + "\"" + extra + "} " + value);
    };
    EXPECT_TRUE(HasLine(m, "solgate_upstream_latest_slot"
                           "{network=\"mainnet\",upstream=\"up-0\"} 100")) << m;
    EXPECT_TRUE(has("latest_slot", 1, "0"));
    EXPECT_TRUE(has("finalized_slot", 0, "68"));
    EXPECT_TRUE(has("shred_insert_slot", 0, "350"));
    EXPECT_TRUE(has("ingestion_lag_slots", 0, "250"));
    EXPECT_TRUE(has("healthy", 0, "0"));
    EXPECT_TRUE(has("healthy", 1, "1"));
    EXPECT_TRUE(has("cordon_events_total", 0, "1"));
    EXPECT_TRUE(has("large_rollbacks_total", 0, "4"));
    EXPECT_TRUE(has("traffic_gate_skips_total", 0, "9"));
    EXPECT_TRUE(has("context_slot_harvests_total", 0, "31"));
    EXPECT_TRUE(has("poll_requests_total", 0, "12",
                    ",method=\"getSlot_processed\""));
    EXPECT_TRUE(has("poll_requests_total", 0, "0",
                    ",method=\"getGenesisHash\""));
    EXPECT_TRUE(has("poll_errors_total", 0, "2", ",method=\"getHealth\""));
    EXPECT_TRUE(has("cordoned", 0, "1", ",reason=\"shred_lag\""));
    EXPECT_TRUE(has("cordoned", 1, "0", ",reason=\"\""));
}

TEST(StatusRenderMetrics, NetworkSamples) {
    TestNetwork net(3, Mainnet());
    for (size_t i = 0; i < 3; i++) {
        net.network.record(i).processed = 1000 + i;
        net.network.record(i).finalized = 960 + i;
        net.network.record(i).shred = 1010 + i;
    }
    net.shared->counters.getslot_corrections = 5;
    net.shared->counters.guard_rejections = 6;
    net.shared->counters.all_cordoned_fallbacks = 7;
    net.network.RefreshLanes(5000);  // the poller does this every tick
    std::string m = RenderMetrics({&net.network}, 8000);

    EXPECT_TRUE(HasLine(m, "solgate_network_getslot_corrections_total"
                           "{network=\"mainnet\"} 5")) << m;
    EXPECT_TRUE(HasLine(m, "solgate_network_guard_rejections_total"
                           "{network=\"mainnet\"} 6"));
    EXPECT_TRUE(HasLine(m, "solgate_network_all_cordoned_total"
                           "{network=\"mainnet\"} 7"));
    // Served tip: the median-ish head of three (see ServedTip).
    EXPECT_TRUE(HasLine(m, "solgate_network_served_tip_slot{network=\"mainnet\""
                           ",lane=\"all\",lane_key=\"all\",axis=\"processed\"} 1001"));
    EXPECT_TRUE(HasLine(m, "solgate_network_served_tip_slot{network=\"mainnet\""
                           ",lane=\"all\",lane_key=\"all\",axis=\"finalized\"} 961"));
    EXPECT_TRUE(HasLine(m, "solgate_network_indexed_tip_slot"
                           "{network=\"mainnet\"} 1012"));
    EXPECT_TRUE(HasLine(m, "solgate_network_served_tip_lag_slots"
                           "{network=\"mainnet\",lane=\"all\",lane_key=\"all\","
                           "axis=\"processed\"} 1"));
    EXPECT_TRUE(HasLine(m, "solgate_network_served_tip_advance_age_seconds"
                           "{network=\"mainnet\",lane=\"all\",lane_key=\"all\","
                           "axis=\"processed\"} 3.000"));
}

// Two groups may share a lane name (its first shared id token): their
// series differ by lane_key, so every label set is written once.
TEST(StatusRenderMetrics, LanesOfOneNameAreSeriesApart) {
    TestNetwork net(3, Mainnet());
    ASSERT_TRUE(net.network.tips().FindOrCreateLane("grp:1", "node", {0, 1}));
    ASSERT_TRUE(net.network.tips().FindOrCreateLane("grp:2", "node", {1, 2}));
    std::string m = RenderMetrics({&net.network}, 0);
    std::set<std::string> series;
    size_t lines = 0;
    for (size_t at = 0; (at = m.find("solgate_network_served_tip_slot{", at)) !=
                        std::string::npos;
         at++) {
        std::string line = m.substr(at, m.find('}', at) - at);
        series.insert(line);
        lines++;
        EXPECT_NE(line.find("lane_key=\""), std::string::npos) << line;
    }
    EXPECT_EQ(lines, 6u) << m;   // all, and the two, on two axes
    EXPECT_EQ(series.size(), lines) << m;
}

TEST(StatusRenderMetrics, FleetModeSamples) {
    TestNetwork net(1, Mainnet());
    std::string m = RenderMetrics({&net.network}, 0);
    EXPECT_EQ(m.find("solgate_shared_state_round_trip_seconds_count"),
              std::string::npos)
        << "nothing without solgate_shared_state";
    net.shared->counters.fleet_link = kFleetLinkUp;
    ObserveStoreRoundTrip(net.shared->counters, 300);
    ObserveStoreRoundTrip(net.shared->counters, 4000);
    ObserveStoreRoundTrip(net.shared->counters, 900000);
    m = RenderMetrics({&net.network}, 0);
    EXPECT_TRUE(HasLine(m, "solgate_shared_state_up{network=\"mainnet\"} 1"));
    const std::string h = "solgate_shared_state_round_trip_seconds";
    EXPECT_TRUE(HasLine(m, h + "_bucket{network=\"mainnet\",le=\"0.000250\"} 0"))
        << m;
    EXPECT_TRUE(HasLine(m, h + "_bucket{network=\"mainnet\",le=\"0.000500\"} 1"));
    EXPECT_TRUE(HasLine(m, h + "_bucket{network=\"mainnet\",le=\"0.005000\"} 2"));
    EXPECT_TRUE(HasLine(m, h + "_bucket{network=\"mainnet\",le=\"0.250000\"} 2"));
    EXPECT_TRUE(HasLine(m, h + "_bucket{network=\"mainnet\",le=\"+Inf\"} 3"));
    EXPECT_TRUE(HasLine(m, h + "_sum{network=\"mainnet\"} 0.904300"));
    EXPECT_TRUE(HasLine(m, h + "_count{network=\"mainnet\"} 3"));
}

TEST(StatusRenderMetrics, OneHelpAndTypePerFamilyWithTwoNetworks) {
    TestNetwork mainnet(2, Mainnet());
    NamedNetwork devnet("devnet", 1);
    std::string m = RenderMetrics({&mainnet.network, &devnet.network}, 0);

    std::set<std::string> helped;
    std::set<std::string> closed;  // families whose samples have ended
    std::string current;
    std::vector<std::string> lines = Lines(m);
    for (size_t i = 0; i < lines.size(); i++) {
        const std::string& line = lines[i];
        if (line.rfind("# HELP ", 0) == 0) {
            std::string name = line.substr(7, line.find(' ', 7) - 7);
            EXPECT_TRUE(helped.insert(name).second) << "second HELP: " << name;
            ASSERT_LT(i + 1, lines.size());
            EXPECT_EQ(lines[i + 1].rfind("# TYPE " + name + " ", 0), 0u);
            if (!current.empty()) closed.insert(current);
            current = name;
        } else if (line[0] != '#') {
            EXPECT_EQ(MetricName(line), current) << line;
            EXPECT_EQ(closed.count(MetricName(line)), 0u) << line;
        }
    }
    EXPECT_EQ(helped.size(), 65u);  // 41 + Cube Runner's 24
    EXPECT_TRUE(HasLine(m, "solgate_upstream_latest_slot"
                           "{network=\"devnet\",upstream=\"up-0\"} 0"));
    EXPECT_TRUE(HasLine(m, "solgate_network_indexed_tip_slot"
                           "{network=\"devnet\"} 0"));
    EXPECT_EQ(m.find("# HELP solgate_upstream_latest_slot "),
              m.rfind("# HELP solgate_upstream_latest_slot "));
    EXPECT_NE(m.find("not a block height"), std::string::npos);
}

TEST(StatusRenderMetrics, FamiliesInFixedOrder) {
    TestNetwork net(1, Mainnet());
    std::vector<std::string> order;
    for (const auto& line : Lines(RenderMetrics({&net.network}, 0))) {
        if (line.rfind("# TYPE ", 0) == 0) order.push_back(line.substr(7));
    }
    EXPECT_EQ(order, (std::vector<std::string>{
                         "solgate_upstream_latest_slot gauge",
                         "solgate_upstream_finalized_slot gauge",
                         "solgate_upstream_shred_insert_slot gauge",
                         "solgate_upstream_ingestion_lag_slots gauge",
                         "solgate_upstream_healthy gauge",
                         "solgate_upstream_slot_lag_slots gauge",
                         "solgate_upstream_lagging gauge",
                         "solgate_upstream_ejected gauge",
                         "solgate_upstream_ejections_total counter",
                         "solgate_upstream_latency_ewma_seconds gauge",
                         "solgate_upstream_weight gauge",
                         "solgate_upstream_cordoned gauge",
                         "solgate_upstream_cordon_events_total counter",
                         "solgate_upstream_large_rollbacks_total counter",
                         "solgate_upstream_poll_requests_total counter",
                         "solgate_upstream_poll_errors_total counter",
                         "solgate_upstream_traffic_gate_skips_total counter",
                         "solgate_upstream_context_slot_harvests_total counter",
                         "solgate_requests_total counter",
                         "solgate_request_duration_seconds histogram",
                         "solgate_failovers_total counter",
                         "solgate_upstream_cut_answers_total counter",
                         "solgate_broadcast_attempts_total counter",
                         "solgate_ws_connections gauge",
                         "solgate_ws_connections_total counter",
                         "solgate_ws_closed_total counter",
                         "solgate_ws_bytes_total counter",
                         "solgate_retries_total counter",
                         "solgate_consensus_total counter",
                         "solgate_hedges_sent_total counter",
                         "solgate_hedges_won_total counter",
                         "solgate_requests_uncounted_total counter",
                         "solgate_shared_state_up gauge",
                         "solgate_shared_state_round_trip_seconds histogram",
                         "solgate_network_getslot_corrections_total counter",
                         "solgate_network_guard_rejections_total counter",
                         "solgate_network_all_cordoned_total counter",
                         "solgate_network_served_tip_slot gauge",
                         "solgate_network_served_tip_lag_slots gauge",
                         "solgate_network_served_tip_advance_age_seconds gauge",
                         "solgate_network_indexed_tip_slot gauge",
                         "solgate_blocks_served_total counter",
                         "solgate_blocks_cache_bytes gauge",
                         "solgate_blocks_cache_entries gauge",
                         "solgate_blocks_cache_evictions_total counter",
                         "solgate_blocks_cache_store_failures_total counter",
                         "solgate_blocks_tier_answers_total counter",
                         "solgate_blocks_lock_waits_total counter",
                         "solgate_blocks_lock_timeouts_total counter",
                         "solgate_blocks_unauthorized_total counter",
                         "solgate_blocks_rate_limited_total counter",
                         "solgate_blocks_peer_fetches_total counter",
                         "solgate_blocks_peer_failures_total counter",
                         "solgate_blocks_peer_copies_total counter",
                         "solgate_blocks_peer_requests_total counter",
                         "solgate_blocks_queue_depth gauge",
                         "solgate_blocks_queue_in_flight gauge",
                         "solgate_blocks_queue_oldest_wait_seconds gauge",
                         "solgate_blocks_long_term_retrievals_total counter",
                         "solgate_blocks_long_term_failures_total counter",
                         "solgate_blocks_queue_dropped_total counter",
                         "solgate_blocks_queue_full_total counter",
                         "solgate_blocks_allowance_counted_total counter",
                         "solgate_blocks_allowance_refusals_total counter",
                         "solgate_blocks_repeats_total counter"}));
}

// The cordon's label is its cause: the operator's words (or the poller's,
// with a lag in slots or a node's error page) would make a series each.
TEST(StatusRenderMetrics, ACordonsLabelIsItsCauseNotItsText) {
    TestNetwork net(1, Mainnet());
    CordonByOperator(net.network.record(0), "say \"hi\" \\ then\nleave",
                     kNowWall);
    std::string m = RenderMetrics({&net.network}, 0);

    EXPECT_TRUE(HasLine(m, "solgate_upstream_cordoned{network=\"mainnet\","
                           "upstream=\"up-0\",reason=\"operator\"} 1"))
        << m;
    EXPECT_EQ(m.find("say"), std::string::npos) << m;
    EXPECT_EQ(CordonCauseName(CordonCause::kShredLag), "shred_lag");
    EXPECT_EQ(CordonCauseName(CordonCause::kUnhealthy), "unhealthy");
    EXPECT_EQ(CordonCauseName(CordonCause::kGenesis), "genesis");
    EXPECT_EQ(CordonCauseName(CordonCause::kNone), "");
}

// An upstream whose slot polls fail has no lag sample (its last slot
// would make one that grows) and is not lagging.
TEST(StatusRenderMetrics, AnUpstreamWhoseSlotPollsFailHasNoLag) {
    TestNetwork net(2, Mainnet());
    net.network.record(0).processed = 1000;
    net.network.record(1).processed = 900;
    net.network.slots().Observe(0, 1000);
    net.network.slots().Observe(1, 900);
    std::string before = RenderMetrics({&net.network}, 0);
    EXPECT_TRUE(HasLine(before, "solgate_upstream_lagging{network=\"mainnet\","
                                "upstream=\"up-1\"} 1")) << before;

    net.network.host(1).slot_polls_failing = 1;
    std::string m = RenderMetrics({&net.network}, 0);
    EXPECT_EQ(m.find("solgate_upstream_slot_lag_slots{network=\"mainnet\","
                     "upstream=\"up-1\"}"),
              std::string::npos) << m;
    EXPECT_TRUE(HasLine(m, "solgate_upstream_slot_lag_slots{network=\"mainnet\","
                           "upstream=\"up-0\"} 0")) << m;
    EXPECT_TRUE(HasLine(m, "solgate_upstream_lagging{network=\"mainnet\","
                           "upstream=\"up-1\"} 0")) << m;
}

TEST(StatusRenderMetrics, EveryLineFollowsTheTextFormat) {
    TestNetwork mainnet(2, Mainnet());
    NamedNetwork devnet("devnet", 2);
    CordonByOperator(mainnet.network.record(1), "quote \" and \\ and\nnewline",
                     kNowWall);
    CordonByPollerForLag(devnet.network.record(0), 4000, kNowWall);
    mainnet.network.record(0).processed = 18446744073709551615ull;
    std::string m = RenderMetrics({&mainnet.network, &devnet.network}, 0);

    ASSERT_FALSE(m.empty());
    EXPECT_EQ(m.back(), '\n');
    size_t samples = 0;
    for (const auto& line : Lines(m)) {
        if (line.rfind("#", 0) == 0) {
            EXPECT_TRUE(std::regex_match(line, CommentLine())) << line;
        } else {
            EXPECT_TRUE(std::regex_match(line, SampleLine())) << line;
            samples++;
        }
    }
    // Per upstream: 17 single-sample families, 2 x 5 poll methods, 6
    // failover causes and 2 broadcast outcomes; per network: 2 retry
    // reasons, 4 consensus outcomes, 2 hedge counters, the uncounted
    // requests, 3 counters, 3 lane families x 2 axes for lane "all" (no
    // group lanes formed) and the indexed tip.
    EXPECT_EQ(samples, 4u * (17 + 2 * kPollMethodCount + 6 + 2) + 2u * 19);
    EXPECT_TRUE(HasLine(m, "solgate_upstream_latest_slot{network=\"mainnet\","
                           "upstream=\"up-0\"} 18446744073709551615"));
}

TEST(StatusRenderMetrics, SkipsUnboundNetworks) {
    Network unbound("devnet", NetworkSettings{});
    unbound.AddUpstream({"lonely", {"http://10.0.2.1/", "", "", ""}});
    std::string m = RenderMetrics({&unbound}, 0);

    for (const auto& line : Lines(m)) {
        EXPECT_EQ(line[0], '#') << line;
    }
    EXPECT_NE(m.find("# TYPE solgate_upstream_latest_slot gauge\n"),
              std::string::npos);
}

}  // namespace
}  // namespace solgate
