// The HTML status page (status_page.h) and its chart (lag_chart.h): every
// string from configuration or operators escaped, one chart per upstream
// drawn from the history, an empty history said as such, the page
// self-contained, and the Cube Runner section.
#include <gtest/gtest.h>

#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "routing/request_metrics.h"
#include "slots/upstream_history.h"
#include "status/html_text.h"
#include "status/lag_chart.h"
#include "status/status_fixtures.h"
#include "status/status_page.h"
#include "support/blocks_zone.h"

namespace solgate {
namespace {

using testing::Accept;
using testing::CordonByOperator;
using testing::kNowMono;
using testing::kNowWall;
using testing::Mainnet;
using testing::NamedNetwork;

size_t Count(const std::string& text, const std::string& needle) {
    size_t n = 0;
    for (size_t at = text.find(needle); at != std::string::npos;
         at = text.find(needle, at + needle.size())) {
        n++;
    }
    return n;
}

// The <article> of upstream `id` (its id as the page writes it).
std::string Card(const std::string& page, const std::string& id) {
    size_t start = page.find("<article class=\"upstream");
    while (start != std::string::npos) {
        size_t end = page.find("</article>", start);
        std::string card = page.substr(start, end - start);
        if (card.find("data-upstream=\"" + id + "\"") != std::string::npos) {
            return card;
        }
        start = page.find("<article class=\"upstream", end);
    }
    return "";
}

// The points of the series path of `css_class` in a card ("" when none).
size_t PathPoints(const std::string& card, const std::string& css_class) {
    std::smatch m;
    std::regex path("<path class=\"series " + css_class + "\" d=\"([^\"]*)\"");
    if (!std::regex_search(card, m, path)) {
        return 0;
    }
    return Count(m[1].str(), "M") + Count(m[1].str(), "L");
}

// The last `steps` steps up to kNowMono, each with lags growing by 10.
void FillHistory(UpstreamHistory& history, int64_t steps, uint64_t base) {
    for (int64_t k = steps - 1; k >= 0; k--) {
        uint64_t lag = base + uint64_t(steps - 1 - k) * 10;
        RecordLags(history, kNowMono - k * kHistoryStepMs, lag, lag / 2);
    }
}

TEST(HtmlText, EscapesMarkupQuotesAndControls) {
    EXPECT_EQ(Html("<a href='x'>\"R&D\"</a>"),
              "&lt;a href=&#39;x&#39;&gt;&quot;R&amp;D&quot;&lt;/a&gt;");
    EXPECT_EQ(Html("line\nbreak\x7f"), "line\xef\xbf\xbd" "break\xef\xbf\xbd");
    EXPECT_EQ(Html("plain-id_1.2"), "plain-id_1.2");
}

TEST(HtmlText, PeopleUnits) {
    EXPECT_EQ(RateText(0.04), "0.0");
    EXPECT_EQ(RateText(12.46), "12.5");
    EXPECT_EQ(RateText(1234.4), "1234");
    EXPECT_EQ(AgeText(850), "850 ms");
    EXPECT_EQ(AgeText(185000), "3 min 5 s");
    EXPECT_EQ(AgeText(7800000), "2 h 10 min");
    EXPECT_EQ(BytesText(512), "512 B");
    EXPECT_EQ(BytesText(1536), "1.5 KiB");
    EXPECT_EQ(BytesText(200ull << 30), "200.0 GiB");
}

TEST(LagChart, CeilingsAreRound) {
    EXPECT_EQ(ChartCeiling(0), 10u);
    EXPECT_EQ(ChartCeiling(10), 10u);
    EXPECT_EQ(ChartCeiling(11), 20u);
    EXPECT_EQ(ChartCeiling(21), 50u);
    EXPECT_EQ(ChartCeiling(51), 100u);
    EXPECT_EQ(ChartCeiling(4321), 5000u);
}

TEST(LagChart, AnEmptyHistorySaysSo) {
    std::string out;
    std::vector<std::optional<LagSample>> none(kHistorySteps);
    AppendLagChart(out, "a<b", none, {20, 100});
    EXPECT_NE(out.find("no samples yet"), std::string::npos);
    EXPECT_EQ(out.find("<path"), std::string::npos);
    EXPECT_EQ(out.find("<circle"), std::string::npos);
    EXPECT_NE(out.find("of a&lt;b"), std::string::npos);
    EXPECT_EQ(out.find("a<b"), std::string::npos);
    // the axis still reads: 0 to 10, -15 min to now
    EXPECT_NE(out.find(">-15 min<"), std::string::npos);
    EXPECT_NE(out.find(">now<"), std::string::npos);
}

TEST(LagChart, GapsBreakTheLineAndALoneSampleIsADot) {
    std::vector<std::optional<LagSample>> samples(kHistorySteps);
    samples[10] = LagSample{10, 5, 1};
    samples[11] = LagSample{11, 6, 1};
    samples[12] = LagSample{12, 7, 1};
    samples[20] = LagSample{20, 8, 1};   // alone
    samples[58] = LagSample{58, 9, 1};
    samples[59] = LagSample{59, 40, 1};
    std::string out;
    AppendLagChart(out, "up", samples, {20, 100});
    std::smatch m;
    ASSERT_TRUE(std::regex_search(
        out, m, std::regex("<path class=\"series slot-lag\" d=\"([^\"]*)\"")));
    std::string d = m[1].str();
    EXPECT_EQ(Count(d, "M"), 2u);   // two runs
    EXPECT_EQ(Count(d, "L"), 3u);   // 3 + 2 points
    EXPECT_EQ(Count(out, "<circle class=\"slot-lag\""), 1u);
    // the y axis tops at 50 (the highest lag is 40); the max_slot_lag
    // line is in range, the ingestion threshold (100) is not
    EXPECT_NE(out.find(">50</text>"), std::string::npos);
    EXPECT_NE(out.find("max_slot_lag 20"), std::string::npos);
    EXPECT_EQ(out.find("cordon above 100"), std::string::npos);
}

class StatusPageTest : public ::testing::Test {
protected:
    std::string Render() const {
        return RenderStatusPage({&net_.network}, kNowMono, kNowWall);
    }

    NamedNetwork net_{"mainnet", 3, Mainnet()};
};

TEST_F(StatusPageTest, OneChartPerUpstreamFromItsHistory) {
    for (size_t i = 0; i < 3; i++) {
        FillHistory(net_.network.host(i).history, 12, i * 100);
    }
    std::string page = Render();
    EXPECT_EQ(Count(page, "<svg class=\"chart\""), 3u);
    for (const char* id : {"up-0", "up-1", "up-2"}) {
        std::string card = Card(page, id);
        ASSERT_NE(card, "") << id;
        EXPECT_EQ(Count(card, "<svg class=\"chart\""), 1u) << id;
        EXPECT_EQ(PathPoints(card, "slot-lag"), 12u) << id;
        EXPECT_EQ(PathPoints(card, "ingestion-lag"), 12u) << id;
    }
    // up-2's lags go to 310: its axis tops at 500
    EXPECT_NE(Card(page, "up-2").find(">500</text>"), std::string::npos);
}

TEST_F(StatusPageTest, NoHistoryYetIsSaidPerUpstream) {
    std::string page = Render();
    EXPECT_EQ(Count(page, "<svg class=\"chart\""), 3u);
    EXPECT_EQ(Count(page, "no samples yet"), 3u);
    EXPECT_EQ(page.find("<path class=\"series"), std::string::npos);
    EXPECT_NE(page.find("<th>requests/s</th><td>—</td>"), std::string::npos);
}

TEST_F(StatusPageTest, SelfContainedAndLiveWithOrWithoutScript) {
    std::string page = Render();
    EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
    for (const char* external : {"src=", "href=", "<link", "@import", "url("}) {
        EXPECT_EQ(page.find(external), std::string::npos) << external;
    }
    EXPECT_NE(page.find("<noscript><meta http-equiv=\"refresh\" content=\"10\">"
                        "</noscript>"),
              std::string::npos);
    EXPECT_EQ(Count(page, "<script>"), 1u);
    EXPECT_NE(page.find("var every=5000;"), std::string::npos);
    EXPECT_NE(page.find("<main id=\"solgate-status\">"), std::string::npos);
    EXPECT_NE(page.find("as of 2023-11-14T22:13:20.123Z"), std::string::npos);
}

// A node whose getSlot polls fail: its last slots stay, but no lag is
// made of them, and its round trip is from before the polls failed.
TEST_F(StatusPageTest, AnUpstreamWhosePollsFailShowsNoLagAndAnOldRoundTrip) {
    for (size_t i = 0; i < 3; i++) {
        UpstreamRecord& r = net_.network.record(i);
        r.processed = 1000;
        r.observed_processed = 1000;
        r.host.latency_ewma_us = 12000;
    }
    net_.network.record(1).observed_processed = 900;   // frozen 100 behind
    net_.network.host(1).slot_polls_failing = 1;
    std::string page = Render();
    std::string up1 = Card(page, "up-1");
    EXPECT_NE(up1.find(">slot polls failing<"), std::string::npos);
    EXPECT_EQ(up1.find(">lagging<"), std::string::npos);
    EXPECT_NE(up1.find("<th>slot lag</th><td>unknown<"), std::string::npos);
    EXPECT_NE(up1.find("<th>poll round trip</th><td>12 ms (before its polls "
                       "failed)<"),
              std::string::npos)
        << up1;
    std::string up0 = Card(page, "up-0");
    EXPECT_NE(up0.find("<th>poll round trip</th><td>12 ms<"), std::string::npos)
        << up0;
    EXPECT_EQ(up0.find("slot polls failing"), std::string::npos);
}

// In a fleet the page says whether the shared state is reached, and which
// host polls each upstream (its figures are that host's).
TEST_F(StatusPageTest, AFleetHostSaysWhoPollsEachUpstream) {
    EXPECT_EQ(Render().find("polled by"), std::string::npos) << "no fleet";
    net_.shared->counters.fleet_link = kFleetLinkUp;
    net_.network.host(1).polled_by.Write("gw-b");
    std::string page = Render();
    EXPECT_NE(page.find("; fleet: shared state up</p>"), std::string::npos);
    EXPECT_NE(Card(page, "up-0").find("<th>polled by</th><td>this host<"),
              std::string::npos);
    EXPECT_NE(Card(page, "up-1").find("<th>polled by</th><td>gw-b<"),
              std::string::npos);
    net_.shared->counters.fleet_link = kFleetLinkDown;
    EXPECT_NE(Render().find("fleet: <b>shared state unreachable</b>"),
              std::string::npos);
}

TEST_F(StatusPageTest, HealthCordonLaggingAndRates) {
    UpstreamRecord& a = net_.network.record(0);
    UpstreamRecord& b = net_.network.record(1);
    UpstreamRecord& c = net_.network.record(2);
    for (UpstreamRecord* r : {&a, &b, &c}) {
        r->processed = 1000;
        r->observed_processed = 1000;
        r->shred = 1002;
        r->health = static_cast<uint32_t>(HealthOutcome::kOk);
    }
    b.observed_processed = 900;   // 100 behind: lagging
    CordonByOperator(c, "disk swap", kNowWall - 60000);
    // 13 requests answered by up-0 (2 errors) and a failed attempt, the
    // counts marked 10 s ago at 0
    for (int k = 0; k < 10; k++) {
        CountRequest(net_.shared->counters.requests, net_.network.RecordIndex(0),
                     SolanaMethodIndex("getBalance"), RequestOutcome::kOk);
    }
    for (auto outcome : {RequestOutcome::kRpcError, RequestOutcome::kHttpError}) {
        CountRequest(net_.shared->counters.requests, net_.network.RecordIndex(0),
                     SolanaMethodIndex("getBalance"), outcome);
    }
    // a client's mistake the node answered: a request, not its error
    CountRequest(net_.shared->counters.requests, net_.network.RecordIndex(0),
                 SolanaMethodIndex("getBalance"), RequestOutcome::kClientError);
    a.host.failovers[static_cast<size_t>(AttemptCause::kTimeout)] = 1;
    MarkCounts(a.host.history, kNowMono - 10000, 0, 0);
    net_.network.RefreshLanes(kNowMono);

    std::string page = Render();
    std::string up0 = Card(page, "up-0");
    EXPECT_NE(up0.find("class=\"upstream\""), std::string::npos);
    EXPECT_NE(up0.find(">healthy<"), std::string::npos);
    EXPECT_NE(up0.find("<th>requests/s</th><td>1.3 <small>over 10 s</small>"),
              std::string::npos);
    EXPECT_NE(up0.find("<th>errors/s</th><td>0.3 <small>over 10 s</small>"),
              std::string::npos);
    EXPECT_NE(up0.find("<th>requests</th><td>13<"), std::string::npos);
    EXPECT_NE(up0.find("<th>errors</th><td>3<"), std::string::npos);
    std::string up1 = Card(page, "up-1");
    EXPECT_NE(up1.find("class=\"upstream lagging\""), std::string::npos);
    EXPECT_NE(up1.find(">lagging<"), std::string::npos);
    EXPECT_NE(up1.find("<th>slot lag</th><td>100<"), std::string::npos);
    std::string up2 = Card(page, "up-2");
    EXPECT_NE(up2.find("class=\"upstream cordoned\""), std::string::npos);
    EXPECT_NE(up2.find("Cordoned by <b>an operator</b> since "
                       "2023-11-14T22:12:20.123Z: disk swap"),
              std::string::npos);
    // the network-wide lane's served tips
    EXPECT_NE(page.find("<td>all (network-wide)</td><td>3</td><td>1000</td>"),
              std::string::npos);
}

TEST(StatusPage, EveryOperatorStringIsEscaped) {
    const std::string evil = "<img src=x onerror=alert(1)>";
    // ids are checked when nginx reads them; the page does not count on it
    auto shared = std::make_unique<NetworkShared>();
    Network network("net\"><script>alert(2)</script>", Mainnet());
    network.AddUpstream(UpstreamConf{evil, {"http://10.0.0.9/", "", "", ""}});
    network.AddUpstream(UpstreamConf{"ok-1", {"http://10.0.0.8/", "", "", ""}});
    std::string error;
    ASSERT_TRUE(network.Bind(shared.get(), true, 0, &error)) << error;
    CordonByOperator(network.record(1),
                     "</p><script>alert('3')</script> & \"more\"", kNowWall);
    std::string page = RenderStatusPage({&network}, kNowMono, kNowWall);
    EXPECT_EQ(page.find("<img"), std::string::npos);
    EXPECT_EQ(page.find("alert(2)</script>"), std::string::npos);
    EXPECT_EQ(page.find("alert('3')"), std::string::npos);
    EXPECT_EQ(Count(page, "<script>"), 1u);   // the page's own
    EXPECT_NE(page.find("&lt;img src=x onerror=alert(1)&gt;"), std::string::npos);
    EXPECT_NE(page.find("net&quot;&gt;&lt;script&gt;alert(2)&lt;/script&gt;"),
              std::string::npos);
    EXPECT_NE(page.find("&lt;/p&gt;&lt;script&gt;alert(&#39;3&#39;)"
                        "&lt;/script&gt; &amp; &quot;more&quot;"),
              std::string::npos);
    // the chart's label too
    EXPECT_NE(page.find("ingestion lag of &lt;img"), std::string::npos);
}

TEST(StatusPage, NoBoundNetworkYet) {
    Network unbound("later", Mainnet());
    std::string page = RenderStatusPage({&unbound, nullptr}, kNowMono, kNowWall);
    EXPECT_NE(page.find("No network is ready yet."), std::string::npos);
    EXPECT_EQ(page.find("<svg"), std::string::npos);
}

BlockConfBuilder CubeRunner() {
    BlockConfBuilder b;
    Accept(b.Region("us-east"));
    Accept(b.MaxSize(1 << 20));
    Accept(b.PeerToken("a-peer-token-of-16+"));
    Accept(b.Peer("eu-west", "http://eu.example/secret-key/", true));
    Accept(b.LongTermStorage("http://lts.example/"));
    return b;
}

TEST(StatusPage, CubeRunnerCacheQueuesAndPeers) {
    NamedNetwork net("mainnet", 1, Mainnet());
    testing::BlockServiceRig rig{net.network, "status_page_test", CubeRunner()};
    ASSERT_EQ(rig.error(), "");
    BlocksShared& s = *rig.shared();
    s.counters.served[kSourceCache] = 7;
    s.counters.peer_fetches[0] = 3;
    s.counters.peer_failures[0] = 1;
    RetrievalQueueShared* q = QueueAt(&s, 0);
    EXPECT_EQ(RequestBlock(q, 0, 4000, "getBlock/json/full/r1/v0",
                           kNowMono - 2500, 100, 1.0, RepeatFn())
                  .outcome,
              QueueOutcome::kQueued);

    std::string page = RenderStatusPage({&net.network}, kNowMono, kNowWall);
    EXPECT_NE(page.find("Cube Runner <small>region us-east</small>"),
              std::string::npos);
    EXPECT_NE(page.find("<td>from cache</td><td>7</td>"), std::string::npos);
    EXPECT_NE(page.find("<td>size</td><td>0 B of 1.0 MiB</td>"),
              std::string::npos);
    // one queued block of blade_runner, waiting 2 s
    EXPECT_NE(page.find("<td>blade_runner</td><td>1</td><td>0</td><td>2 s</td>"),
              std::string::npos);
    EXPECT_NE(page.find("<td>eu-west</td><td>3</td><td>1</td><td>0</td>"),
              std::string::npos);
    // a peer's URL may carry a key: never shown
    EXPECT_EQ(page.find("secret-key"), std::string::npos);
}

}  // namespace
}  // namespace solgate
