#include "json/batch_merger.h"

#include <algorithm>
#include <cstdint>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "json/json_id.h"

namespace solgate {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Bytes that move an element's state: outside strings, the structural
// ones; inside, the closing quote and an escape. A table lookup a byte,
// where the comparisons cost several times that (the merger reads every
// byte of the upstream's answer).
enum : uint8_t { kStructural = 1, kStringStop = 2 };

inline constexpr struct ElementBytes {
    uint8_t of[256] = {};
    constexpr ElementBytes() {
        for (char c : {'"', '{', '}', '[', ']', ',', ':'}) {
            of[static_cast<unsigned char>(c)] |= kStructural;
        }
        of['"'] |= kStringStop;
        of['\\'] |= kStringStop;
    }
} kElementBytes;

// The first byte at or after `from` of class `stop`, or the chunk's end.
size_t SkipTo(std::string_view chunk, size_t from, uint8_t stop) {
    while (from < chunk.size() &&
           (kElementBytes.of[static_cast<unsigned char>(chunk[from])] & stop) == 0) {
        from++;
    }
    return from;
}

// The end of an id's value after the colon at `colon`: the comma or brace
// that ends it, when it is in the chunk and the value is a number, literal
// or string without escapes (an object or array id is read byte by byte).
bool IdValueEnd(std::string_view chunk, size_t colon, size_t& end) {
    bool in_string = false;
    for (end = colon + 1; end < chunk.size(); end++) {
        char c = chunk[end];
        if (in_string) {
            if (c == '\\') {
                return false;
            }
            in_string = c != '"';
        } else if (c == '"') {
            in_string = true;
        } else if (c == '{' || c == '[' || c == ']') {
            return false;
        } else if (c == ',' || c == '}') {
            return true;
        }
    }
    return false;
}

// Bit k set when byte at[k] (k < count <= 16) is one an element's reading
// acts on: structural, or a backslash. With SSE2 (every x86-64) sixteen
// bytes are judged at once, the brackets and braces by one compare each
// ('[' | 0x20 is '{', ']' | 0x20 is '}'); short tails take the table.
unsigned ActionBytes(const char* at, size_t count) {
#if defined(__SSE2__)
    if (count == 16) {
        __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(at));
        __m128i folded = _mm_or_si128(bytes, _mm_set1_epi8(0x20));
        __m128i hits = _mm_or_si128(
            _mm_or_si128(_mm_cmpeq_epi8(bytes, _mm_set1_epi8('"')),
                         _mm_cmpeq_epi8(bytes, _mm_set1_epi8('\\'))),
            _mm_or_si128(
                _mm_or_si128(_mm_cmpeq_epi8(bytes, _mm_set1_epi8(',')),
                             _mm_cmpeq_epi8(bytes, _mm_set1_epi8(':'))),
                _mm_or_si128(_mm_cmpeq_epi8(folded, _mm_set1_epi8('{')),
                             _mm_cmpeq_epi8(folded, _mm_set1_epi8('}')))));
        return static_cast<unsigned>(_mm_movemask_epi8(hits));
    }
#endif
    unsigned mask = 0;
    for (size_t k = 0; k < count; k++) {
        if (kElementBytes.of[static_cast<unsigned char>(at[k])] != 0) {
            mask |= 1u << k;
        }
    }
    return mask;
}

// An object element at `from` that ends in the chunk, read in one pass
// with the same rules as the byte-by-byte reading (TrackId and Feed),
// visiting only the bytes ActionBytes marks: the comma or bracket that
// ends it goes to `end`, the raw text of its "id" value to `id` (empty
// when it has none). False for what that reading must take: an element
// that goes on past the chunk, is no object, has an escape in a string, or
// an object or array for its id.
bool WholeElement(std::string_view chunk, size_t from, size_t& end,
                  std::string_view& id) {
    id = {};
    if (chunk[from] != '{') {
        return false;
    }
    const char* text = chunk.data();
    const size_t size = chunk.size();
    int depth = 0;
    bool in_string = false;
    bool in_key = false;       // the string is a key of the element's object
    bool expect_key = false;
    bool key_is_id = false;
    bool taking_id = false;    // in the id's value
    size_t string_from = 0;
    size_t id_from = 0;
    for (size_t block = from; block < size; block += 16) {
        unsigned mask = ActionBytes(text + block, std::min<size_t>(16, size - block));
        while (mask != 0) {
            size_t i = block + static_cast<size_t>(__builtin_ctz(mask));
            mask &= mask - 1;
            char c = text[i];
            if (in_string) {
                if (c == '\\') {
                    return false;
                }
                if (c == '"') {
                    in_string = false;
                    if (in_key) {
                        in_key = false;
                        key_is_id = std::string_view(text + string_from,
                                                     i - string_from) == "id";
                    }
                }
                continue;
            }
            if (taking_id) {
                if (c == '{' || c == '[' || c == ']') {
                    return false;
                }
                if (c != ',' && c != '}') {
                    in_string = c == '"';
                    continue;
                }
                id = chunk.substr(id_from, i - id_from);
                taking_id = false;   // and the comma or brace is read below
            }
            switch (c) {
            case '"':
                in_string = true;
                string_from = i + 1;
                in_key = depth == 1 && expect_key;
                expect_key = expect_key && !in_key;
                break;
            case ':':
                if (depth == 1 && key_is_id) {
                    taking_id = true;
                    key_is_id = false;
                    id_from = i + 1;
                }
                break;
            case '{': case '[':
                depth++;
                expect_key = depth == 1 && c == '{';
                break;
            case '}': case ']':
                if (depth > 0) {
                    depth--;
                } else if (c == ']') {
                    end = i;
                    return true;
                }
                break;
            case ',':
                if (depth == 0) {
                    end = i;
                    return true;
                }
                if (depth == 1) {
                    expect_key = true;
                }
                break;
            default:
                break;   // a backslash outside strings reads as any byte
            }
        }
    }
    return false;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// The shape Solana nodes write a number's answer in (a getSlot's, a
// getBlockHeight's), `{"jsonrpc":"2.0","result":<digits>,"id":<id>}` with
// a number id or a string id without escapes, directly followed by the
// comma or bracket that ends it: read by comparing it with the shape, not
// byte by byte. Ends and id as WholeElement would read them; false for
// anything else (left to WholeElement).
bool CanonicalElement(std::string_view chunk, size_t from, size_t& end,
                      std::string_view& id) {
    constexpr std::string_view kHead = R"({"jsonrpc":"2.0","result":)";
    constexpr std::string_view kIdKey = R"(,"id":)";
    std::string_view rest = chunk.substr(from);
    if (rest.substr(0, kHead.size()) != kHead) {
        return false;
    }
    size_t i = kHead.size();
    const size_t result_from = i;
    while (i < rest.size() && IsDigit(rest[i])) i++;
    if (i == result_from || rest.substr(i, kIdKey.size()) != kIdKey) {
        return false;
    }
    i += kIdKey.size();
    const size_t id_from = i;
    if (i < rest.size() && rest[i] == '"') {
        i = rest.find_first_of("\\\"", i + 1);
        if (i == std::string_view::npos || rest[i] != '"') {
            return false;
        }
        i++;
    } else {
        if (i < rest.size() && rest[i] == '-') i++;
        const size_t digits_from = i;
        while (i < rest.size() && IsDigit(rest[i])) i++;
        if (i == digits_from) {
            return false;
        }
    }
    if (i + 1 >= rest.size() || rest[i] != '}' ||
        (rest[i + 1] != ',' && rest[i + 1] != ']')) {
        return false;
    }
    id = rest.substr(id_from, i - id_from);
    end = from + i + 1;
    return true;
}

std::string_view Trimmed(std::string_view s) {
    while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
    while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
    return s;
}

}  // namespace

void BatchMerger::Text(std::string_view text) {
    Segment s;
    s.text = text;
    s.length = text.size();
    out_.push_back(s);
}

void BatchMerger::Input(size_t offset, size_t length) {
    if (length == 0 || dropping_) {
        return;
    }
    if (!out_.empty() && out_.back().input &&
        out_.back().offset + out_.back().length == offset) {
        out_.back().length += length;
        return;
    }
    Segment s;
    s.input = true;
    s.offset = offset;
    s.length = length;
    out_.push_back(s);
}

void BatchMerger::Separator() {
    if (sent_++ > 0) {
        Text(",");
    }
}

// The upstream's own comma before the element at `at`, when the element
// before it went out as the range of the chunk that ends at that comma:
// the comma joins the two ranges, so consecutive forwarded elements go out
// as one range of the chunk (a plain batch answer is sent as it came).
bool BatchMerger::SeparatorOfInput(std::string_view chunk, size_t at) {
    if (sent_ == 0 || at == 0 || out_.empty() || !out_.back().input ||
        out_.back().offset + out_.back().length != at - 1 ||
        chunk[at - 1] != ',') {
        return false;
    }
    sent_++;
    Input(at - 1, 1);
    return true;
}

void BatchMerger::LocalsUntilForwarded() {
    while (next_ < slots_.size() && !slots_[next_].forwarded) {
        Separator();
        Text(slots_[next_++].text);
    }
}

// Called for each byte of an element outside strings' contents as well as
// inside them, before depth_ and in_string_ account for it.
void BatchMerger::TrackId(char c) {
    if (taking_id_) {
        bool ends = !in_string_ && depth_ == 1 && (c == ',' || c == '}');
        if (ends) {
            taking_id_ = false;
        } else if (id_.size() <= kMaxIdLength) {
            id_.push_back(c);
            return;
        }
    }
    if (depth_ != 1) {
        return;
    }
    if (in_key_) {
        if (c == '"' && !escaped_) {
            in_key_ = false;
            key_is_id_ = key_ == "id";
        } else if (key_.size() < 8) {
            key_.push_back(c);
        }
        return;
    }
    if (in_string_) {
        return;
    }
    if (c == '"' && expect_key_) {
        in_key_ = true;
        expect_key_ = false;
        key_.clear();
    } else if (c == ':' && key_is_id_) {
        key_is_id_ = false;
        taking_id_ = true;
        id_.clear();
    } else if (c == ',') {
        expect_key_ = true;
    }
}

// The key whose opening quote is at `at`, when its closing quote is in the
// chunk and no escape comes before it: read as TrackId would byte by
// byte. `at` moves to the closing quote.
bool BatchMerger::KeyInChunk(std::string_view chunk, size_t& at) {
    size_t end = SkipTo(chunk, at + 1, kStringStop);
    if (end >= chunk.size() || chunk[end] != '"') {
        return false;
    }
    key_is_id_ = chunk.substr(at + 1, end - at - 1) == "id";
    expect_key_ = false;
    at = end;
    return true;
}

// The id's value after the colon at `at`, when IdValueEnd finds its end
// in the chunk: taken as TrackId would. `at` moves to the byte before the
// comma or brace that ends it.
bool BatchMerger::IdInChunk(std::string_view chunk, size_t& at) {
    size_t end;
    if (!IdValueEnd(chunk, at, end)) {
        return false;
    }
    TakeId(chunk.substr(at + 1, end - at - 1));
    key_is_id_ = false;
    at = end - 1;
    return true;
}

// An id's raw text read at once, as TrackId keeps it byte by byte: up to
// one byte past kMaxIdLength (a longer one is matched by those bytes).
std::string_view BatchMerger::KeptId(std::string_view raw) {
    return raw.substr(0, kMaxIdLength + 1);
}

void BatchMerger::TakeId(std::string_view raw) { id_.assign(KeptId(raw)); }

std::string_view BatchMerger::Own(std::string text) {
    own_.push_back(std::move(text));
    return own_.back();
}

// An element held for the rewrite is copied only when it spans chunks:
// one that ends in the chunk it began in is offered as a view, and passes
// as a range of the chunk unless it is rewritten.
void BatchMerger::Element(std::string_view chunk, size_t from, size_t to,
                          bool ends, size_t slot, std::string_view id) {
    if (!holding_) {
        Input(from, to - from);
        return;
    }
    std::string_view part = chunk.substr(from, to - from);
    if (!ends) {
        held_.append(part);
        if (held_.size() > kMaxHeldElement) {
            FlushHeld();   // too big for a rewrite: it streams from here on
        }
        return;
    }
    std::string_view whole = part;
    if (!held_.empty()) {
        held_.append(part);
        whole = held_;
    }
    std::optional<std::string> rewritten;
    if (whole.size() <= kMaxHeldElement) {
        rewritten = rewrite_(slot, id, whole);
    }
    if (rewritten) {
        Text(Own(std::move(*rewritten)));
    } else if (held_.empty()) {
        Input(from, to - from);
    } else {
        Text(Own(std::move(held_)));
    }
    held_.clear();
    holding_ = false;
}

void BatchMerger::FlushHeld() {
    if (holding_ && !held_.empty()) {
        Text(Own(std::move(held_)));
    }
    held_.clear();
    holding_ = false;
}

// The slot an element answers: the one it filled, if its id is that
// slot's (the upstream kept the order), else the first unanswered one with
// its id. The id as the upstream wrote it may differ from the client's in
// bytes, not value (a string's escapes written anew), and is cut after
// kMaxIdLength bytes (a longer id is matched by its first bytes): the
// slot being filled is tried that way before any other slot by its bytes,
// and then the others, each slot's value decoded once per merger.
size_t BatchMerger::AnsweredSlot(std::string_view id) const {
    if (id.empty()) {
        return kNoSlot;
    }
    auto open = [this](size_t k) {
        return slots_[k].forwarded && !answered_[k];
    };
    bool filling_open = filling_ < slots_.size() && open(filling_);
    if (filling_open && slots_[filling_].id == id) {
        return filling_;
    }
    bool cut = id.size() > kMaxIdLength;
    std::string value;
    bool string = !cut && DecodeJsonString(id, &value);
    auto same = [&](size_t k) {
        std::string_view mine = slots_[k].id;
        if (cut) {
            return mine.size() > kMaxIdLength &&
                   mine.substr(0, id.size()) == id;
        }
        return string && SlotValue(k) == value;
    };
    if (filling_open && same(filling_)) {
        return filling_;
    }
    for (size_t k = 0; k < slots_.size(); k++) {
        if (open(k) && slots_[k].id == id) {
            return k;
        }
    }
    if (!cut && !string) {
        return kNoSlot;   // a number or null: only its bytes match
    }
    for (size_t k = 0; k < slots_.size(); k++) {
        if (open(k) && same(k)) {
            return k;
        }
    }
    return kNoSlot;
}

// Slot k's id as a string's value (decoded once, for every slot, when an
// id first needs it); nullopt for an id that is no string.
const std::optional<std::string>& BatchMerger::SlotValue(size_t k) const {
    if (values_.size() != slots_.size()) {
        values_.assign(slots_.size(), std::nullopt);
        std::string value;
        for (size_t i = 0; i < slots_.size(); i++) {
            if (DecodeJsonString(slots_[i].id, &value)) {
                values_[i] = value;
            }
        }
    }
    return values_[k];
}

void BatchMerger::EndElement(size_t slot) {
    if (slot != kNoSlot) {
        answered_[slot] = 1;
    }
    id_.clear();
    dropping_ = false;
}

// The element's bytes [from, at) end with the comma or bracket at `at`.
void BatchMerger::ElementEnds(std::string_view chunk, size_t from, size_t at,
                              std::string_view raw_id) {
    std::string_view id = Trimmed(raw_id);
    // an element dropped (past kMaxExtraElements) answers nothing: its
    // call, if it had one, gets its missing answer
    size_t slot = dropping_ ? kNoSlot : AnsweredSlot(id);
    Element(chunk, from, at, true, slot, id);
    EndElement(slot);
    LocalsUntilForwarded();
    state_ = chunk[at] == ']' ? State::kDone : State::kBeforeElement;
}

const std::vector<BatchMerger::Segment>& BatchMerger::Feed(
    std::string_view chunk) {
    out_.clear();
    own_.clear();
    size_t element_from = 0;   // where the element's bytes in this chunk begin
    std::string_view whole_id;
    for (size_t i = 0; i < chunk.size(); i++) {
        char c = chunk[i];
        switch (state_) {
        case State::kPassthrough:
            Input(i, chunk.size() - i);
            return out_;
        case State::kStart:
            if (IsSpace(c)) {
                break;
            }
            if (c != '[' && bare_) {
                state_ = State::kDone;   // Finish answers every call
                return out_;
            }
            if (c != '[') {
                state_ = State::kPassthrough;
                Input(i, chunk.size() - i);
                return out_;
            }
            if (!bare_) {
                Text("[");
            }
            LocalsUntilForwarded();
            state_ = State::kBeforeElement;
            break;
        case State::kBeforeElement:
            if (IsSpace(c) || c == ',') {
                break;
            }
            if (c == ']') {
                state_ = State::kDone;
                break;
            }
            // an element begins: it fills the next forwarded slot
            filling_ = next_;
            if (next_ < slots_.size()) {
                next_++;
            } else if (++extra_ > kMaxExtraElements) {
                dropping_ = true;
            }
            if (!dropping_ && !SeparatorOfInput(chunk, i)) {
                Separator();
            }
            state_ = State::kInElement;
            depth_ = 0;
            in_string_ = false;
            escaped_ = false;
            expect_key_ = false;
            in_key_ = false;
            key_is_id_ = false;
            taking_id_ = false;
            holding_ = rewrite_ != nullptr && !dropping_;
            held_.clear();
            element_from = i;
            if (size_t end; CanonicalElement(chunk, i, end, whole_id) ||
                            WholeElement(chunk, i, end, whole_id)) {
                // its id kept as TakeId keeps one, without the copy
                ElementEnds(chunk, element_from, end, KeptId(whole_id));
                i = end;
                break;
            }
            i--;   // read this byte as part of the element
            break;
        case State::kInElement:
            if (!taking_id_ && !in_key_ && !escaped_) {
                // bytes that change no state: skipped in one go
                size_t j = SkipTo(chunk, i, in_string_ ? kStringStop : kStructural);
                if (j > i) {
                    i = j - 1;   // the loop goes on at j
                    break;
                }
                // a key, or the id's value, read at once when it lies
                // whole in the chunk (else byte by byte, below)
                if (!in_string_ && depth_ == 1) {
                    if (c == '"' && expect_key_ && KeyInChunk(chunk, i)) {
                        break;
                    }
                    if (c == ':' && key_is_id_ && IdInChunk(chunk, i)) {
                        break;
                    }
                }
            }
            TrackId(c);
            if (in_string_) {
                if (escaped_) {
                    escaped_ = false;
                } else if (c == '\\') {
                    escaped_ = true;
                } else if (c == '"') {
                    in_string_ = false;
                }
                break;
            }
            if (c == '"') {
                in_string_ = true;
            } else if (c == '{' || c == '[') {
                depth_++;
                expect_key_ = depth_ == 1 && c == '{';
            } else if ((c == '}' || c == ']') && depth_ > 0) {
                depth_--;
            } else if (depth_ == 0 && (c == ',' || c == ']')) {
                ElementEnds(chunk, element_from, i, id_);
            }
            break;
        case State::kDone:
            break;
        }
    }
    if (state_ == State::kInElement) {
        Element(chunk, element_from, chunk.size(), false);
    }
    return out_;
}

const std::vector<BatchMerger::Segment>& BatchMerger::Finish() {
    out_.clear();
    own_.clear();
    AppendFinish();
    return out_;
}

const std::vector<BatchMerger::Segment>& BatchMerger::FeedLast(
    std::string_view chunk) {
    Feed(chunk);
    AppendFinish();   // the chunk's own texts stay
    return out_;
}

void BatchMerger::AppendFinish() {
    if (state_ == State::kPassthrough) {
        return;
    }
    if (state_ == State::kStart && !bare_) {
        Text("[");
    }
    FlushHeld();   // an answer cut short
    dropping_ = false;
    // the local answers still to come, then every call no element answered
    for (; next_ < slots_.size(); next_++) {
        if (!slots_[next_].forwarded) {
            Separator();
            Text(slots_[next_].text);
        }
    }
    for (size_t k = 0; k < slots_.size(); k++) {
        if (slots_[k].forwarded && !answered_[k]) {
            Separator();
            Text(Own(missing_(slots_[k].id)));
        }
    }
    if (!bare_) {
        Text("]");
    }
    state_ = State::kDone;
}

}  // namespace solgate
