#include <gtest/gtest.h>

#include <optional>

#include "support/fakes.h"
#include "slots/state_poller.h"

namespace solgate {
namespace {

using testing::Error;
using testing::FakeClock;
using testing::FakeTransport;
using testing::Result;
using testing::TestNetwork;

constexpr const char* kMainnetHash =
    "\"5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d\"";

std::map<std::string, std::string> Node(uint64_t processed, uint64_t finalized,
                                        uint64_t shred, bool health_ok = true) {
    return {{"getHealth", health_ok ? Result("\"ok\"") : Error(-32005)},
            {"getSlot_processed", Result(std::to_string(processed))},
            {"getSlot_finalized", Result(std::to_string(finalized))},
            {"getMaxShredInsertSlot", Result(std::to_string(shred))},
            {"getGenesisHash", Result(kMainnetHash)}};
}

class PollerTest : public ::testing::Test {
protected:
    explicit PollerTest(NetworkSettings settings = Mainnet())
        : net(1, settings),
          poller(net.network, 0, transport, clock,
                 [this](int level, const std::string& line) {
                     logs.push_back({level, line});
                 }) {}

    static NetworkSettings Mainnet() {
        NetworkSettings s;
        s.cluster = SG_CLUSTER_MAINNET_BETA;
        return s;
    }

    UpstreamRecord& slot() { return net.network.record(0); }

    // One 400 ms tick, answered by a node in the given state.
    void TickAnswered(const std::map<std::string, std::string>& node) {
        clock.Advance(400);
        poller.Tick();
        transport.AnswerAll(node);
    }

    int Count(int level, const std::string& needle) const {
        int n = 0;
        for (const auto& [l, line] : logs) {
            if (l == level && line.find(needle) != std::string::npos) n++;
        }
        return n;
    }

    TestNetwork net;
    FakeTransport transport;
    FakeClock clock;
    std::vector<std::pair<int, std::string>> logs;
    UpstreamPoller poller;
};

TEST_F(PollerTest, ColdPollerReadsHealthy) {
    poller.Evaluate();
    EXPECT_EQ(slot().Cordon().owner, CordonOwner::kNone);
    EXPECT_EQ(IngestionLag(net.network, 0), 0u);
}

TEST_F(PollerTest, FirstTickFansOutFourCallsAndChecksGenesis) {
    clock.Advance(400);
    poller.Tick();
    auto kinds = transport.CountKinds();
    EXPECT_EQ(kinds["getHealth"], 1);
    EXPECT_EQ(kinds["getSlot_processed"], 1);
    EXPECT_EQ(kinds["getSlot_finalized"], 1);
    EXPECT_EQ(kinds["getMaxShredInsertSlot"], 1);
    EXPECT_EQ(kinds["getGenesisHash"], 1);
    transport.AnswerAll(Node(1000, 968, 1001));
    EXPECT_EQ(slot().processed.load(), 1000u);
    EXPECT_EQ(slot().finalized.load(), 968u);
    EXPECT_EQ(slot().shred.load(), 1001u);
    EXPECT_EQ(slot().genesis.load(), static_cast<uint32_t>(GenesisCheck::kMatches));
    EXPECT_EQ(Count(kLogDebug, "bootstrapping svm state poller"), 1);
    EXPECT_EQ(Count(kLogDebug, "tickInterval=400ms debounce=400ms"), 1);

    TickAnswered(Node(1001, 969, 1002));
    EXPECT_EQ(slot().host.polls[kPollGetGenesisHash].load(), 1u);  // asked once
    EXPECT_EQ(slot().host.polls[kPollGetHealth].load(), 2u);
}

class LedgerWindowTest : public PollerTest {
protected:
    LedgerWindowTest() : PollerTest(WithWindow()) {}
    static NetworkSettings WithWindow() {
        NetworkSettings s = Mainnet();
        s.track_ledger_window = true;
        return s;
    }
};

TEST_F(PollerTest, LedgerWindowIsNotPolledWithoutCubeRunner) {
    clock.Advance(400);
    poller.Tick();
    EXPECT_EQ(transport.CountKinds()["getFirstAvailableBlock"], 0);
}

TEST_F(LedgerWindowTest, PolledEvery30SecondsRetriedAfterAFailure) {
    auto node = Node(1000, 968, 1001);
    node["getFirstAvailableBlock"] = Result("500");
    TickAnswered(node);
    EXPECT_EQ(slot().first_available_plus1.load(), 501u);
    EXPECT_EQ(slot().host.polls[kPollGetFirstAvailableBlock].load(), 1u);
    for (int i = 0; i < 74; i++) {  // 29.6 s more
        TickAnswered(node);
    }
    EXPECT_EQ(slot().host.polls[kPollGetFirstAvailableBlock].load(), 1u);
    node["getFirstAvailableBlock"] = Error(-32601);
    TickAnswered(node);           // 30 s: asked again, fails
    EXPECT_EQ(slot().host.polls[kPollGetFirstAvailableBlock].load(), 2u);
    EXPECT_EQ(slot().first_available_plus1.load(), 501u);  // kept
    for (int i = 0; i < 12; i++) {  // 4.8 s: not yet
        TickAnswered(node);
    }
    EXPECT_EQ(slot().host.polls[kPollGetFirstAvailableBlock].load(), 2u);
    node["getFirstAvailableBlock"] = Result("0");
    TickAnswered(node);           // 5 s after the failure
    EXPECT_EQ(slot().host.polls[kPollGetFirstAvailableBlock].load(), 3u);
    EXPECT_EQ(slot().first_available_plus1.load(), 1u);  // genesis
}

TEST_F(PollerTest, EachFailureIsIsolated) {
    clock.Advance(400);
    poller.Tick();
    auto node = Node(1000, 968, 1001);
    node.erase("getSlot_finalized");  // transport error for this one only
    transport.AnswerAll(node);
    EXPECT_EQ(slot().processed.load(), 1000u);
    EXPECT_EQ(slot().finalized.load(), 0u);
    EXPECT_EQ(slot().shred.load(), 1001u);
    EXPECT_EQ(slot().host.poll_errors[kPollGetSlotFinalized].load(), 1u);
    EXPECT_EQ(slot().host.poll_errors[kPollGetSlotProcessed].load(), 0u);
}

TEST_F(PollerTest, TickInsideTheDebounceWindowDoesNothing) {
    TickAnswered(Node(1000, 968, 1001));
    clock.Advance(100);
    poller.Tick();
    EXPECT_TRUE(transport.pending.empty());
    clock.Advance(300);  // 400 ms after the last fan-out
    poller.Tick();
    EXPECT_FALSE(transport.pending.empty());
}

TEST_F(PollerTest, TickWhileAFanOutIsOutDoesNothing) {
    clock.Advance(400);
    poller.Tick();
    size_t issued = transport.pending.size();
    clock.Advance(400);
    poller.Tick();
    EXPECT_EQ(transport.pending.size(), issued);
}

class SlowDebounceTest : public PollerTest {
protected:
    static NetworkSettings TwoSeconds() {
        NetworkSettings s = Mainnet();
        s.debounce_ms = 2000;
        return s;
    }
    SlowDebounceTest() : PollerTest(TwoSeconds()) {}
};

TEST_F(SlowDebounceTest, FixedTickerGatedFanOut) {
    int fanouts = 0;
    for (int tick = 0; tick < 25; tick++) {
        clock.Advance(400);
        poller.Tick();
        if (!transport.pending.empty()) fanouts++;
        transport.AnswerAll(Node(1000 + tick, 968, 1001 + tick));
    }
    EXPECT_EQ(fanouts, 5);  // 10 s of ticks, one fan-out per 2 s
}

// debounce= on one upstream: a metered vendor polled every 2 s while the
// network stays at 400 ms.
TEST(UpstreamDebounce, OneUpstreamPolledAtItsOwnPace) {
    auto shared = std::make_unique<NetworkShared>();
    Network network("m", {});
    size_t index = 0;
    ASSERT_FALSE(network.AddUpstreamArgs({"own", "http://a"}, &index));
    ASSERT_FALSE(network.AddUpstreamArgs({"vendor", "http://b", "debounce=2s"},
                                         &index));
    std::string error;
    ASSERT_TRUE(network.Bind(shared.get(), true, 0, &error));
    EXPECT_EQ(network.DebounceOf(0), 400u);
    EXPECT_EQ(network.DebounceOf(1), 2000u);
    // the guard margin follows the slowest voter
    EXPECT_EQ(network.GuardMarginOf({0}), 3u);
    EXPECT_EQ(network.GuardMarginOf({0, 1}), 7u);
    testing::FakeTransport transport;
    testing::FakeClock clock;
    int fanouts[2] = {0, 0};
    for (size_t u = 0; u < 2; u++) {
        UpstreamPoller poller(network, u, transport, clock,
                              [](int, const std::string&) {});
        for (int tick = 0; tick < 25; tick++) {
            clock.Advance(400);
            poller.Tick();
            if (!transport.pending.empty()) fanouts[u]++;
            transport.AnswerAll(Node(1000 + tick, 968, 1001 + tick));
        }
    }
    EXPECT_EQ(fanouts[0], 25);   // every 400 ms tick
    EXPECT_EQ(fanouts[1], 5);    // one fan-out per 2 s
}

TEST_F(PollerTest, TrafficGateSkipsGetSlotAtMostFourTicksInARow) {
    std::vector<bool> called_get_slot;
    for (int tick = 0; tick < 12; tick++) {
        clock.Advance(400);
        // live traffic keeps both views fresh
        slot().processed_seen_ms = clock.mono - 10;
        slot().finalized_seen_ms = clock.mono - 10;
        poller.Tick();
        auto kinds = transport.CountKinds();
        EXPECT_EQ(kinds["getHealth"], 1);
        EXPECT_EQ(kinds["getMaxShredInsertSlot"], 1);
        called_get_slot.push_back(kinds["getSlot_processed"] == 1);
        EXPECT_EQ(kinds["getSlot_processed"], kinds["getSlot_finalized"]);
        transport.AnswerAll(Node(1000 + tick, 968, 1001 + tick));
    }
    EXPECT_EQ(called_get_slot,
              (std::vector<bool>{false, false, false, false, true,
                                 false, false, false, false, true,
                                 false, false}));
    EXPECT_EQ(slot().host.gate_skipped_ticks.load(), 10u);
}

// Live traffic that stands in for the getSlot polls keeps the slots
// current, whatever the last poll found.
TEST_F(PollerTest, TrafficThatStandsInForPollsKeepsTheSlotsCurrent) {
    clock.Advance(400);
    poller.Tick();
    auto node = Node(1000, 968, 1001);
    node.erase("getSlot_processed");   // this poll fails
    transport.AnswerAll(node);
    EXPECT_FALSE(net.network.SlotsCurrent(0));
    clock.Advance(400);
    slot().processed_seen_ms = clock.mono - 10;
    slot().finalized_seen_ms = clock.mono - 10;
    poller.Tick();
    EXPECT_EQ(transport.CountKinds()["getSlot_processed"], 0);
    EXPECT_TRUE(net.network.SlotsCurrent(0));
}

TEST_F(PollerTest, TrafficGateNeedsBothViewsFresh) {
    for (int tick = 0; tick < 3; tick++) {
        clock.Advance(400);
        slot().processed_seen_ms = clock.mono - 10;  // latest only
        poller.Tick();
        EXPECT_EQ(transport.CountKinds()["getSlot_processed"], 1);
        transport.AnswerAll(Node(1000, 968, 1001));
    }
}

TEST_F(PollerTest, TrafficOlderThanTheDebounceWindowIsStale) {
    clock.Advance(400);
    slot().processed_seen_ms = clock.mono - 400;
    slot().finalized_seen_ms = clock.mono - 400;
    poller.Tick();
    EXPECT_EQ(transport.CountKinds()["getSlot_processed"], 1);
}

TEST_F(PollerTest, PollerResultsNeverOpenTheGate) {
    for (int tick = 0; tick < 3; tick++) {
        TickAnswered(Node(1000 + tick, 968, 1001 + tick));
    }
    EXPECT_EQ(slot().processed_seen_ms.load(), 0);
    EXPECT_EQ(slot().finalized_seen_ms.load(), 0);
    EXPECT_EQ(slot().host.gate_skipped_ticks.load(), 0u);
}

TEST_F(PollerTest, LagExactlyAtThresholdIsHealthy) {
    TickAnswered(Node(1000, 968, 1100));
    EXPECT_EQ(IngestionLag(net.network, 0), 100u);
    EXPECT_EQ(slot().Cordon().owner, CordonOwner::kNone);
}

TEST_F(PollerTest, LagAboveThresholdCordonsWithTheExactReason) {
    TickAnswered(Node(1000, 968, 1101));
    CordonState c = slot().Cordon();
    EXPECT_EQ(c.owner, CordonOwner::kPoller);
    EXPECT_EQ(c.cause, CordonCause::kShredLag);
    EXPECT_EQ(CordonReason(net.network, 0),
              "svm state poller: shred-insert lag 101 slots exceeds threshold "
              "100 (node ingests shreds but does not replay them)");
    ASSERT_EQ(Count(kLogWarn, "svm upstream unhealthy; cordoning out of rotation"), 1);
    EXPECT_EQ(Count(kLogWarn, "shredInsertSlot=1101 shredInsertSlotLag=101 "
                              "latestSlot=1000"), 1);
}

TEST_F(PollerTest, NegativeLagReadsAsZero) {
    TickAnswered(Node(1000, 968, 1000));
    slot().processed = 1500;  // a traffic suggestion got ahead
    EXPECT_EQ(IngestionLag(net.network, 0), 0u);
}

TEST_F(PollerTest, CordonAndUncordonAreEdgeTriggered) {
    TickAnswered(Node(1000, 968, 1001));
    // replay stalls: processed frozen, shreds keep arriving
    for (int tick = 1; tick <= 40; tick++) {
        TickAnswered(Node(1000, 968, 1001 + tick * 5));
    }
    EXPECT_EQ(slot().host.cordon_events.load(), 1u);
    EXPECT_EQ(Count(kLogWarn, "cordoning out of rotation"), 1);
    CordonState first = slot().Cordon();

    for (int tick = 0; tick < 40; tick++) {
        TickAnswered(Node(1300 + tick, 1268 + tick, 1301 + tick));
    }
    EXPECT_EQ(slot().Cordon().owner, CordonOwner::kNone);
    EXPECT_EQ(Count(kLogInfo, "svm upstream recovered; uncordoning"), 1);
    EXPECT_EQ(Count(kLogInfo, "reason=\"svm state poller: getHealth ok and "
                              "shred-insert lag back within threshold\""), 1);
    EXPECT_GT(first.since_wall_ms, 0);
}

TEST_F(PollerTest, GetHealthReasonWinsWhenBothHold) {
    TickAnswered(Node(1000, 968, 1500, /*health_ok=*/false));
    // the reason says what getHealth got: here the node's own -32005
    std::string reason = CordonReason(net.network, 0);
    EXPECT_EQ(reason.rfind("svm state poller: getHealth failed: HTTP ", 0), 0u)
        << reason;
    EXPECT_NE(reason.find("-32005"), std::string::npos) << reason;
}

TEST_F(PollerTest, GetHealthTransportErrorIsUnhealthy) {
    clock.Advance(400);
    poller.Tick();
    auto node = Node(1000, 968, 1001);
    node.erase("getHealth");
    transport.AnswerAll(node);
    EXPECT_EQ(slot().Cordon().cause, CordonCause::kUnhealthy);
    EXPECT_EQ(slot().host.poll_errors[kPollGetHealth].load(), 1u);
    // not "reported unhealthy": the node never answered
    EXPECT_EQ(CordonReason(net.network, 0).rfind(
                  "svm state poller: getHealth failed: ", 0), 0u)
        << CordonReason(net.network, 0);
}

// One upstream over https:// with the given tls_* settings, polled by a
// poller whose getHealth gets `health` and whose other calls a good node's
// answers; the cordon reason and the log lines it left.
struct TlsPoll {
    explicit TlsPoll(TlsSettings tls = {}, std::string tls_name = "")
        : shared(std::make_unique<NetworkShared>()),
          network("mainnet", {}) {
        UpstreamConf u("vendor", {"https://127.0.0.1:8443/", "", "", ""});
        u.poll.tls = std::move(tls);
        u.tls_name = std::move(tls_name);
        network.AddUpstream(u);
        std::string error;
        network.Bind(shared.get(), true, 0, &error);
    }

    std::string ReasonAfter(const HttpResult& health) {
        UpstreamPoller poller(network, 0, transport, clock,
                              [this](int level, const std::string& line) {
                                  if (level == kLogWarn) warnings += line + "\n";
                              });
        clock.Advance(400);
        poller.Tick();
        auto node = Node(1000, 968, 1001);
        transport.AnswerEach([&](const FakeTransport::Pending& p) {
            if (FakeTransport::Kind(p.body) == "getHealth") return health;
            HttpResult ok;
            ok.http_status = 200;
            ok.body = node[FakeTransport::Kind(p.body)];
            return ok;
        });
        return CordonReason(network, 0);
    }

    std::unique_ptr<NetworkShared> shared;
    Network network;
    FakeTransport transport;
    FakeClock clock;
    std::string warnings;
};

HttpResult Failed(int curl_code, std::string text) {
    HttpResult r;
    r.transport_error = curl_code;
    r.error_text = std::move(text);
    return r;
}

HttpResult Answered(long status, std::string body) {
    HttpResult r;
    r.http_status = status;
    r.body = std::move(body);
    return r;
}

constexpr const char* kUnknownIssuer =
    "SSL certificate problem: unable to get local issuer certificate";

TEST(PollerTls, AnUntrustedCertificateIsNamedTlsWithTheOptionNotSet) {
    TlsPoll poll;
    EXPECT_EQ(poll.ReasonAfter(Failed(60, kUnknownIssuer)),
              std::string("svm state poller: getHealth failed: TLS: ") +
                  kUnknownIssuer + " (tls_trusted_certificate not set)");
    // the warn lines say it too: the failed getHealth and the cordon
    EXPECT_NE(poll.warnings.find(
                  "getHealth failed: network=mainnet upstream=vendor TLS: "
                  "SSL certificate problem"),
              std::string::npos)
        << poll.warnings;
    EXPECT_NE(poll.warnings.find(
                  "reason=\"svm state poller: getHealth failed: TLS: SSL "
                  "certificate problem"),
              std::string::npos)
        << poll.warnings;
}

TEST(PollerTls, TheHintIsGivenOnlyWhereItHelps) {
    TlsSettings trusted;
    trusted.trusted_pem = "-----BEGIN CERTIFICATE-----";
    EXPECT_EQ(TlsPoll(trusted).ReasonAfter(Failed(60, kUnknownIssuer)),
              std::string("svm state poller: getHealth failed: TLS: ") +
                  kUnknownIssuer);
    const std::string mismatch =
        "SSL: no alternative certificate subject name matches target host "
        "name '127.0.0.1'";
    EXPECT_EQ(TlsPoll().ReasonAfter(Failed(60, mismatch)),
              "svm state poller: getHealth failed: TLS: " + mismatch +
                  " (tls_name not set)");
    EXPECT_EQ(TlsPoll({}, "rpc.test").ReasonAfter(Failed(60, mismatch)),
              "svm state poller: getHealth failed: TLS: " + mismatch);
    // a handshake that fails for no certificate of ours: no hint
    const std::string version =
        "OpenSSL/3.0.19: error:0A00010B:SSL routines::wrong version number";
    EXPECT_EQ(TlsPoll().ReasonAfter(Failed(35, version)),
              "svm state poller: getHealth failed: TLS: " + version);
}

TEST(PollerTls, AClientCertificateTheUpstreamWantsIsNamed) {
    // TLS 1.3: the upstream's alert comes with the first read
    const std::string alert =
        "OpenSSL SSL_read: error:0A00045C:SSL routines::tlsv13 alert "
        "certificate required, errno 0";
    EXPECT_EQ(TlsPoll().ReasonAfter(Failed(56, alert)),
              "svm state poller: getHealth failed: TLS: " + alert +
                  " (tls_certificate not set)");
    // nginx's ssl_verify_client answers HTTP 400 instead
    const std::string page =
        "<html>\r\n<head><title>400 No required SSL certificate was "
        "sent</title></head>\r\n<body>\r\n";
    EXPECT_EQ(TlsPoll().ReasonAfter(Answered(400, page)),
              "svm state poller: getHealth failed: TLS: HTTP 400 \"No "
              "required SSL certificate was sent\" (tls_certificate not set)");
    TlsSettings client;
    client.certificate_pem = "-----BEGIN CERTIFICATE-----";
    client.certificate_key_pem = "-----BEGIN PRIVATE KEY-----";
    EXPECT_EQ(TlsPoll(client).ReasonAfter(Answered(
                  400, "<title>400 The SSL certificate error</title>")),
              "svm state poller: getHealth failed: TLS: HTTP 400 \"The SSL "
              "certificate error\"");
}

TEST(PollerTls, OtherFailuresStayAsTheyWere) {
    EXPECT_EQ(TlsPoll().ReasonAfter(Failed(7, "Failed to connect")),
              "svm state poller: getHealth failed: transport error 7: Failed "
              "to connect");
    // a reset connection is not TLS's doing, even under TLS
    EXPECT_EQ(TlsPoll().ReasonAfter(Failed(
                  56, "OpenSSL SSL_read: Connection reset by peer, errno 104")),
              "svm state poller: getHealth failed: transport error 56: "
              "OpenSSL SSL_read: Connection reset by peer, errno 104");
    EXPECT_EQ(TlsPoll().ReasonAfter(Answered(400, "bad request")),
              "svm state poller: getHealth failed: HTTP 400: bad request");
}

TEST_F(PollerTest, OperatorCordonSurvivesRecovery) {
    slot().cordon_note.Write("maintenance");
    ASSERT_TRUE(slot().SwapCordon(CordonOwner::kNone,
                                  {CordonOwner::kOperator,
                                   CordonCause::kOperator, 1}));
    TickAnswered(Node(1000, 968, 1500));  // unhealthy: poller leaves it
    for (int tick = 0; tick < 10; tick++) {
        TickAnswered(Node(1600 + tick, 1568, 1601 + tick));
    }
    EXPECT_EQ(slot().Cordon().owner, CordonOwner::kOperator);
    EXPECT_EQ(CordonReason(net.network, 0), "maintenance");
    EXPECT_EQ(Count(kLogInfo, "uncordoning"), 0);
    EXPECT_EQ(Count(kLogWarn, "cordoning"), 0);
}

TEST_F(PollerTest, GenesisMismatchCordonsAndSticks) {
    auto devnet = Node(1000, 968, 1001);
    devnet["getGenesisHash"] = Result("\"EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG\"");
    TickAnswered(devnet);
    EXPECT_EQ(slot().Cordon().cause, CordonCause::kGenesis);
    EXPECT_EQ(CordonReason(net.network, 0),
              "svm state poller: genesis hash "
              "EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG is not "
              "mainnet-beta's (5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d)");
    for (int tick = 0; tick < 5; tick++) {
        TickAnswered(Node(1001 + tick, 969, 1002 + tick));
    }
    EXPECT_EQ(slot().Cordon().owner, CordonOwner::kPoller);
}

TEST(NetworkPoller, OneProcessPollsEachUpstream) {
    TestNetwork net(2);
    FakeClock clock;
    FakeTransport t1, t2;
    auto quiet = [](int, const std::string&) {};
    auto p1 = std::make_unique<NetworkPoller>(net.network, t1, clock, quiet, 101);
    NetworkPoller p2(net.network, t2, clock, quiet, 202);

    clock.Advance(400);
    p1->Tick();
    p2.Tick();
    EXPECT_EQ(t1.pending.size(), 8u);  // 4 calls x 2 upstreams
    EXPECT_TRUE(t2.pending.empty());
    t1.AnswerAll(Node(1000, 968, 1001));

    p1.reset();  // graceful exit releases the leases
    clock.Advance(400);
    p2.Tick();
    EXPECT_EQ(t2.pending.size(), 8u);
}

// A node that stops answering keeps its last slot: the lag that grows
// from it is no lag (it is down, as its cordon says), so it is neither
// logged as lagging nor kept in its lag history; back and behind, it is.
TEST(NetworkPoller, ANodeThatIsDownHasNoLag) {
    TestNetwork net(2);
    FakeClock clock;
    FakeTransport t;
    std::vector<std::string> logs;
    NetworkPoller poller(net.network, t, clock,
                         [&](int, const std::string& line) {
                             logs.push_back(line);
                         },
                         101);
    const std::string down_url = net.network.upstream(1).poll.url;
    // one tick: upstream 0 at `head`; upstream 1 down, or at `second`
    auto tick = [&](uint64_t head, std::optional<uint64_t> second) {
        clock.Advance(400);
        poller.Tick();
        t.AnswerEach([&](const FakeTransport::Pending& p) {
            HttpResult r;
            bool other = p.url == down_url;
            if (other && !second) {
                r.transport_error = 7;
                r.error_text = "connection refused";
                return r;
            }
            uint64_t slot = other ? *second : head;
            r.http_status = 200;
            r.body = Node(slot, slot - 32, slot + 1)[FakeTransport::Kind(p.body)];
            return r;
        });
    };
    auto lagging_lines = [&] {
        int n = 0;
        for (const std::string& line : logs) {
            n += line.find("upstream lagging") != std::string::npos;
        }
        return n;
    };
    tick(1000, 1000);
    EXPECT_TRUE(net.network.SlotsCurrent(1));
    for (uint64_t head = 1010; head <= 1200; head += 10) {
        tick(head, std::nullopt);
    }
    EXPECT_FALSE(net.network.SlotsCurrent(1));
    EXPECT_GT(net.network.SlotLagInNetwork(1), 20u);   // its last slot's
    EXPECT_FALSE(net.network.LaggingInNetwork(1));
    EXPECT_EQ(lagging_lines(), 0);
    EXPECT_EQ(net.network.host(1).lagging.load(), 0u);

    tick(1210, 1210);   // back, current
    EXPECT_TRUE(net.network.SlotsCurrent(1));
    EXPECT_FALSE(net.network.LaggingInNetwork(1));
    EXPECT_EQ(lagging_lines(), 0);

    tick(1300, 1220);   // answering, and behind: lagging
    EXPECT_TRUE(net.network.LaggingInNetwork(1));
    tick(1310, 1230);   // (a tick judges what the one before it learned)
    EXPECT_EQ(lagging_lines(), 1);
}

// In a fleet, a node another host polls has the slots the fleet shares:
// what this host's own polls found before does not stand.
// Whether the slot polls of a node another host polls fail is that host's
// word (FleetSync::TakeViews sets it): this host's poller leaves it, and
// notes no lag for a node whose polls fail there.
TEST(NetworkPoller, ANodeAnotherHostPollsHasTheFleetsWordOnItsSlots) {
    TestNetwork net(2);
    FakeClock clock;
    FakeTransport t;
    std::vector<std::string> lines;
    NetworkPoller poller(net.network, t, clock,
                         [&](int, const std::string& line) {
                             lines.push_back(line);
                         },
                         101);
    poller.SetGate([&](size_t, int64_t) { return false; });  // all another's
    // the fleet's views: up-1 frozen 500 behind, its polls failing there
    for (size_t i = 0; i < 2; i++) {
        net.network.slots().Suggest(i, kSlotProcessed, 2000);
        net.network.slots().Observe(i, i == 0 ? 2000 : 1500);
    }
    net.network.host(1).slot_polls_failing = 1;
    for (int k = 0; k < 3; k++) {
        clock.Advance(400);
        poller.Tick();
    }
    EXPECT_TRUE(t.pending.empty()) << "this host polls neither";
    EXPECT_FALSE(net.network.SlotsCurrent(1));
    EXPECT_FALSE(net.network.LaggingInNetwork(1));
    EXPECT_EQ(net.network.host(1).lagging.load(), 0u);
    for (const std::string& line : lines) {
        EXPECT_EQ(line.find("lagging"), std::string::npos) << line;
    }
    // the polling host's polls succeed again: its word changes, and now
    // the node's lag (still 500) is noted here too
    net.network.host(1).slot_polls_failing = 0;
    clock.Advance(400);
    poller.Tick();
    EXPECT_TRUE(net.network.LaggingInNetwork(1));
    EXPECT_EQ(net.network.host(1).lagging.load(), 1u);
}

TEST(NetworkPoller, CrashedHolderIsReplacedAfterTheLeaseExpires) {
    TestNetwork net(1);
    FakeClock clock;
    FakeTransport t1, t2;
    auto quiet = [](int, const std::string&) {};
    NetworkPoller p2(net.network, t2, clock, quiet, 202);
    ClaimLease(net.network.record(0).lease, 101, clock.mono, kLeaseTtlMs);

    clock.Advance(400);
    p2.Tick();
    EXPECT_TRUE(t2.pending.empty());
    clock.Advance(kLeaseTtlMs);
    p2.Tick();
    EXPECT_EQ(t2.pending.size(), 4u);
}

}  // namespace
}  // namespace solgate
