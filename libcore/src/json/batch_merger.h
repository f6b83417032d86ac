// The client's batch answer, put together while the upstream's answer to
// the calls it was sent streams through: the local answers (errors, the
// genesis hash, the getBlock guard) go in their places, the upstream's
// array elements fill the others in the order the upstream wrote them
// (JSON-RPC clients match answers by id), a call whose id no element
// carried gets its `text`, and nothing the upstream wrote is held longer
// than the chunk it came in.
#pragma once

#include <cstddef>
#include <functional>
#include <list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace solgate {

class BatchMerger {
public:
    // One place in the client's batch, in order.  forwarded: filled by the
    // upstream's next element; `id` is the call's id as the client wrote
    // it.  Otherwise `text` is the local answer.
    struct Slot {
        bool forwarded = false;
        std::string text;
        std::string id;
        size_t call = 0;   // the request's call it stands for (not read here)
    };
    // The answer for a call whose id no element carried (made only then).
    using MissingAnswer = std::string (*)(std::string_view id);
    // Elements beyond the calls sent are kept up to this many, then dropped.
    static constexpr size_t kMaxExtraElements = 16;
    // With a rewrite, an element is held until it ends or passes this size.
    static constexpr size_t kMaxHeldElement = 1024;

    // The slot of no call: an element whose id no unanswered call has.
    static constexpr size_t kNoSlot = static_cast<size_t>(-1);
    // An element's replacement, given the slot it answers (an index into
    // the slots, as the merger matched it; kNoSlot for none), its id as
    // written and its text; or nullopt to send it as it is. Asked of every
    // element small enough to hold whole (a getSlot answer in a batch is
    // corrected so, by its call's commitment).
    using Rewrite = std::function<std::optional<std::string>(
        size_t slot, std::string_view id, std::string_view element)>;
    void SetRewrite(Rewrite rewrite) { rewrite_ = std::move(rewrite); }
    // The elements only, without the array's brackets: the answer is part
    // of a larger array.  An upstream's answer that is not an array is then
    // dropped, and each call gets its MissingAnswer.
    void SetBare() { bare_ = true; }
    // Another answer for the calls no element answers (the upstream's
    // answer was cut short, say).
    void SetMissing(MissingAnswer missing) { missing_ = missing; }

    // What to send for a chunk: ranges of the chunk (input) and text of
    // the merger's own, in order.  Valid until the next call.
    struct Segment {
        bool input = false;
        size_t offset = 0;       // input: into the chunk
        size_t length = 0;
        std::string_view text;   // !input
    };

    // Storage a merger leaves behind for the next one (a batch answer is
    // merged once per request: see ThreadSpares); a merger empties it.
    struct Room {
        std::vector<unsigned char> answered;
        std::vector<Segment> out;
    };
    // `slots` is read, not copied: it must outlive the merger (the routed
    // request's, which outlives its merge).
    BatchMerger(const std::vector<Slot>& slots, MissingAnswer missing,
                Room room = {})
        : slots_(slots),
          answered_(std::move(room.answered)),
          missing_(missing),
          out_(std::move(room.out)) {
        answered_.assign(slots_.size(), 0);
        out_.clear();
        // a chunk's segments: its elements and the local answers between
        out_.reserve(2 * slots_.size() + 4);
    }
    BatchMerger(std::vector<Slot>&&, MissingAnswer, Room = {}) = delete;
    // The storage worth keeping, for the next merger.
    Room TakeRoom() && { return Room{std::move(answered_), std::move(out_)}; }

    const std::vector<Segment>& Feed(std::string_view chunk);
    // The upstream's answer ended: what is still to send.
    const std::vector<Segment>& Finish();
    // Feed and Finish at once, for a last chunk: one list of segments (a
    // Finish after Feed would end the life of Feed's texts).
    const std::vector<Segment>& FeedLast(std::string_view chunk);

    // The upstream did not answer with an array (an error for the whole
    // batch): its answer passes as it is, and the local answers are lost
    // (unless bare: see SetBare).
    bool passthrough() const { return state_ == State::kPassthrough; }
    // Elements the upstream gave beyond the calls it was sent.
    size_t extra_elements() const { return extra_; }

private:
    enum class State { kStart, kBeforeElement, kInElement, kDone, kPassthrough };

    void Text(std::string_view text);
    void Input(size_t offset, size_t length);
    void Separator();
    bool SeparatorOfInput(std::string_view chunk, size_t at);
    // Sends the local answers up to the next forwarded slot.
    void LocalsUntilForwarded();
    // What Finish sends, after the segments out_ already has.
    void AppendFinish();
    // An id longer than this is kept (and matched) by its first bytes.
    static constexpr size_t kMaxIdLength = 256;

    // Follows an element's members for its "id" (depth 1).
    void TrackId(char c);
    bool KeyInChunk(std::string_view chunk, size_t& at);
    bool IdInChunk(std::string_view chunk, size_t& at);
    static std::string_view KeptId(std::string_view raw);
    void TakeId(std::string_view raw);
    void EndElement(size_t slot);
    // `raw_id`: the element's id as read, up to kMaxIdLength + 1 bytes.
    void ElementEnds(std::string_view chunk, size_t from, size_t at,
                     std::string_view raw_id);
    // The slot an element with this id answers, or kNoSlot.
    size_t AnsweredSlot(std::string_view id) const;
    const std::optional<std::string>& SlotValue(size_t k) const;
    // The element bytes [from, to) of the chunk, `ends` there (answering
    // `slot`, with `id`): sent, held or rewritten.
    void Element(std::string_view chunk, size_t from, size_t to, bool ends,
                 size_t slot = kNoSlot, std::string_view id = {});
    void FlushHeld();
    std::string_view Own(std::string text);

    const std::vector<Slot>& slots_;
    std::vector<unsigned char> answered_;   // by slot: an element had its id
    // by slot: its id's value when a string (AnsweredSlot's rare by-value
    // match; made at its first use)
    mutable std::vector<std::optional<std::string>> values_;
    MissingAnswer missing_;
    size_t next_ = 0;          // the next slot to send
    size_t filling_ = 0;       // the slot the current element fills
    size_t sent_ = 0;          // items sent, for the commas
    size_t extra_ = 0;
    State state_ = State::kStart;
    int depth_ = 0;
    bool in_string_ = false;
    bool escaped_ = false;
    bool dropping_ = false;    // an extra element past kMaxExtraElements
    // the current element's "id": its key is being read, its value taken
    bool expect_key_ = false;
    bool in_key_ = false;
    bool key_is_id_ = false;
    bool taking_id_ = false;
    std::string key_;
    std::string id_;           // read byte by byte (a whole element's is a view)
    Rewrite rewrite_;
    bool bare_ = false;
    bool holding_ = false;     // the current element is held in held_
    std::string held_;
    // texts made for this call's segments (a list: none is made for most
    // chunks, and a view of one stays valid while more are added)
    std::list<std::string> own_;
    std::vector<Segment> out_;   // text segments point into slots_
};

}  // namespace solgate
