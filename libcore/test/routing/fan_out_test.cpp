// broadcast, consensus and hedge: who is asked, and what the client gets.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "routing/routed_request.h"
#include "support/fakes.h"

namespace solgate {
namespace {

using testing::TestNetwork;

RpcRequest Parse(const std::string& body) { return testing::ParseKept(body); }

RoutedRequest::AttemptEnd Answered(const std::string& body) {
    RoutedRequest::AttemptEnd end;
    end.http_status = 200;
    end.answer = body;
    return end;
}

RoutedRequest::AttemptEnd Failed(unsigned status = 502) {
    RoutedRequest::AttemptEnd end;
    end.http_status = status;
    return end;
}

std::string Balance(uint64_t lamports, uint64_t slot = 100) {
    return R"({"jsonrpc":"2.0","result":{"context":{"slot":)" +
           std::to_string(slot) + R"(},"value":)" + std::to_string(lamports) +
           R"(},"id":9})";
}

const std::string kFinalizedBalance =
    R"({"jsonrpc":"2.0","id":9,"method":"getBalance","params":["x",{"commitment":"finalized"}]})";

NetworkSettings Consensus(std::vector<std::string_view> args) {
    NetworkSettings settings;
    EXPECT_FALSE(conf::ParseConsensus(args, &settings.consensus));
    return settings;
}

NetworkSettings Hedge(std::vector<std::string_view> args) {
    NetworkSettings settings;
    EXPECT_FALSE(conf::ParseHedge(args, &settings.hedge));
    return settings;
}

// --- which policy -----------------------------------------------------

TEST(ChooseFanOut, BroadcastThenConsensusThenHedgeAndNeverAWriteTwice) {
    NetworkSettings s = Consensus({"get*"});
    ASSERT_FALSE(conf::ParseHedge({"*"}, &s.hedge));
    ASSERT_FALSE(conf::ParseBroadcast({"sendTransaction"}, &s.broadcast));
    EXPECT_EQ(ChooseFanOut(s, Parse(kFinalizedBalance)),
              FanOutKind::kConsensus);
    // not finalized: the hedge
    EXPECT_EQ(ChooseFanOut(s, Parse(R"({"jsonrpc":"2.0","id":1,"method":"getBalance","params":["x",{"commitment":"confirmed"}]})")),
              FanOutKind::kHedge);
    EXPECT_EQ(ChooseFanOut(s, Parse(R"({"jsonrpc":"2.0","id":1,"method":"getBalance","params":["x"]})")),
              FanOutKind::kHedge);
    // getBlock is finalized at its default commitment
    EXPECT_EQ(ChooseFanOut(s, Parse(R"({"jsonrpc":"2.0","id":1,"method":"getBlock","params":[5]})")),
              FanOutKind::kConsensus);
    EXPECT_EQ(ChooseFanOut(s, Parse(R"({"jsonrpc":"2.0","id":1,"method":"sendTransaction","params":["AQ"]})")),
              FanOutKind::kBroadcast);
    // a write that is not broadcast is sent once, whatever the globs
    EXPECT_EQ(ChooseFanOut(s, Parse(R"({"jsonrpc":"2.0","id":1,"method":"requestAirdrop","params":["x",1]})")),
              FanOutKind::kNone);
    // batches never
    EXPECT_EQ(ChooseFanOut(s, Parse("[" + kFinalizedBalance + "]")),
              FanOutKind::kNone);
    // the network's commitment finalized makes every call finalized
    s.default_commitment = SG_COMMITMENT_FINALIZED;
    EXPECT_EQ(ChooseFanOut(s, Parse(R"({"jsonrpc":"2.0","id":1,"method":"getBalance","params":["x"]})")),
              FanOutKind::kConsensus);
}

// A notification has no answer to compare or race for: consensus and
// hedge leave it as one attempt; a broadcast still delivers it to several.
TEST(ChooseFanOut, ANotificationIsOnlyBroadcast) {
    NetworkSettings s = Consensus({"get*"});
    ASSERT_FALSE(conf::ParseHedge({"*"}, &s.hedge));
    ASSERT_FALSE(conf::ParseBroadcast({"sendTransaction"}, &s.broadcast));
    EXPECT_EQ(ChooseFanOut(s, Parse(R"({"jsonrpc":"2.0","method":"getBalance","params":["x",{"commitment":"finalized"}]})")),
              FanOutKind::kNone);
    EXPECT_EQ(ChooseFanOut(s, Parse(R"({"jsonrpc":"2.0","method":"getAccountInfo","params":["x"]})")),
              FanOutKind::kNone);
    EXPECT_EQ(ChooseFanOut(s, Parse(R"({"jsonrpc":"2.0","method":"sendTransaction","params":["AQ"]})")),
              FanOutKind::kBroadcast);
}

TEST(ChooseFanOut, TheMethodTableAgreesWithTheGlobs) {
    Network network("mainnet", {});
    ASSERT_FALSE(network.SetPolicy("hedge", {"getAccount*|myMethod"}));
    ASSERT_FALSE(network.SetPolicy("broadcast", {"sendTransaction"}));
    const NetworkSettings& s = network.settings();
    ASSERT_FALSE(s.fan_out_flags.empty());
    auto kind = [&](const std::string& method) {
        return ChooseFanOut(s, Parse(R"({"jsonrpc":"2.0","id":1,"method":")" +
                                     method + R"(","params":[]})"));
    };
    EXPECT_EQ(kind("getAccountInfo"), FanOutKind::kHedge);
    EXPECT_EQ(kind("myMethod"), FanOutKind::kHedge);        // not a Solana name
    EXPECT_EQ(kind("getBalance"), FanOutKind::kNone);
    EXPECT_EQ(kind("other"), FanOutKind::kNone);
    EXPECT_EQ(kind("sendTransaction"), FanOutKind::kBroadcast);
    // no policy: no table, nothing matched
    EXPECT_TRUE(Network("devnet", {}).settings().fan_out_flags.empty());
}

// --- broadcast --------------------------------------------------------

TEST(FanOut, ABroadcastGoesToSeveralAndAnswersTheFirstSuccess) {
    NetworkSettings settings;
    ASSERT_FALSE(conf::ParseBroadcast({"sendTransaction", "to=2"},
                                      &settings.broadcast));
    TestNetwork t(3, settings);
    const std::string send =
        R"({"jsonrpc":"2.0","id":5,"method":"sendTransaction","params":["AQ"]})";
    RoutedRequest req(Parse(send));
    ASSERT_TRUE(req.Route(t.network, {}, 0).forward);
    RoutedRequest::FanOutStart start = req.StartFanOut(0);
    EXPECT_EQ(start.kind, FanOutKind::kBroadcast);
    ASSERT_EQ(start.targets.size(), 2u);
    EXPECT_NE(start.targets[0], start.targets[1]);
    EXPECT_FALSE(req.ReportFanOut(start.targets[0], Failed(500), false, 0)
                     .decided);
    const std::string ok = R"({"jsonrpc":"2.0","result":"sig","id":5})";
    EXPECT_TRUE(req.ReportFanOut(start.targets[1], Answered(ok), false, 0)
                    .decided);   // all ended
    RoutedRequest::Answer answer = req.FanOutAnswer();
    EXPECT_EQ(answer.body, ok);
    EXPECT_EQ(answer.http_status, 200u);
    EXPECT_EQ(t.network.host(start.targets[0]).broadcasts[1].load(), 1u);
    EXPECT_EQ(t.network.host(start.targets[1]).broadcasts[0].load(), 1u);

    // not a broadcast method: one attempt as usual
    RoutedRequest read(Parse(R"({"jsonrpc":"2.0","id":3,"method":"getSlot"})"));
    ASSERT_TRUE(read.Route(t.network, {}, 0).forward);
    EXPECT_EQ(read.StartFanOut(0).kind, FanOutKind::kNone);

    // every one failed
    RoutedRequest all(Parse(send));
    ASSERT_TRUE(all.Route(t.network, {}, 0).forward);
    for (size_t u : all.StartFanOut(0).targets) {
        all.ReportFanOut(u, Failed(), false, 0);
    }
    EXPECT_EQ(all.FanOutAnswer().http_status, 502u);
}

// A broadcast notification: the nodes answer an empty 200, which is its
// delivery; the client gets an empty 200 too, not the all-failed 502.
TEST(FanOut, ABroadcastNotificationIsAnsweredNothingOnceDelivered) {
    NetworkSettings settings;
    ASSERT_FALSE(conf::ParseBroadcast({"sendTransaction", "to=2"},
                                      &settings.broadcast));
    TestNetwork t(3, settings);
    const std::string send =
        R"({"jsonrpc":"2.0","method":"sendTransaction","params":["AQ"]})";
    RoutedRequest req(Parse(send));
    ASSERT_TRUE(req.Route(t.network, {}, 0).forward);
    RoutedRequest::FanOutStart start = req.StartFanOut(0);
    ASSERT_EQ(start.kind, FanOutKind::kBroadcast);
    ASSERT_EQ(start.targets.size(), 2u);
    req.ReportFanOut(start.targets[0], Failed(503), false, 0);
    EXPECT_TRUE(req.ReportFanOut(start.targets[1], Answered(""), false, 0)
                    .decided);
    RoutedRequest::Answer answer = req.FanOutAnswer();
    EXPECT_EQ(answer.http_status, 200u);
    EXPECT_EQ(answer.body, "");
    EXPECT_EQ(t.network.host(start.targets[1]).broadcasts[0].load(), 1u);
    EXPECT_EQ(t.network.host(start.targets[0]).broadcasts[1].load(), 1u);

    // delivered nowhere: the all-failed answer still tells the client
    RoutedRequest lost(Parse(send));
    ASSERT_TRUE(lost.Route(t.network, {}, 0).forward);
    for (size_t u : lost.StartFanOut(0).targets) {
        lost.ReportFanOut(u, Failed(), false, 0);
    }
    EXPECT_EQ(lost.FanOutAnswer().http_status, 502u);
}

// --- consensus --------------------------------------------------------

struct ConsensusRun {
    explicit ConsensusRun(NetworkSettings settings, size_t upstreams = 3,
                          const std::string& body = kFinalizedBalance)
        : t(upstreams, settings), req(Parse(body)) {
        EXPECT_TRUE(req.Route(t.network, {}, 0).forward);
        start = req.StartFanOut(0);
    }
    TestNetwork t;
    RoutedRequest req;
    RoutedRequest::FanOutStart start;
};

TEST(Consensus, TwoMatchingAnswersWinWhateverTheirContextSlot) {
    ConsensusRun run(Consensus({"getBalance"}));
    ASSERT_EQ(run.start.kind, FanOutKind::kConsensus);
    ASSERT_EQ(run.start.targets.size(), 3u);
    const auto& u = run.start.targets;
    EXPECT_FALSE(run.req.ReportFanOut(u[0], Answered(Balance(7)), false, 0)
                     .decided);
    EXPECT_FALSE(run.req.ReportFanOut(u[1], Answered(Balance(8)), false, 0)
                     .decided);
    // the third agrees with the second, a slot later: decided
    EXPECT_TRUE(run.req.ReportFanOut(u[2], Answered(Balance(8, 101)), false, 0)
                    .decided);
    RoutedRequest::Answer answer = run.req.FanOutAnswer();
    EXPECT_EQ(answer.http_status, 200u);
    EXPECT_EQ(answer.body, Balance(8));   // the first of them, byte for byte
    EXPECT_EQ(run.req.upstream(), u[1]);
    EXPECT_EQ(run.t.network.counters().consensus[0].load(), 1u);
}

TEST(Consensus, AgreementEndsItBeforeTheSlowestAnswers) {
    ConsensusRun run(Consensus({"getBalance"}));
    const auto& u = run.start.targets;
    run.req.ReportFanOut(u[0], Answered(Balance(7)), false, 0);
    RoutedRequest::FanOutStep step =
        run.req.ReportFanOut(u[1], Answered(Balance(7)), false, 0);
    EXPECT_TRUE(step.decided);
    EXPECT_EQ(run.req.FanOutPending(), 1u);   // the glue cancels it
    run.req.ReportFanOut(u[2], {}, true, 0);
    EXPECT_EQ(run.req.FanOutPending(), 0u);
    EXPECT_EQ(run.req.FanOutAnswer().body, Balance(7));
}

TEST(Consensus, ThreeDifferentAnswersAreADispute) {
    ConsensusRun run(Consensus({"getBalance"}));
    const auto& u = run.start.targets;
    run.req.ReportFanOut(u[0], Answered(Balance(1)), false, 0);
    run.req.ReportFanOut(u[1], Answered(Balance(2)), false, 0);
    EXPECT_TRUE(run.req.ReportFanOut(u[2], Answered(Balance(3)), false, 0)
                    .decided);
    RoutedRequest::Answer answer = run.req.FanOutAnswer();
    EXPECT_EQ(answer.http_status, 200u);
    EXPECT_EQ(answer.body,
              R"({"jsonrpc":"2.0","error":{"code":-32090,"message":)"
              R"("Consensus dispute: 3 participants asked, answers split )"
              R"(1+1+1, 2 must agree"},"id":9})");
    EXPECT_FALSE(run.req.upstream());   // Solgate's own answer
    EXPECT_EQ(run.t.network.counters().consensus[1].load(), 1u);
}

TEST(Consensus, ADisputeIsDecidedOnceAgreementCannotBeReached) {
    ConsensusRun run(Consensus({"getBalance", "participants=3",
                                "agreement=3"}));
    const auto& u = run.start.targets;
    run.req.ReportFanOut(u[0], Answered(Balance(1)), false, 0);
    EXPECT_TRUE(run.req.ReportFanOut(u[1], Answered(Balance(2)), false, 0)
                    .decided);
}

TEST(Consensus, MostCommonAnswersTheLargestGroup) {
    ConsensusRun run(Consensus({"getBalance", "participants=3",
                                "agreement=3", "dispute=most_common"}));
    const auto& u = run.start.targets;
    run.req.ReportFanOut(u[0], Answered(Balance(1)), false, 0);
    run.req.ReportFanOut(u[1], Answered(Balance(2)), false, 0);
    EXPECT_TRUE(run.req.ReportFanOut(u[2], Answered(Balance(2)), false, 0)
                    .decided);
    EXPECT_EQ(run.req.FanOutAnswer().body, Balance(2));
    EXPECT_EQ(run.t.network.counters().consensus[1].load(), 1u);
}

TEST(Consensus, TooFewAnswersAndNoAnswerAtAll) {
    ConsensusRun low(Consensus({"getBalance"}));
    const auto& u = low.start.targets;
    low.req.ReportFanOut(u[0], Failed(), false, 0);
    low.req.ReportFanOut(u[1], Answered(Balance(1)), false, 0);
    low.req.ReportFanOut(u[2], Failed(), false, 0);
    EXPECT_EQ(low.req.FanOutAnswer().body,
              R"({"jsonrpc":"2.0","error":{"code":-32090,"message":)"
              R"("Consensus failed: 1 of 3 participants answered, 2 must )"
              R"(agree"},"id":9})");
    EXPECT_EQ(low.t.network.counters().consensus[2].load(), 1u);

    ConsensusRun none(Consensus({"getBalance"}));
    for (size_t upstream : none.start.targets) {
        none.req.ReportFanOut(upstream, Failed(), false, 0);
    }
    EXPECT_EQ(none.req.FanOutAnswer().http_status, 502u);
    EXPECT_EQ(none.t.network.counters().consensus[3].load(), 1u);
}

TEST(Consensus, ErrorsVoteAsTheirCode) {
    ConsensusRun run(Consensus({"getBalance"}));
    const auto& u = run.start.targets;
    const std::string a =
        R"({"jsonrpc":"2.0","error":{"code":-32004,"message":"a"},"id":9})";
    run.req.ReportFanOut(u[0], Answered(a), false, 0);
    EXPECT_TRUE(run.req
                    .ReportFanOut(u[1],
                                  Answered(R"({"jsonrpc":"2.0","error":{"code":-32004,"message":"b"},"id":9})"),
                                  false, 0)
                    .decided);
    EXPECT_EQ(run.req.FanOutAnswer().body, a);
}

TEST(Consensus, TrailingFinalizedUpstreamsAreNotAsked) {
    NetworkSettings settings = Consensus({"getBalance"});
    settings.max_finalized_slot_lag = 100;
    TestNetwork t(4, settings);
    t.network.slots().Suggest(0, kSlotFinalized, 5000);
    t.network.slots().Suggest(1, kSlotFinalized, 4990);
    t.network.slots().Suggest(2, kSlotFinalized, 4800);   // 200 behind
    // 3: unknown, kept
    RoutedRequest req(Parse(kFinalizedBalance));
    ASSERT_TRUE(req.Route(t.network, {}, 0).forward);
    std::vector<size_t> targets = req.StartFanOut(0).targets;
    EXPECT_EQ(std::set<size_t>(targets.begin(), targets.end()),
              (std::set<size_t>{0, 1, 3}));

    // a liar far ahead does not raise the bar: the runner-up is the
    // reference, and the liar still passes
    t.network.slots().Suggest(3, kSlotFinalized, 999999);
    RoutedRequest again(Parse(kFinalizedBalance));
    ASSERT_TRUE(again.Route(t.network, {}, 0).forward);
    targets = again.StartFanOut(0).targets;
    EXPECT_EQ(std::set<size_t>(targets.begin(), targets.end()),
              (std::set<size_t>{0, 1, 3}));

    // max_finalized_slot_lag 0: nobody is left out
    NetworkSettings off = settings;
    off.max_finalized_slot_lag = 0;
    TestNetwork t2(3, off);
    t2.network.slots().Suggest(0, kSlotFinalized, 5000);
    t2.network.slots().Suggest(1, kSlotFinalized, 4000);
    RoutedRequest all(Parse(kFinalizedBalance));
    ASSERT_TRUE(all.Route(t2.network, {}, 0).forward);
    EXPECT_EQ(all.StartFanOut(0).targets.size(), 3u);
}

// --- hedge ------------------------------------------------------------

TEST(Hedge, TheTimerSendsAnotherAndTheFirstGoodAnswerWins) {
    TestNetwork t(3, Hedge({"getBalance", "after=100ms", "max=1"}));
    RoutedRequest req(Parse(kFinalizedBalance));
    ASSERT_TRUE(req.Route(t.network, {}, 0).forward);
    RoutedRequest::FanOutStart start = req.StartFanOut(0);
    ASSERT_EQ(start.kind, FanOutKind::kHedge);
    ASSERT_EQ(start.targets.size(), 1u);
    EXPECT_EQ(start.hedge_after_ms, 100u);
    EXPECT_TRUE(req.HedgeLeft());
    auto hedge = req.NextHedge(100);
    ASSERT_TRUE(hedge);
    EXPECT_NE(*hedge, start.targets[0]);
    EXPECT_FALSE(req.HedgeLeft());        // max=1
    EXPECT_FALSE(req.NextHedge(200));
    EXPECT_EQ(t.network.counters().hedges_sent.load(), 1u);
    // the hedge answers first
    RoutedRequest::FanOutStep step =
        req.ReportFanOut(*hedge, Answered(Balance(5)), false, 150);
    EXPECT_TRUE(step.decided);
    EXPECT_EQ(req.FanOutPending(), 1u);
    req.ReportFanOut(start.targets[0], {}, true, 160);   // cancelled
    EXPECT_EQ(req.FanOutAnswer().body, Balance(5));
    EXPECT_EQ(req.upstream(), *hedge);
    EXPECT_EQ(t.network.counters().hedges_won.load(), 1u);
}

TEST(Hedge, MissingDataAndEmptyAnswersDoNotEndTheRace) {
    TestNetwork t(3, Hedge({"getBalance"}));
    RoutedRequest req(Parse(kFinalizedBalance));
    ASSERT_TRUE(req.Route(t.network, {}, 0).forward);
    size_t first = req.StartFanOut(0).targets[0];
    size_t hedge = *req.NextHedge(100);
    const std::string missing =
        R"({"jsonrpc":"2.0","error":{"code":-32004,"message":"no"},"id":9})";
    EXPECT_FALSE(req.ReportFanOut(first, Answered(missing), false, 120)
                     .decided);
    const std::string empty =
        R"({"jsonrpc":"2.0","result":{"context":{"slot":5},"value":null},"id":9})";
    // nothing pending and no good answer: another candidate is asked
    RoutedRequest::FanOutStep step =
        req.ReportFanOut(hedge, Answered(empty), false, 130);
    EXPECT_FALSE(step.decided);
    ASSERT_TRUE(step.launch);
    std::set<size_t> asked{first, hedge, *step.launch};
    EXPECT_EQ(asked.size(), 3u);
    // it fails too: none is left, the best answer so far is given
    step = req.ReportFanOut(*step.launch, Failed(), false, 140);
    EXPECT_TRUE(step.decided);
    EXPECT_FALSE(step.launch);
    EXPECT_EQ(req.FanOutAnswer().body, empty);
    EXPECT_EQ(t.network.counters().hedges_won.load(), 1u);   // the empty one
}

TEST(Hedge, AClientErrorIsARealAnswer) {
    TestNetwork t(2, Hedge({"getBalance"}));
    RoutedRequest req(Parse(kFinalizedBalance));
    ASSERT_TRUE(req.Route(t.network, {}, 0).forward);
    size_t first = req.StartFanOut(0).targets[0];
    const std::string bad =
        R"({"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid param"},"id":9})";
    EXPECT_TRUE(req.ReportFanOut(first, Answered(bad), false, 10).decided);
    EXPECT_EQ(req.FanOutAnswer().body, bad);
    EXPECT_EQ(t.network.counters().hedges_won.load(), 0u);
}

// --- configuration ----------------------------------------------------

TEST(FailsafeArgs, ConsensusAndHedgeWordsAreChecked) {
    conf::Consensus c;
    EXPECT_FALSE(conf::ParseConsensus({"getBlock|getTransaction",
                                       "participants=4", "agreement=3",
                                       "dispute=most_common"},
                                      &c));
    EXPECT_EQ(c.methods.size(), 2u);
    EXPECT_EQ(c.participants, 4u);
    EXPECT_EQ(c.agreement, 3u);
    EXPECT_EQ(c.dispute, conf::Consensus::Dispute::kMostCommon);
    EXPECT_EQ(*conf::ParseConsensus({"getBlock", "agreement=4"}, &c),
              "\"agreement=4\" in \"consensus\" is more than its 3 "
              "participants");
    EXPECT_EQ(*conf::ParseConsensus({"getBlock", "dispute=vote"}, &c),
              "invalid \"dispute=\" \"vote\" in \"consensus\": must be "
              "\"error\" or \"most_common\"");
    EXPECT_EQ(*conf::ParseConsensus({"getBlock", "participants=0"}, &c),
              "invalid \"participants=\" \"0\" in \"consensus\": must be a "
              "number from 1 to 16");
    EXPECT_TRUE(conf::ParseConsensus({}, &c));
    EXPECT_EQ(*conf::ParseConsensus({"getBlock", "participants=3",
                                     "participants=5"}, &c),
              "\"participants=\" given twice in \"consensus\"");
    EXPECT_EQ(*conf::ParseConsensus({"getBalance|sendTransaction"}, &c),
              "\"consensus\" never compares sendTransaction: a write is sent "
              "once (see \"broadcast\")");
    conf::RetryMissingData r;
    EXPECT_EQ(*conf::ParseRetryMissingData({"on", "attempts=2", "attempts=3"},
                                           &r),
              "\"attempts=\" given twice in \"retry_missing_data\"");

    conf::Hedge h;
    EXPECT_EQ(*conf::ParseHedge({"getBalance", "max=1", "max=2"}, &h),
              "\"max=\" given twice in \"hedge\"");
    EXPECT_FALSE(conf::ParseHedge({"getBalance", "after=250ms", "max=2"}, &h));
    EXPECT_EQ(h.after_ms, 250u);
    EXPECT_EQ(h.max, 2u);
    EXPECT_EQ(*conf::ParseHedge({"getBalance|sendTransaction"}, &h),
              "\"hedge\" never sends sendTransaction twice: a write is not "
              "hedged (see \"broadcast\")");
    EXPECT_EQ(*conf::ParseHedge({"getBalance", "after=0"}, &h),
              "invalid \"after=\" \"0\" in \"hedge\": must be a time from 1ms "
              "to 60s, such as 100ms");
    EXPECT_EQ(*conf::ParseHedge({"getBalance", "max=9"}, &h),
              "invalid \"max=\" \"9\" in \"hedge\": must be a number from 1 "
              "to 4");
    EXPECT_EQ(*conf::ParseHedge({"getBalance", "race"}, &h),
              "invalid parameter \"race\" in \"hedge\", expected \"after=\" or "
              "\"max=\"");
}

TEST(Network, APolicyIsSetOnce) {
    Network network("mainnet", {});
    EXPECT_FALSE(network.SetPolicy("hedge", {"getBalance"}));
    EXPECT_TRUE(network.SetPolicy("hedge", {"getBalance"}));
    EXPECT_FALSE(network.SetPolicy("consensus", {"getBlock"}));
    EXPECT_TRUE(network.SetPolicy("vote", {"getBlock"}));
    EXPECT_FALSE(Network::CheckPolicy("broadcast", {"sendTransaction"}));
    EXPECT_TRUE(Network::CheckPolicy("broadcast", {}));
}

}  // namespace
}  // namespace solgate
