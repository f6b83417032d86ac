// The words of the directives libcore reads: upstream, plan_define and the
// failsafe policies. Each is taken or refused with a message.
#include "blocks/block_plans.h"
#include "conf/failsafe_args.h"
#include "conf/upstream_args.h"
#include "fuzz_common.h"
#include "routing/network.h"

using namespace solgate;

// Relative tls_* files resolve under a directory that does not exist, so the
// fuzzer reads no file of the machine it runs on.
constexpr std::string_view kNoConfPrefix = "/nonexistent-solgate-fuzz/";

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) {
        return 0;
    }
    std::vector<std::string_view> words =
        fuzz::Words(fuzz::Text(data + 1, size - 1));
    switch (data[0] % 6) {
    case 0: {
        conf::UpstreamArgs out;
        auto error = conf::ParseUpstreamArgs(
            words, [](std::string_view) { return std::nullopt; },
            kNoConfPrefix, &out);
        if (error && error->empty()) fuzz::Fail("a refusal says why");
        break;
    }
    case 1: {
        if (words.empty()) break;
        BlockPlan plan;
        std::vector<std::string_view> args(words.begin() + 1, words.end());
        auto error = ParsePlanDefine(words[0], args, &plan);
        if (error && error->empty()) fuzz::Fail("a refusal says why");
        break;
    }
    case 2: {
        conf::Consensus c;
        auto error = conf::ParseConsensus(words, &c);
        if (!error && c.agreement > c.participants) {
            fuzz::Fail("agreement never exceeds participants");
        }
        break;
    }
    case 3: {
        conf::Hedge h;
        (void) conf::ParseHedge(words, &h);
        break;
    }
    case 4: {
        conf::RetryMissingData r;
        (void) conf::ParseRetryMissingData(words, &r);
        conf::Broadcast b;
        (void) conf::ParseBroadcast(words, &b);
        break;
    }
    default: {
        if (words.empty()) break;
        std::vector<std::string_view> args(words.begin() + 1, words.end());
        (void) Network::CheckPolicy(words[0], args);
        break;
    }
    }
    return 0;
}
