// The operator state file of a network: its format (written, read back,
// refused whole when it is not one), what is taken from a zone and put
// into one, and the save and restore around them.
#include "store/operator_state.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "slots/state_poller.h"
#include "support/fakes.h"
#include "support/temp_dir.h"

namespace solgate {
namespace {

using testing::PubsubTestNetwork;

constexpr int64_t kWall = 1733400000000;

OperatorState Sample() {
    OperatorState s;
    s.network = "mainnet";
    s.saved_wall_ms = kWall;
    s.cordons = {{"up-1", "disk \"swap\" \\ at 3am", kWall - 5000},
                 {"up-2", "", kWall - 1}};
    s.drains = {{"up-0", kWall + 20000}};
    return s;
}

std::optional<OperatorState> Parse(const std::string& text,
                                   std::string* error) {
    return ParseOperatorState(text, error);
}

std::string Refusal(const std::string& text) {
    std::string error;
    auto state = Parse(text, &error);
    EXPECT_FALSE(state) << text;
    return error;
}

// A version-1 document with `members` after the network.
std::string Doc(const std::string& members) {
    return R"({"format":"solgate-operator-state","version":1,"network":"mainnet")" +
           (members.empty() ? "" : "," + members) + "}";
}

std::string Read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

void Write(const std::string& path, const std::string& text) {
    std::ofstream(path) << text;
}

TEST(OperatorState, FormatReadsBackAsWritten) {
    std::string text = FormatOperatorState(Sample());
    EXPECT_EQ(text,
              "{\"format\":\"solgate-operator-state\",\"version\":1,"
              "\"network\":\"mainnet\",\"saved\":1733400000000,\n"
              " \"cordons\":[\n"
              "  {\"upstream\":\"up-1\",\"by\":\"operator\",\"reason\":"
              "\"disk \\\"swap\\\" \\\\ at 3am\",\"since\":1733399995000},\n"
              "  {\"upstream\":\"up-2\",\"by\":\"operator\",\"reason\":\"\","
              "\"since\":1733399999999}],\n"
              " \"drains\":[\n"
              "  {\"upstream\":\"up-0\",\"until\":1733400020000}]}\n");
    std::string error;
    auto back = Parse(text, &error);
    ASSERT_TRUE(back) << error;
    EXPECT_EQ(back->network, "mainnet");
    EXPECT_EQ(back->saved_wall_ms, kWall);
    ASSERT_EQ(back->cordons.size(), 2u);
    EXPECT_EQ(back->cordons[0].upstream, "up-1");
    EXPECT_EQ(back->cordons[0].reason, "disk \"swap\" \\ at 3am");
    EXPECT_EQ(back->cordons[0].since_wall_ms, kWall - 5000);
    EXPECT_EQ(back->cordons[1].reason, "");
    ASSERT_EQ(back->drains.size(), 1u);
    EXPECT_EQ(back->drains[0].upstream, "up-0");
    EXPECT_EQ(back->drains[0].until_wall_ms, kWall + 20000);
}

TEST(OperatorState, AnEmptyStateIsTwoEmptyLists) {
    OperatorState empty;
    empty.network = "devnet";
    std::string error;
    auto back = Parse(FormatOperatorState(empty), &error);
    ASSERT_TRUE(back) << error;
    EXPECT_EQ(back->network, "devnet");
    EXPECT_TRUE(back->cordons.empty());
    EXPECT_TRUE(back->drains.empty());
}

// A later version may add members: a reader skips what it does not know,
// containers and all, at the top and in entries.
TEST(OperatorState, UnknownMembersAreSkipped) {
    std::string error;
    auto state = Parse(
        Doc(R"("host":{"id":"gw-1","tags":[1,2,{"x":[]}]},"notes":[{"a":1}],)"
            R"("cordons":[{"upstream":"up-1","by":"operator","reason":"r",)"
            R"("since":5,"ticket":{"id":42},"links":["a"]}],"drains":[])"),
        &error);
    ASSERT_TRUE(state) << error;
    ASSERT_EQ(state->cordons.size(), 1u);
    EXPECT_EQ(state->cordons[0].upstream, "up-1");
    EXPECT_EQ(state->cordons[0].since_wall_ms, 5);
}

TEST(OperatorState, WhatIsNotAnOperatorStateIsRefusedWhole) {
    // cut short, as a file half written by something else would be
    EXPECT_EQ(Refusal(Doc("").substr(0, 40)).rfind("it is not valid JSON", 0), 0u);
    EXPECT_EQ(Refusal("[1,2]"), "it is not an object");
    EXPECT_EQ(Refusal("{}"),
              "it is not a Solgate operator state (no \"format\":"
              "\"solgate-operator-state\")");
    EXPECT_EQ(Refusal(R"({"format":"solgate-operator-state"})"),
              "it has no \"version\"");
    EXPECT_EQ(Refusal(R"({"format":"solgate-operator-state","version":2})"),
              "it is version 2, this Solgate reads version 1");
    EXPECT_EQ(Refusal(R"({"format":"solgate-operator-state","version":1.5})"),
              "\"version\" is not a whole number");
    EXPECT_EQ(Refusal(Doc(R"("cordons":{})")), "\"cordons\" is not an array");
    EXPECT_EQ(Refusal(Doc(R"("cordons":[{"upstream":"a","since":1},"x"])")),
              "cordons[1] is not an object");
    EXPECT_EQ(Refusal(Doc(R"("cordons":[{"since":1}])")),
              "cordons[0] has no \"upstream\"");
    EXPECT_EQ(Refusal(Doc(R"("cordons":[{"upstream":"a b","since":1}])")),
              "cordons[0]: \"upstream\" may contain only letters, digits, "
              "'-', '_' and '.'");
    EXPECT_EQ(Refusal(Doc(R"("cordons":[{"upstream":"a"}])")),
              "cordons[0] has no \"since\"");
    EXPECT_EQ(Refusal(Doc(R"("cordons":[{"upstream":"a","since":-1}])")),
              "cordons[0]: \"since\" is not a time in milliseconds");
    EXPECT_EQ(Refusal(Doc(R"("cordons":[{"upstream":"a","by":"poller","since":1}])")),
              "cordons[0]: \"by\" is not \"operator\"");
    EXPECT_EQ(Refusal(Doc(R"("cordons":[{"upstream":"a","reason":7,"since":1}])")),
              "cordons[0]: \"reason\" is not a string");
    EXPECT_EQ(Refusal(Doc(R"("cordons":[{"upstream":"a","reason":")" +
                          std::string(kReasonCapacity, 'x') + R"(","since":1}])")),
              "cordons[0]: \"reason\" is longer than 191 bytes");
    EXPECT_EQ(Refusal(Doc(R"("drains":[{"upstream":"a","since":1}])")),
              "drains[0] has no \"until\"");
    EXPECT_EQ(Refusal(Doc(std::string(R"("x":)") + std::string(20, '[') +
                          std::string(20, ']'))),
              "it nests deeper than 16 levels");
    EXPECT_EQ(Refusal(Doc("") + "x").rfind("it is not valid JSON", 0), 0u);
}

// The operator's cordons with their reason and time, and the drains still
// running as wall times; never the poller's cordons.
TEST(OperatorState, CaptureTakesTheOperatorsCordonsAndTheRunningDrains) {
    PubsubTestNetwork t(4, {0, 3});
    Network& n = t.network;
    n.OperatorCordon(1, "disk swap", kWall - 60000);
    n.record(2).SwapCordon(CordonOwner::kNone,
                           {CordonOwner::kPoller, CordonCause::kUnhealthy, 1});
    const int64_t now = 500000;
    n.DrainSubscribers(0, now - 10000);          // 20 s left
    n.DrainSubscribers(3, now - 40000);          // over
    OperatorState s = CaptureOperatorState(n, now, kWall);
    EXPECT_EQ(s.network, "mainnet");
    EXPECT_EQ(s.saved_wall_ms, kWall);
    ASSERT_EQ(s.cordons.size(), 1u);
    EXPECT_EQ(s.cordons[0].upstream, "up-1");
    EXPECT_EQ(s.cordons[0].reason, "disk swap");
    EXPECT_EQ(s.cordons[0].since_wall_ms, kWall - 60000);
    ASSERT_EQ(s.drains.size(), 1u);
    EXPECT_EQ(s.drains[0].upstream, "up-0");
    EXPECT_EQ(s.drains[0].until_wall_ms, kWall + 20000);
}

// Into a fresh zone: the operator's cordons with reason, owner and time;
// a drain for the time it has left (never more than a drain lasts); what
// names an upstream no longer configured is reported, not applied.
TEST(OperatorState, ApplyPutsItBackAsTheOperatorLeftIt) {
    PubsubTestNetwork t(3, {0, 2});
    Network& n = t.network;
    OperatorState s;
    s.network = "mainnet";
    s.cordons = {{"up-1", "disk swap", kWall - 60000}, {"gone", "x", 1}};
    s.drains = {{"up-0", kWall + 12000},      // 12 s left
                {"up-2", kWall - 1},          // ended while nginx was down
                {"gone", kWall + 1000}};
    const int64_t now = 700000;
    OperatorStateApplied applied = ApplyOperatorState(n, s, now, kWall);
    EXPECT_EQ(applied.cordoned, std::vector<std::string>{"up-1"});
    EXPECT_EQ(applied.drained, std::vector<std::string>{"up-0"});
    EXPECT_EQ(applied.unknown, std::vector<std::string>{"gone"});

    CordonState c = n.cordons().Cordon(1);
    EXPECT_EQ(c.owner, CordonOwner::kOperator);
    EXPECT_EQ(c.cause, CordonCause::kOperator);
    EXPECT_EQ(c.since_wall_ms, kWall - 60000);
    EXPECT_EQ(n.cordons().CordonNote(1), "disk swap");
    EXPECT_FALSE(n.Cordoned(0));
    EXPECT_EQ(n.DrainUntil(0), now + 12000);
    EXPECT_FALSE(n.Draining(2, now));

    // a clock set back must not make a drain longer than one lasts
    OperatorState far;
    far.network = "mainnet";
    far.drains = {{"up-2", kWall + 10 * Network::kWsDrainMs}};
    ApplyOperatorState(n, far, now, kWall);
    EXPECT_EQ(n.DrainUntil(2), now + Network::kWsDrainMs);
}

NetworkSettings WithState(const std::string& dir) {
    NetworkSettings settings;
    settings.state_dir = dir;
    return settings;
}

TEST(OperatorState, SavedThenRestoredIntoAFreshZone) {
    TempDir dir("operator-state");
    ASSERT_FALSE(dir.path().empty());
    const int64_t now = 900000;
    {
        PubsubTestNetwork before(3, {2}, WithState(dir.path()));
        EXPECT_EQ(OperatorStatePath(before.network),
                  dir.path() + "/operator-mainnet.json");
        before.network.OperatorCordon(0, "kernel upgrade", kWall - 1000);
        before.network.DrainSubscribers(2, now);
        std::string error;
        ASSERT_EQ(SaveOperatorState(before.network, now, kWall, &error),
                  OperatorStateSave::kSaved)
            << error;
    }
    // nginx restarts: a new zone, 5 s later
    PubsubTestNetwork after(3, {2}, WithState(dir.path()));
    auto report = RestoreOperatorState(after.network, 100, kWall + 5000);
    ASSERT_TRUE(report);
    EXPECT_EQ(report->level, kLogNotice);
    EXPECT_EQ(report->line,
              "network \"mainnet\": took back from \"" + dir.path() +
                  "/operator-mainnet.json\" 1 operator cordon(s) (\"up-0\") "
                  "and 1 drain(s) (\"up-2\")");
    EXPECT_EQ(after.network.cordons().Cordon(0).owner, CordonOwner::kOperator);
    EXPECT_EQ(after.network.cordons().CordonNote(0), "kernel upgrade");
    EXPECT_EQ(after.network.cordons().Cordon(0).since_wall_ms, kWall - 1000);
    EXPECT_EQ(after.network.DrainUntil(2), 100 + Network::kWsDrainMs - 5000);

    // an uncordon is saved the same way: nothing comes back
    after.network.OperatorUncordon(0, kWall + 59000);
    std::string error;
    ASSERT_EQ(SaveOperatorState(after.network, 55100, kWall + 60000, &error),
              OperatorStateSave::kSaved);
    PubsubTestNetwork again(3, {2}, WithState(dir.path()));
    report = RestoreOperatorState(again.network, 0, kWall + 61000);
    ASSERT_TRUE(report);
    EXPECT_EQ(report->line,
              "network \"mainnet\": took back from \"" + dir.path() +
                  "/operator-mainnet.json\" 0 operator cordon(s) and 0 "
                  "drain(s)");
    EXPECT_FALSE(again.network.Cordoned(0));
}

// Only a zone that started empty takes the file back: a reload that kept
// the zone keeps what it holds (a later change than the file, perhaps).
// A zone of another layout (a new Solgate over a running one) starts
// empty and takes it back.
TEST(OperatorState, OnlyAZoneThatStartedEmptyTakesTheFileBack) {
    TempDir dir("operator-state");
    PubsubTestNetwork first(2, {}, WithState(dir.path()));
    first.network.OperatorCordon(1, "kept", kWall);
    std::string error;
    ASSERT_EQ(SaveOperatorState(first.network, 0, kWall, &error),
              OperatorStateSave::kSaved);
    first.network.OperatorUncordon(1, kWall + 1000);   // after the save: only in the zone

    Network reload("mainnet", WithState(dir.path()));
    reload.AddUpstream(UpstreamConf("up-0"));
    reload.AddUpstream(UpstreamConf("up-1"));
    ASSERT_TRUE(reload.Bind(first.shared.get(), false, 0, &error)) << error;
    EXPECT_FALSE(reload.started_empty());
    EXPECT_FALSE(RestoreOperatorState(reload, 0, kWall));
    EXPECT_FALSE(reload.Cordoned(1));

    first.shared->layout = NetworkShared::kLayout - 1;
    Network upgrade("mainnet", WithState(dir.path()));
    upgrade.AddUpstream(UpstreamConf("up-0"));
    upgrade.AddUpstream(UpstreamConf("up-1"));
    ASSERT_TRUE(upgrade.Bind(first.shared.get(), false, 0, &error)) << error;
    EXPECT_TRUE(upgrade.started_empty());
    ASSERT_TRUE(RestoreOperatorState(upgrade, 0, kWall));
    EXPECT_EQ(upgrade.cordons().CordonNote(1), "kept");
}

// A reload that resized the zone read the file into the new one: a
// change on the old zone is not written (it would be lost from the new
// zone, and the next save there would drop it from the file), and the
// admin API answers 503 for it; a reload that failed lets the old zone
// save again after kSupersededMs.
TEST(OperatorState, AZoneAReloadReplacedSavesNothing) {
    TempDir dir("operator-state");
    PubsubTestNetwork old(2, {}, WithState(dir.path()));
    std::string error;
    ASSERT_EQ(SaveOperatorState(old.network, 1000, kWall, &error),
              OperatorStateSave::kSaved);
    const std::string before = Read(dir.path() + "/operator-mainnet.json");
    Network::Supersede(old.shared.get(), 1000);
    EXPECT_TRUE(old.network.Superseded(1000));
    old.network.OperatorCordon(0, "too late", kWall);
    EXPECT_EQ(SaveOperatorState(old.network, 1500, kWall, &error),
              OperatorStateSave::kSuperseded);
    EXPECT_EQ(Read(dir.path() + "/operator-mainnet.json"), before);
    const int64_t after = 1000 + Network::kSupersededMs;
    EXPECT_FALSE(old.network.Superseded(after));
    EXPECT_EQ(SaveOperatorState(old.network, after, kWall, &error),
              OperatorStateSave::kSaved);
    // memory that is no table of this layout is left alone
    Network::Supersede(nullptr, 0);
    std::vector<char> junk(64, 'x');
    Network::Supersede(junk.data(), 0);
    EXPECT_EQ(junk[40], 'x');
}

TEST(OperatorState, NothingToSayWithoutStateOrBeforeTheFirstSave) {
    testing::TestNetwork bare(2);
    std::string error;
    EXPECT_EQ(SaveOperatorState(bare.network, 0, kWall, &error),
              OperatorStateSave::kSaved);
    EXPECT_FALSE(RestoreOperatorState(bare.network, 0, kWall));
    EXPECT_EQ(OperatorStatePath(bare.network), "");

    TempDir dir("operator-state");
    testing::TestNetwork fresh(2, WithState(dir.path()));
    EXPECT_FALSE(RestoreOperatorState(fresh.network, 0, kWall));
}

// A file that cannot be used changes nothing and is reported with its
// path and why; the next save replaces it.
TEST(OperatorState, ACorruptFileIsReportedAndLeftOut) {
    TempDir dir("operator-state");
    const std::string path = dir.path() + "/operator-mainnet.json";
    Write(path, Doc(R"("cordons":[{"upstream":"up-0","since":1}])").substr(0, 70));
    testing::TestNetwork t(2, WithState(dir.path()));
    auto report = RestoreOperatorState(t.network, 0, kWall);
    ASSERT_TRUE(report);
    EXPECT_EQ(report->level, kLogError);
    EXPECT_EQ(report->line.rfind("network \"mainnet\": ignoring the state file \"" +
                                     path + "\": it is not valid JSON",
                                 0),
              0u)
        << report->line;
    EXPECT_NE(report->line.find("the next cordon, uncordon or drain replaces it"),
              std::string::npos);
    EXPECT_FALSE(t.network.Cordoned(0));

    t.network.OperatorCordon(1, "new", kWall);
    std::string error;
    ASSERT_EQ(SaveOperatorState(t.network, 0, kWall, &error),
              OperatorStateSave::kSaved) << error;
    std::string refused;
    auto saved = Parse(Read(path), &refused);
    ASSERT_TRUE(saved) << refused;
    ASSERT_EQ(saved->cordons.size(), 1u);
    EXPECT_EQ(saved->cordons[0].upstream, "up-1");
}

TEST(OperatorState, AnotherNetworksFileIsLeftOut) {
    TempDir dir("operator-state");
    OperatorState devnet;
    devnet.network = "devnet";
    devnet.cordons = {{"up-0", "x", 1}};
    Write(dir.path() + "/operator-mainnet.json", FormatOperatorState(devnet));
    testing::TestNetwork t(2, WithState(dir.path()));
    auto report = RestoreOperatorState(t.network, 0, kWall);
    ASSERT_TRUE(report);
    EXPECT_EQ(report->level, kLogError);
    EXPECT_NE(report->line.find(": it is network \"devnet\"'s;"),
              std::string::npos)
        << report->line;
    EXPECT_FALSE(t.network.Cordoned(0));
}

TEST(OperatorState, AFileNamingUpstreamsNoLongerConfiguredSaysSo) {
    TempDir dir("operator-state");
    OperatorState s;
    s.network = "mainnet";
    s.cordons = {{"up-1", "", 1}, {"old-node", "", 1}};
    Write(dir.path() + "/operator-mainnet.json", FormatOperatorState(s));
    testing::TestNetwork t(2, WithState(dir.path()));
    auto report = RestoreOperatorState(t.network, 0, kWall);
    ASSERT_TRUE(report);
    EXPECT_EQ(report->level, kLogNotice);
    EXPECT_NE(report->line.find("1 operator cordon(s) (\"up-1\") and 0 drain(s); "
                                "dropped what it says of \"old-node\", no "
                                "longer upstream(s) of the network"),
              std::string::npos)
        << report->line;
}

}  // namespace
}  // namespace solgate
