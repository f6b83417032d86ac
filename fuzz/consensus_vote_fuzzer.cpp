// What an answer votes for in a consensus: defined for any bytes, and the
// same for the same answer.
#include "fuzz_common.h"
#include "json/consensus_vote.h"

using namespace solgate;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view answer = fuzz::Text(data, size);
    auto a = ConsensusVote(answer);
    auto b = ConsensusVote(answer);
    if (a != b) {
        fuzz::Fail("an answer always votes the same");
    }
    if (a && a->rfind("r:", 0) != 0 && a->rfind("e:", 0) != 0) {
        fuzz::Fail("a vote is a result or an error code");
    }
    return 0;
}
