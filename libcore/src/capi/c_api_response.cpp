// The extern "C" shims of a forwarded request's response: the getSlot
// rewrite and the context.slot harvest. They fail open: a failure here
// leaves the upstream's answer as it is.
#include <algorithm>
#include <array>
#include <memory>
#include <new>
#include <optional>
#include <string>

#include "base/recycled.h"
#include "capi/c_api_util.h"
#include "capi/c_handles.h"
#include "routing/router.h"
#include "slots/response_hook.h"
#include "solgate/solgate.h"

// Made and freed once per forwarded request: recycled storage.
struct sg_response_s : solgate::Recycled<sg_response_s> {
    explicit sg_response_s(solgate::ResponseHook made) : hook(std::move(made)) {}

    solgate::ResponseHook hook;
    std::string rewritten;  // backs sg_correction_t::body
};

namespace solgate::capi {

// What a merge leaves behind for the thread's next one: its containers,
// emptied, with their capacity (ThreadSpares).
struct MergeRoom {
    BatchMerger::Room merger;
    std::vector<sg_merge_segment_t> segments;
    std::vector<ResponseHook*> slot_hooks;
};
// A larger batch's containers are let go (max_batch_size may be raised).
constexpr size_t kMergeSlotsKept = 128;
using MergeSpares = ThreadSpares<MergeRoom>;

}  // namespace solgate::capi

// Made and freed once per merged batch: recycled storage, and containers
// from the thread's last merges (MergeRoom).
struct sg_merge_s : solgate::Recycled<sg_merge_s> {
    // `slots` are the request's, which outlives the merge.
    sg_merge_s(const std::vector<solgate::BatchMerger::Slot>& slots,
               solgate::capi::MergeRoom&& room)
        : merger(slots, solgate::MissingBatchAnswer, std::move(room.merger)),
          segments(std::move(room.segments)),
          slot_hooks(std::move(room.slot_hooks)) {
        segments.clear();
        slot_hooks.clear();
    }

    // The containers, for the thread's next merge.
    void GiveRoomBack() {
        solgate::BatchMerger::Room kept = std::move(merger).TakeRoom();
        if (kept.answered.capacity() > solgate::capi::kMergeSlotsKept ||
            slot_hooks.capacity() > solgate::capi::kMergeSlotsKept) {
            return;
        }
        solgate::capi::MergeSpares::GiveWith([&](solgate::capi::MergeRoom& room) {
            room.merger = std::move(kept);
            room.segments = std::move(segments);
            room.slot_hooks = std::move(slot_hooks);
        });
    }

    solgate::BatchMerger merger;
    std::vector<sg_merge_segment_t> segments;  // backs sg_merge_feed's
    // By slot of the merger: the hook that corrects its getSlot answer (one
    // per commitment, in `hooks`), or null. The hooks read the request's
    // plan: the request outlives the merge.
    std::vector<solgate::ResponseHook*> slot_hooks;
    std::array<std::optional<solgate::ResponseHook>,
               solgate::SG_COMMITMENT_FINALIZED + 1>
        hooks;
    int64_t now_ms = 0;
};

namespace {

using solgate::capi::Guard;
using solgate::capi::ToStr;

}  // namespace

extern "C" {

int sg_response_new(const sg_request_t* req, int64_t now_ms,
                    sg_response_t** out) noexcept {
    if (req == nullptr || out == nullptr) {
        return SG_INVALID;
    }
    *out = nullptr;
    return Guard(SG_NONE, [&] {
        const solgate::RoutedRequest& r = req->request;
        if (r.network() == nullptr || !r.upstream()) {
            return SG_NONE;
        }
        auto hook = solgate::ResponseHook::For(*r.network(), r.parsed(),
                                               r.plan(), *r.upstream(),
                                               now_ms);
        if (!hook) {
            return SG_NONE;
        }
        *out = new sg_response_s(std::move(*hook));
        return SG_OK;
    });
}

void sg_response_free(sg_response_t* resp) noexcept { delete resp; }

int sg_merge_new(const sg_request_t* req, sg_merge_t** out) noexcept {
    if (req == nullptr || out == nullptr) {
        return SG_INVALID;
    }
    *out = nullptr;
    return Guard(SG_NONE, [&] {
        const solgate::RoutedRequest& r = req->request;
        if (r.merge().empty() && !r.run()) {
            return SG_NONE;
        }
        // the spare is moved from where it is kept into the merge's members
        auto merge = solgate::capi::MergeSpares::Use([&](solgate::capi::MergeRoom& room) {
            return std::make_unique<sg_merge_s>(r.merge(), std::move(room));
        });
        if (r.run()) {
            merge->merger.SetBare();   // its brackets are the client's
        }
        if (r.network() != nullptr && r.upstream()) {
            const auto& calls = r.parsed().calls;
            const auto& slots = r.merge();
            bool any = false;
            merge->slot_hooks.assign(slots.size(), nullptr);
            for (size_t k = 0; k < slots.size(); k++) {
                if (!slots[k].forwarded || slots[k].call >= calls.size()) {
                    continue;
                }
                const solgate::RpcCall& call = calls[slots[k].call];
                if (call.method != std::string_view("getSlot")) {
                    continue;
                }
                solgate::sg_commitment_t commitment = solgate::EffectiveCommitment(
                    call, r.network()->settings());
                if (static_cast<size_t>(commitment) >= merge->hooks.size()) {
                    continue;   // no such commitment: its answer is left as it is
                }
                auto& hook = merge->hooks[commitment];
                if (!hook) {
                    if (auto made = solgate::ResponseHook::ForCall(
                            *r.network(), call, r.plan(), *r.upstream())) {
                        hook.emplace(std::move(*made));
                    }
                }
                if (hook) {
                    merge->slot_hooks[k] = &*hook;
                    any = true;
                }
            }
            if (any) {
                sg_merge_s* self = merge.get();
                merge->merger.SetRewrite(
                    [self](size_t slot, std::string_view, std::string_view element)
                        -> std::optional<std::string> {
                        solgate::ResponseHook* hook =
                            slot < self->slot_hooks.size() ? self->slot_hooks[slot] : nullptr;
                        if (hook == nullptr) {
                            return std::nullopt;
                        }
                        auto corrected = hook->Rewrite(element, self->now_ms);
                        if (!corrected) {
                            return std::nullopt;
                        }
                        return std::move(corrected->body);
                    });
            }
        }
        *out = merge.release();
        return SG_OK;
    });
}

void sg_merge_cut_short(sg_merge_t* merge) noexcept {
    if (merge != nullptr) {
        merge->merger.SetMissing(solgate::CutShortBatchAnswer);
    }
}

void sg_merge_free(sg_merge_t* merge) noexcept {
    if (merge == nullptr) {
        return;
    }
    Guard(SG_OK, [merge] {
        merge->GiveRoomBack();
        return SG_OK;
    });
    delete merge;
}

int sg_merge_feed(sg_merge_t* merge, const char* data, size_t len, int last,
                  int64_t now_ms, const sg_merge_segment_t** segments,
                  size_t* n) noexcept {
    if (merge == nullptr || segments == nullptr || n == nullptr ||
        (data == nullptr && len > 0)) {
        return SG_INVALID;
    }
    *segments = nullptr;
    *n = 0;
    return Guard(SG_ERROR, [&] {
        merge->now_ms = now_ms;
        merge->segments.clear();
        auto take = [merge](const std::vector<solgate::BatchMerger::Segment>& from) {
            merge->segments.reserve(merge->segments.size() + from.size());
            for (const auto& s : from) {
                merge->segments.push_back(sg_merge_segment_t{
                    s.input ? 1 : 0, s.offset, s.length,
                    s.input ? nullptr : s.text.data()});
            }
        };
        std::string_view chunk(data, len);
        take(last ? merge->merger.FeedLast(chunk) : merge->merger.Feed(chunk));
        *segments = merge->segments.data();
        *n = merge->segments.size();
        return SG_OK;
    });
}

int sg_response_kind(const sg_response_t* resp) noexcept {
    if (resp == nullptr) {
        return SG_INVALID;
    }
    return resp->hook.kind() == solgate::ResponseHook::Kind::kRewriteSlot
               ? SG_RESPONSE_REWRITE
               : SG_RESPONSE_HARVEST;
}

int sg_response_feed(sg_response_t* resp, const char* data, size_t len,
                     int64_t now_ms) noexcept {
    if (resp == nullptr || (data == nullptr && len > 0)) {
        return SG_OK;
    }
    return Guard(SG_OK, [&] {
        return resp->hook.Feed(data, len, now_ms) ? SG_OK : SG_AGAIN;
    });
}

void sg_response_finish(sg_response_t* resp, int64_t now_ms) noexcept {
    if (resp == nullptr) {
        return;
    }
    Guard(SG_OK, [&] {
        resp->hook.Finish(now_ms);
        return SG_OK;
    });
}

int sg_response_rewrite(sg_response_t* resp, const char* body, size_t len,
                        int64_t now_ms, sg_correction_t* out) noexcept {
    if (resp == nullptr || out == nullptr || (body == nullptr && len > 0)) {
        return SG_NONE;
    }
    return Guard(SG_NONE, [&] {
        auto correction = resp->hook.Rewrite({body, len}, now_ms);
        if (!correction) {
            return SG_NONE;
        }
        resp->rewritten = std::move(correction->body);
        *out = sg_correction_t{ToStr(resp->rewritten), correction->from,
                               correction->to};
        return SG_OK;
    });
}

}  // extern "C"
