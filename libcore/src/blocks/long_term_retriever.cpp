#include "blocks/long_term_retriever.h"

#include <cmath>

#include "blocks/block_capture.h"
#include "blocks/block_sync.h"
#include "blocks/block_variant.h"
#include "slots/poll_reply.h"

namespace solgate {

LongTermRetriever::LongTermRetriever(LongTermQueues& queues,
                                     CaptureSink& sink, Transport& transport,
                                     Clock& clock, LogSink log, uint32_t pid)
    : queues_(queues),
      sink_(sink),
      transport_(transport),
      clock_(clock),
      log_(std::move(log)),
      pid_(pid) {}

LongTermRetriever::~LongTermRetriever() {
    for (size_t p = 0; p < queues_.conf().plans().size(); p++) {
        queues_.ReleaseRetrievals(p, pid_);
    }
}

uint32_t LongTermRetriever::MaxInFlight(size_t plan) const {
    double rate = queues_.conf().plans()[plan].retrieval_rate;
    double n = std::ceil(rate * kRetrievalTimeoutMs / 1000.0);
    return static_cast<uint32_t>(std::clamp(n, 1.0, 1024.0));
}

void LongTermRetriever::Tick() {
    if (!queues_.bound() || !sink_.Open()) {
        return;
    }
    int64_t now = clock_.MonotonicMs();
    for (size_t p = 0; p < queues_.conf().plans().size(); p++) {
        if (!queues_.HasQueue(p) ||
            !queues_.ClaimRetrievals(p, pid_, now, kLeaseTtlMs)) {
            continue;
        }
        std::optional<Retrieval> next =
            queues_.Next(p, now, clock_.WallMs(), MaxInFlight(p),
                         kRetrievalStaleMs);
        if (next) {
            auto job = std::make_shared<Job>();
            job->plan = p;
            job->retrieval = std::move(*next);
            started_++;
            Fetch(job);
        }
    }
}

void LongTermRetriever::Fetch(std::shared_ptr<Job> job) {
    const auto& urls = queues_.conf().long_term_urls();
    std::optional<std::string> body = BlockRequestBody(
        job->retrieval.slot, job->retrieval.variant, "1");
    if (!body || job->endpoint >= urls.size()) {
        OnReply(job, HttpResult{1, "no request for this variant", 0, ""});
        return;
    }
    HttpTarget target = BlocksHttpTarget(urls[job->endpoint],
                                         kMaxRetrievalBytes);
    std::weak_ptr<char> alive = alive_;
    transport_.Post(target, std::move(*body), kRetrievalTimeoutMs,
                    [this, alive, job](HttpResult reply) {
                        if (!alive.expired()) {
                            OnReply(job, reply);
                        }
                    });
}

void LongTermRetriever::OnReply(std::shared_ptr<Job> job,
                                const HttpResult& reply) {
    const Retrieval& r = job->retrieval;
    std::string why = HttpFailure(reply);
    if (why.empty()) {
        BlockCall call;
        call.slot = r.slot;
        call.variant = r.variant;
        call.source = kSourceLongTerm;
        if (StoreAnswer(sink_, call, reply.body, clock_.WallMs(), &why)) {
            stored_++;
            queues_.Complete(job->plan, r, true, clock_.MonotonicMs(),
                             clock_.WallMs());
            return;
        }
    }
    const auto& urls = queues_.conf().long_term_urls();
    std::string url = job->endpoint < urls.size() ? urls[job->endpoint] : "";
    log_(kLogWarn, "solgate blocks: long-term storage " + url +
                       " did not return slot " + std::to_string(r.slot) +
                       " (" + r.variant + "): " + why);
    if (++job->endpoint < urls.size()) {
        Fetch(job);   // the same retrieval, never a second one
        return;
    }
    failed_++;
    queues_.Complete(job->plan, r, false, clock_.MonotonicMs(),
                     clock_.WallMs());
}

}  // namespace solgate
