#include "blocks/long_term_retriever.h"

#include <cmath>

#include "blocks/block_capture.h"
#include "blocks/block_sync.h"
#include "blocks/block_variant.h"
#include "slots/poll_reply.h"

namespace solgate {

LongTermRetriever::LongTermRetriever(BlockService& service,
                                     Transport& transport, Clock& clock,
                                     LogSink log, uint32_t pid)
    : service_(service),
      transport_(transport),
      clock_(clock),
      log_(std::move(log)),
      pid_(pid) {}

LongTermRetriever::~LongTermRetriever() {
    if (!service_.bound()) {
        return;
    }
    for (size_t p = 0; p < service_.conf().plans.size(); p++) {
        ReleaseLease(service_.shared().retrieval_lease[p], pid_);
    }
}

uint32_t LongTermRetriever::MaxInFlight(size_t plan) const {
    double rate = service_.conf().plans[plan].retrieval_rate;
    double n = std::ceil(rate * kRetrievalTimeoutMs / 1000.0);
    return static_cast<uint32_t>(std::clamp(n, 1.0, 1024.0));
}

void LongTermRetriever::Tick() {
    if (!service_.bound() || service_.store() == nullptr) {
        return;
    }
    int64_t now = clock_.MonotonicMs();
    for (size_t p = 0; p < service_.conf().plans.size(); p++) {
        RetrievalQueueShared* queue = service_.Queue(p);
        if (queue == nullptr ||
            !ClaimLease(service_.shared().retrieval_lease[p], pid_, now,
                        kLeaseTtlMs)) {
            continue;
        }
        BlockService::RepeatLookup lookup{&service_, clock_.WallMs()};
        std::optional<Retrieval> next = NextRetrieval(
            queue, now, service_.conf().plans[p].retrieval_rate,
            MaxInFlight(p), kRetrievalStaleMs,
            RepeatFn{&BlockService::RepeatCountOf, &lookup});
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
    const auto& urls = service_.conf().long_term_urls;
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
        if (StoreAnswer(service_, call, reply.body, clock_.WallMs(), &why)) {
            stored_++;
            service_.CompleteLongTerm(job->plan, r, true,
                                      clock_.MonotonicMs(), clock_.WallMs());
            return;
        }
    }
    const auto& urls = service_.conf().long_term_urls;
    std::string url = job->endpoint < urls.size() ? urls[job->endpoint] : "";
    log_(kLogWarn, "solgate blocks: long-term storage " + url +
                       " did not return slot " + std::to_string(r.slot) +
                       " (" + r.variant + "): " + why);
    if (++job->endpoint < urls.size()) {
        Fetch(job);   // the same retrieval, never a second one
        return;
    }
    failed_++;
    service_.CompleteLongTerm(job->plan, r, false, clock_.MonotonicMs(),
                              clock_.WallMs());
}

}  // namespace solgate
