// solgate_health's answer: from the standing the router picks by, 200
// with the number of eligible upstreams, else 503 with the reason.
#include "status/health_answer.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "support/fakes.h"

namespace solgate {
namespace {

using testing::TestNetwork;

struct Answer {
    unsigned status;
    std::string body;
};

Answer Check(const Network& n, int64_t now_ms = 1000) {
    char buf[kHealthAnswerMax];
    HealthAnswer a = AnswerHealth(n, now_ms, buf, sizeof(buf));
    return {a.http_status, std::string(buf, a.len)};
}

void PollerCordon(Network& n, size_t i) {
    n.record(i).SwapCordon(CordonOwner::kNone,
                           {CordonOwner::kPoller, CordonCause::kUnhealthy, 1});
}

void Eject(Network& n, size_t i, int64_t until_ms) {
    n.host(i).ejected_until_ms.store(until_ms);
}

// Every upstream at `slot`, as the poller and the traffic saw it.
void AllAt(Network& n, uint64_t slot) {
    for (size_t i = 0; i < n.size(); i++) {
        n.slots().Suggest(i, kSlotProcessed, slot);
        n.slots().Observe(i, slot);
    }
}

TEST(HealthAnswer, OkCountsTheEligibleBackupsIncluded) {
    TestNetwork t(3);
    EXPECT_EQ(Check(t.network).status, 200u);
    EXPECT_EQ(Check(t.network).body, R"({"status":"ok","eligible":3})");
    t.network.OperatorCordon(0, "x", 1);
    EXPECT_EQ(Check(t.network).body, R"({"status":"ok","eligible":2})");

    NetworkSettings s;
    Network backups("mainnet", s);
    UpstreamConf b("spare");
    b.routing.backup = true;
    backups.AddUpstream(b);
    auto shared = std::make_unique<NetworkShared>();
    std::string error;
    ASSERT_TRUE(backups.Bind(shared.get(), true, 0, &error)) << error;
    EXPECT_EQ(Check(backups).body, R"({"status":"ok","eligible":1})");
}

TEST(HealthAnswer, EveryUpstreamCordoned) {
    TestNetwork t(2);
    t.network.OperatorCordon(0, "x", 1);
    PollerCordon(t.network, 1);
    Answer a = Check(t.network);
    EXPECT_EQ(a.status, 503u);
    EXPECT_EQ(a.body,
              R"({"status":"unavailable","eligible":0,"reason":"every upstream is cordoned"})");
}

// Passive ejection (max_fails, a 429's Retry-After) counts until it ends.
TEST(HealthAnswer, EveryUpstreamEjectedUntilTheEjectionEnds) {
    TestNetwork t(2);
    Eject(t.network, 0, 5000);
    Eject(t.network, 1, 5000);
    EXPECT_EQ(Check(t.network, 4999).body,
              R"({"status":"unavailable","eligible":0,"reason":"every upstream is out of rotation after failed attempts"})");
    EXPECT_EQ(Check(t.network, 5000).body, R"({"status":"ok","eligible":2})");
}

// Lagging is measured as routing does: against the upper median of the
// processed views. Two of three behind are not "all lagging"; a node that
// went back is, and with the others cordoned nothing is eligible.
TEST(HealthAnswer, LaggingAndMixedReasons) {
    TestNetwork t(3);  // max_slot_lag 20
    Network& n = t.network;
    AllAt(n, 1000);
    n.slots().Observe(2, 900);
    EXPECT_EQ(Check(n).body, R"({"status":"ok","eligible":2})");
    Network::Eligibility e = n.CountEligible(1000);
    EXPECT_EQ(e.lagging, 1u);
    PollerCordon(n, 0);
    Eject(n, 1, 9000);
    EXPECT_EQ(Check(n).body,
              R"({"status":"unavailable","eligible":0,"reason":"no upstream is eligible: 1 cordoned, 1 out of rotation after failed attempts, 1 lagging"})");

    NetworkSettings off;
    off.max_slot_lag = 0;   // lag never excludes
    TestNetwork u(2, off);
    AllAt(u.network, 1000);
    u.network.slots().Observe(1, 10);
    EXPECT_EQ(Check(u.network).body, R"({"status":"ok","eligible":2})");
}

// Standing is Pick's own tiers: what health counts as eligible is what a
// request without a selector would be given first.
TEST(HealthAnswer, StandingIsPicksTiers) {
    TestNetwork t(4);
    Network& n = t.network;
    PollerCordon(n, 0);
    Eject(n, 1, 5000);
    EXPECT_EQ(n.Standing(0, 0, 0, false), CandidateTier::kCordoned);
    EXPECT_EQ(n.Standing(1, 0, 0, false), CandidateTier::kEjected);
    EXPECT_EQ(n.Standing(2, 21, 0, false), CandidateTier::kLagging);
    EXPECT_EQ(n.Standing(2, 20, 0, false), CandidateTier::kEligible);
    n.DrainSubscribers(3, 0);
    EXPECT_EQ(n.Standing(3, 0, 0, false), CandidateTier::kEligible);
    EXPECT_EQ(n.Standing(3, 0, 0, true), CandidateTier::kEjected);
}

TEST(HealthAnswer, TheLongestReasonFits) {
    EXPECT_LT(std::string(R"({"status":"unavailable","eligible":0,"reason":"")"
                          R"(no upstream is eligible: 256 cordoned, 256 out of )"
                          R"(rotation after failed attempts, 256 lagging"})")
                  .size(),
              kHealthAnswerMax);
}

}  // namespace
}  // namespace solgate

namespace solgate {
namespace {

// With use_upstream_default, requests that send no selector go to its
// group (then to the network's backups outside it): health says whether
// they can be served, not whether some upstream somewhere could.
TEST(HealthAnswer, CountsUseUpstreamDefaultsGroup) {
    NetworkSettings s;
    s.default_selector = "up-0|up-1";
    TestNetwork t(3, s);
    EXPECT_EQ(Check(t.network).body, R"({"status":"ok","eligible":2})");
    PollerCordon(t.network, 0);
    PollerCordon(t.network, 1);
    Answer a = Check(t.network);
    EXPECT_EQ(a.status, 503u) << "up-2 is no default request's";
    EXPECT_EQ(a.body, R"({"status":"unavailable","eligible":0,"reason":"every upstream is cordoned"})");

    NetworkSettings with_backup;
    with_backup.default_selector = "up-0";
    Network n("mainnet", with_backup);
    n.AddUpstream({"up-0", {"http://10.0.0.1/", "", "", ""}});
    UpstreamConf spare("spare", {"http://10.0.0.2/", "", "", ""});
    spare.routing.backup = true;
    n.AddUpstream(spare);
    auto shared = std::make_unique<NetworkShared>();
    std::string error;
    ASSERT_TRUE(n.Bind(shared.get(), true, 0, &error)) << error;
    PollerCordon(n, 0);
    EXPECT_EQ(Check(n).body, R"({"status":"ok","eligible":1})")
        << "the backup outside the group it falls back to";
}

}  // namespace
}  // namespace solgate
