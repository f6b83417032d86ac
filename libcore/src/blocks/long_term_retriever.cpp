#include "blocks/long_term_retriever.h"

#include <algorithm>
#include <climits>
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
    if (region_ != nullptr) {
        // what the store has not heard yet goes first: a failure told
        // late must never undo a claim made after it
        FinishUnfinished();
    }
    bool retrieves = false;
    for (size_t p = 0; p < queues_.conf().plans().size(); p++) {
        if (!queues_.HasQueue(p) ||
            !queues_.ClaimRetrievals(p, pid_, now, kLeaseTtlMs)) {
            continue;
        }
        retrieves = true;
        StartPlan(p, now);
    }
    if (region_ != nullptr) {
        AskWaiting(now);
        if (retrieves) {
            ReadRegionCounts(now);
        }
    }
}

void LongTermRetriever::ReadRegionCounts(int64_t now_ms) {
    if (!region_->Up() ||
        !reading_counts_.Start(now_ms, kRegionCountsEveryMs)) {
        return;
    }
    int64_t wall_ms = clock_.WallMs();
    std::weak_ptr<char> alive = alive_;
    region_->ReadCounts(
        wall_ms,
        [this, alive, wall_ms](
            std::optional<std::vector<std::pair<std::string, uint64_t>>>
                used) {
            if (alive.expired()) {
                return;
            }
            reading_counts_.Done();
            if (used) {
                // any plan's: the counts are per key
                queues_.TakeRegionCounts(*used, wall_ms);
            }
        });
}

void LongTermRetriever::StartPlan(size_t plan, int64_t now_ms) {
    Lead lead = Lead::kThis;   // one host: its queue is the region's
    if (region_ != nullptr) {
        if (leads_.size() < queues_.conf().plans().size()) {
            leads_.resize(queues_.conf().plans().size());
        }
        AskLead(plan, now_ms);
        lead = leads_[plan].lead;
    }
    switch (lead) {
    case Lead::kUnknown:
        return;   // nothing handed out before the leader is known
    case Lead::kThis: {
        if (region_ != nullptr) {
            TakeForwarded(plan, now_ms);
        }
        std::optional<Retrieval> next =
            queues_.Next(plan, now_ms, clock_.WallMs(), MaxInFlight(plan),
                         kRetrievalStaleMs);
        if (next) {
            Start(plan, std::move(*next), now_ms, false);
        }
        return;
    }
    case Lead::kOther:
        // what is queued here goes to the leader's queue at once
        for (int i = 0; i < kRegionForwardsPerTick; i++) {
            std::optional<Retrieval> next = queues_.NextToForward(
                plan, now_ms, clock_.WallMs(), kRetrievalStaleMs);
            if (!next) {
                break;
            }
            Start(plan, std::move(*next), now_ms, true);
        }
        return;
    }
}

void LongTermRetriever::AskLead(size_t plan, int64_t now_ms) {
    if (!leads_[plan].asking.Start(now_ms, kRegionLeadEveryMs)) {
        return;
    }
    std::weak_ptr<char> alive = alive_;
    region_->Lead(
        plan, kRegionLeadTtlMs,
        [this, alive, plan](std::optional<RegionRetrievals::LeadState> now) {
            if (alive.expired()) {
                return;
            }
            PlanLead& l = leads_[plan];
            l.asking.Done();
            Lead lead = !now ? Lead::kUnknown
                        : now->mine ? Lead::kThis
                                    : Lead::kOther;
            std::string leader = now ? now->leader : "";
            // another host taking over from a third is a change too: what
            // was forwarded to the one before goes to the new one
            if (lead != l.lead || leader != l.leader) {
                l.lead = lead;
                l.leader = std::move(leader);
                l.epoch++;
            }
        });
}

void LongTermRetriever::TakeForwarded(size_t plan, int64_t now_ms) {
    if (!leads_[plan].taking.Start(now_ms, kRegionTakeEveryMs)) {
        return;
    }
    std::weak_ptr<char> alive = alive_;
    region_->TakeForwarded(
        plan, kRegionTakeMax,
        [this, alive, plan](std::optional<std::vector<RegionAsk>> asks) {
            if (alive.expired()) {
                return;
            }
            leads_[plan].taking.Done();
            if (!asks) {
                return;
            }
            int64_t now = clock_.MonotonicMs();
            int64_t wall = clock_.WallMs();
            for (const RegionAsk& ask : *asks) {
                if (HeldInRegion(ask.slot, ask.variant)) {
                    continue;   // asked before its host heard it is done
                }
                queues_.AdmitForwarded(plan, ask.slot, ask.variant, ask.keys,
                                       now, wall);
            }
        });
}

void LongTermRetriever::Start(size_t plan, Retrieval retrieval,
                              int64_t now_ms, bool forward) {
    auto job = std::make_shared<Job>();
    job->plan = plan;
    job->retrieval = std::move(retrieval);
    if (region_ == nullptr) {
        started_++;
        Fetch(job);
        return;
    }
    const BlockPlan& p = queues_.conf().plans()[plan];
    job->ask.token = std::to_string(pid_) + "/" + std::to_string(++claims_);
    job->ask.plan = plan;
    job->ask.slot = job->retrieval.slot;
    job->ask.variant = job->retrieval.variant;
    job->ask.allowance = p.monthly_allowance;
    job->ask.rate = p.retrieval_rate;
    job->ask.wall_ms = clock_.WallMs();
    job->ask_at_ms = now_ms;
    if (forward) {
        job->ask.keys = queues_.WaiterKeys(plan, job->retrieval);
        Forward(job, now_ms);
        AskAgainLater(job, kRegionPeekEveryMs);
        return;
    }
    AskRegion(job);
}

void LongTermRetriever::Forward(const std::shared_ptr<Job>& job,
                                int64_t now_ms) {
    job->forwarded = true;
    job->forwarded_ms = now_ms;
    job->forwarded_keys = job->ask.keys.size();
    job->forwarded_lead = leads_[job->plan].epoch;
    region_->Forward(job->ask);
}

void LongTermRetriever::PeekForwarded(std::vector<std::shared_ptr<Job>> jobs) {
    std::vector<RegionAsk> asks;
    for (const auto& job : jobs) {
        asks.push_back(job->ask);
    }
    std::weak_ptr<char> alive = alive_;
    region_->Peek(asks, [this, alive, jobs = std::move(jobs)](
                            std::optional<std::vector<std::string>> states) {
        if (alive.expired()) {
            return;
        }
        for (size_t i = 0; i < jobs.size(); i++) {
            OnPeek(jobs[i], states ? std::optional<std::string>((*states)[i])
                                   : std::nullopt);
        }
    });
}

void LongTermRetriever::OnPeek(std::shared_ptr<Job> job,
                               const std::optional<std::string>& state) {
    if (!state) {
        AskAgainLater(job, kRegionPeekEveryMs);   // the store did not answer
        return;
    }
    if (*state == "done") {
        DoneElsewhere(job);
        return;
    }
    if (!state->empty()) {
        // being retrieved: from now on claimed, which counts the keys that
        // joined here and takes the block over should its holder die
        job->forwarded = false;
        AskRegion(job);
        return;
    }
    if (queues_.AllSpent(job->plan, job->ask.keys, job->ask.wall_ms)) {
        // not claimed, and nobody here may have it (the region's counts
        // say so): the clients' next requests are told. (A block claimed
        // for them counted them: it is seen through, above.)
        End(job, true, RetrievalEnd::kOtherHost);
        return;
    }
    int64_t now = clock_.MonotonicMs();
    if (job->ask.keys.size() > job->forwarded_keys ||
        job->forwarded_lead != leads_[job->plan].epoch ||
        now - job->forwarded_ms >= kRegionForwardAgainMs) {
        Forward(job, now);
    }
    AskAgainLater(job, kRegionPeekEveryMs);
}

int64_t LongTermRetriever::ClaimTtlMs() const {
    // every endpoint may take its whole timeout, then the store's answer
    return static_cast<int64_t>(kRetrievalTimeoutMs) *
               static_cast<int64_t>(queues_.conf().long_term().size()) +
           10000;
}

void LongTermRetriever::AskRegion(std::shared_ptr<Job> job) {
    // the waiters as they are now: those who joined since the hand-out
    // are counted too
    job->ask.keys = queues_.WaiterKeys(job->plan, job->retrieval);
    if (job->ask.keys.empty()) {
        return;   // handed out again since: that retrieval goes on
    }
    job->ask.wall_ms = clock_.WallMs();   // counted in the month of now
    std::weak_ptr<char> alive = alive_;
    // asked again while another retrieval holds the block, the claim
    // counts the keys that joined here since and says whether it is done
    region_->Claim(job->ask, ClaimTtlMs(),
                   [this, alive, job](RegionClaim claim) {
                       if (!alive.expired()) {
                           OnClaim(job, claim);
                       }
                   });
}

void LongTermRetriever::OnClaim(std::shared_ptr<Job> job,
                                const RegionClaim& claim) {
    if (claim.kind != RegionClaim::kWait &&
        claim.kind != RegionClaim::kDown) {
        std::vector<std::pair<std::string, uint64_t>> used;
        std::vector<std::string> in_claim;
        size_t counted = 0;
        for (size_t i = 0; i < job->ask.keys.size(); i++) {
            used.emplace_back(job->ask.keys[i], claim.used[i]);
            counted += claim.counted[i] ? 1 : 0;
            if (claim.in_claim[i]) {
                in_claim.push_back(job->ask.keys[i]);
            }
        }
        // the counts first: in between, a key is charged twice (refused
        // early), never not at all (admitted past its allowance)
        queues_.TakeRegionCounts(used, job->ask.wall_ms);
        queues_.MarkCountedInRegion(job->plan, job->retrieval, in_claim);
        queues_.CountedInRegion(job->plan, counted);
    }
    switch (claim.kind) {
    case RegionClaim::kMine:
        started_++;
        Fetch(job);
        return;
    case RegionClaim::kElsewhere:
        AskAgainLater(job, kRegionAskAgainMs);
        return;
    case RegionClaim::kDone:
        DoneElsewhere(job);
        return;
    case RegionClaim::kSpent:
        // nobody here may have it: it leaves this host's queue (a spent
        // key's next request is told so from the counts just taken)
        End(job, true, RetrievalEnd::kOtherHost);
        return;
    case RegionClaim::kWait:
        AskAgainLater(job, claim.wait_ms);
        return;
    case RegionClaim::kDown:
        AskAgainLater(job, kRegionAskAgainMs);
        return;
    }
}

void LongTermRetriever::AskAgainLater(std::shared_ptr<Job> job,
                                      int64_t after_ms) {
    job->ask_at_ms = clock_.MonotonicMs() + std::max<int64_t>(after_ms, 0);
    waiting_.push_back(std::move(job));
}

void LongTermRetriever::AskWaiting(int64_t now_ms) {
    std::vector<std::shared_ptr<Job>> due;
    std::vector<std::shared_ptr<Job>> later;
    for (auto& job : waiting_) {
        (job->ask_at_ms <= now_ms ? due : later).push_back(std::move(job));
    }
    waiting_ = std::move(later);
    std::vector<std::shared_ptr<Job>> peeks;
    for (auto& job : due) {
        if (job->done_elsewhere_ms != 0) {
            DoneElsewhere(job);
            continue;
        }
        if (job->forwarded && LeadOf(job->plan) == Lead::kThis) {
            // this host leads now: its queue orders what it had forwarded
            Requeue(job);
            continue;
        }
        if (!job->forwarded) {
            AskRegion(job);   // may come back to waiting_ at once
            continue;
        }
        job->ask.keys = queues_.WaiterKeys(job->plan, job->retrieval);
        if (job->ask.keys.empty()) {
            continue;   // handed out again since: that one goes on
        }
        job->ask.wall_ms = clock_.WallMs();
        peeks.push_back(std::move(job));
        if (peeks.size() == kRegionPeekMax) {
            PeekForwarded(std::move(peeks));
            peeks.clear();
        }
    }
    if (!peeks.empty()) {
        PeekForwarded(std::move(peeks));
    }
}

LongTermRetriever::Lead LongTermRetriever::LeadOf(size_t plan) const {
    return plan < leads_.size() ? leads_[plan].lead : Lead::kUnknown;
}

void LongTermRetriever::FinishUnfinished() {
    if (!unfinished_.empty() && region_->Up()) {
        std::vector<Unfinished> again = std::move(unfinished_);
        unfinished_.clear();
        for (Unfinished& u : again) {
            FinishRegion(std::move(u.ask), u.ok);
        }
    }
}

void LongTermRetriever::FinishRegion(RegionAsk ask, bool ok) {
    std::weak_ptr<char> alive = alive_;
    auto retry = std::make_shared<RegionAsk>(ask);
    region_->Finish(
        ask, ok,
        [this, alive, retry,
         ok](std::optional<RegionRetrievals::Finished> finished) {
            if (alive.expired()) {
                return;
            }
            if (!finished) {
                // told again when the store is back, so that the claim is
                // not left to expire (others would retrieve it again)
                if (unfinished_.size() < kMaxUnfinished) {
                    unfinished_.push_back({std::move(*retry), ok});
                }
                return;
            }
            queues_.TakeRegionCounts(finished->used, retry->wall_ms);
            queues_.CountedInRegion(retry->plan, finished->counted);
        });
}

void LongTermRetriever::DoneElsewhere(std::shared_ptr<Job> job) {
    int64_t now = clock_.MonotonicMs();
    if (job->done_elsewhere_ms == 0) {
        job->done_elsewhere_ms = now;
    }
    if (!held_in_region_ ||
        HeldInRegion(job->retrieval.slot, job->retrieval.variant) ||
        now - job->done_elsewhere_ms >= kRegionPeerWaitMs) {
        End(job, true, RetrievalEnd::kOtherHost);
        return;
    }
    AskAgainLater(job, kRegionAskAgainMs);
}

bool LongTermRetriever::HeldInRegion(uint64_t slot,
                                     const std::string& variant) const {
    return held_in_region_ && held_in_region_(slot, variant);
}

void LongTermRetriever::Requeue(const std::shared_ptr<Job>& job) {
    std::vector<std::string> keys =
        queues_.WaiterKeys(job->plan, job->retrieval);
    if (keys.empty()) {
        return;   // handed out again since: that one goes on
    }
    End(job, true, RetrievalEnd::kOtherHost);
    queues_.AdmitForwarded(job->plan, job->retrieval.slot,
                           job->retrieval.variant, keys,
                           clock_.MonotonicMs(), clock_.WallMs());
}

void LongTermRetriever::CountRepeats(const RegionAsk& ask) {
    std::weak_ptr<char> alive = alive_;
    region_->FindReceived(
        ask, [this, alive, ask](std::optional<std::vector<bool>> received) {
            if (!alive.expired()) {
                queues_.CountRepeatsInRegion(
                    ask.plan, ask.keys,
                    received.value_or(std::vector<bool>()), ask.slot,
                    ask.wall_ms);
            }
        });
}

void LongTermRetriever::End(const std::shared_ptr<Job>& job, bool ok,
                            RetrievalEnd end) {
    queues_.Complete(job->plan, job->retrieval, ok, clock_.MonotonicMs(),
                     clock_.WallMs(), end);
}

void LongTermRetriever::Fetch(std::shared_ptr<Job> job) {
    const auto& endpoints = queues_.conf().long_term();
    std::optional<std::string> body = BlockRequestBody(
        job->retrieval.slot, job->retrieval.variant, "1");
    if (!body || job->endpoint >= endpoints.size()) {
        OnReply(job, HttpResult{1, "no request for this variant", 0, ""});
        return;
    }
    const LongTermEndpoint& endpoint = endpoints[job->endpoint];
    HttpTarget target = BlocksHttpTarget(endpoint.url, kMaxRetrievalBytes);
    target.connect_to = endpoint.connect_to;
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
            if (region_ != nullptr) {
                // the keys that started waiting since the claim count too
                std::vector<std::string> now_waiting =
                    queues_.WaiterKeys(job->plan, r);
                if (!now_waiting.empty()) {
                    job->ask.keys = std::move(now_waiting);
                }
                job->ask.wall_ms = clock_.WallMs();
                FinishRegion(job->ask, true);
                End(job, true, RetrievalEnd::kCountedRegion);
                CountRepeats(job->ask);
                return;
            }
            End(job, true, RetrievalEnd::kHere);
            return;
        }
    }
    const auto& endpoints = queues_.conf().long_term();
    std::string where = job->endpoint < endpoints.size()
                            ? LongTermName(endpoints[job->endpoint])
                            : "";
    log_(kLogWarn, "blocks: long-term storage " + where +
                       " did not return slot " + std::to_string(r.slot) +
                       " (" + r.variant + "): " + why);
    if (++job->endpoint < endpoints.size()) {
        Fetch(job);   // the same retrieval, never a second one
        return;
    }
    failed_++;
    if (region_ != nullptr) {
        FinishRegion(job->ask, false);   // the counts are given back
    }
    End(job, false, RetrievalEnd::kHere);
}

}  // namespace solgate
