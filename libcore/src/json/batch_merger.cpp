#include "json/batch_merger.h"

namespace solgate {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

}  // namespace

void BatchMerger::Text(std::string_view text) {
    Segment s;
    s.text = text;
    s.length = text.size();
    out_.push_back(s);
}

void BatchMerger::Input(size_t offset, size_t length) {
    if (length == 0) {
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

void BatchMerger::LocalsUntilForwarded() {
    while (next_ < slots_.size() && !slots_[next_].forwarded) {
        Separator();
        Text(slots_[next_++].text);
    }
}

const std::vector<BatchMerger::Segment>& BatchMerger::Feed(
    std::string_view chunk) {
    out_.clear();
    size_t element_from = 0;   // where the element's bytes in this chunk begin
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
            if (c != '[') {
                state_ = State::kPassthrough;
                Input(i, chunk.size() - i);
                return out_;
            }
            Text("[");
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
            Separator();
            if (next_ < slots_.size()) {
                next_++;
            } else {
                extra_++;
            }
            state_ = State::kInElement;
            depth_ = 0;
            in_string_ = false;
            escaped_ = false;
            element_from = i;
            i--;   // read this byte as part of the element
            break;
        case State::kInElement:
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
            } else if ((c == '}' || c == ']') && depth_ > 0) {
                depth_--;
            } else if (depth_ == 0 && (c == ',' || c == ']')) {
                Input(element_from, i - element_from);
                LocalsUntilForwarded();
                state_ = c == ']' ? State::kDone : State::kBeforeElement;
            }
            break;
        case State::kDone:
            break;
        }
    }
    if (state_ == State::kInElement) {
        Input(element_from, chunk.size() - element_from);
    }
    return out_;
}

const std::vector<BatchMerger::Segment>& BatchMerger::Finish() {
    out_.clear();
    if (state_ == State::kPassthrough) {
        return out_;
    }
    if (state_ == State::kStart) {
        Text("[");   // no answer at all: every forwarded call gets its text
    }
    while (next_ < slots_.size()) {
        Separator();
        Text(slots_[next_++].text);
    }
    Text("]");
    state_ = State::kDone;
    return out_;
}

}  // namespace solgate
