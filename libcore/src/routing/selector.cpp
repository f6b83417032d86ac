#include "routing/selector.h"

#include <cstdio>

namespace solgate {

namespace {

bool IsTermChar(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '_' || c == '.' || c == ':' ||
           c == '*' || c == '-';
}

bool IsBlank(char c) { return c == ' ' || c == '\t'; }

bool IsSyntaxChar(char c) {
    return IsTermChar(c) || IsBlank(c) || c == '|' || c == '&' || c == '!' ||
           c == '(' || c == ')';
}

// "'x'" for a printable character, "0xNN" for anything else.
std::string Describe(char c) {
    auto u = static_cast<unsigned char>(c);
    if (u > 0x20 && u < 0x7f) {
        return std::string("'") + c + "'";
    }
    char buf[8];
    std::snprintf(buf, sizeof buf, "0x%02x", u);
    return buf;
}

std::string At(size_t index) {
    return " at position " + std::to_string(index + 1);
}

}  // namespace

// Recursive descent over the selector's own text_; nodes reference terms by
// offset, so the parsed selector stays valid when copied or moved.
class Selector::Parser {
public:
    explicit Parser(Selector& sel) : sel_(sel), s_(sel.text_) {}

    bool Run(std::string* error) {
        std::optional<uint32_t> root = ParseOr(Prev{Prev::kStart, 0});
        if (root) {
            SkipBlanks();
            if (pos_ < s_.size()) {
                if (s_[pos_] == ')') {
                    error_ = "unexpected ')'" + At(pos_);
                } else {
                    error_ = "expected '|' or '&' before " +
                             Describe(s_[pos_]) + At(pos_);
                }
                root.reset();
            }
        }
        if (!root) {
            if (error) *error = error_;
            return false;
        }
        sel_.root_ = *root;
        return true;
    }

private:
    // What precedes the operand being parsed, for error messages.
    struct Prev {
        enum Kind { kStart, kOpen, kOperator } kind;
        size_t pos;
    };

    char Peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }

    void SkipBlanks() {
        while (pos_ < s_.size() && IsBlank(s_[pos_])) pos_++;
    }

    bool Fail(std::string message) {
        error_ = std::move(message);
        return false;
    }

    uint32_t AddNode(Kind kind, bool has_colon, size_t begin, size_t length) {
        sel_.nodes_.push_back(Node{kind, has_colon,
                                   static_cast<uint32_t>(begin),
                                   static_cast<uint32_t>(length)});
        return static_cast<uint32_t>(sel_.nodes_.size() - 1);
    }

    uint32_t ParseTerm(Kind kind) {
        size_t begin = pos_;
        bool colon = false;
        while (pos_ < s_.size() && IsTermChar(s_[pos_])) {
            colon = colon || s_[pos_] == ':';
            pos_++;
        }
        return AddNode(kind, colon, begin, pos_ - begin);
    }

    // or := and ('|' and)*   and := unary ('&' unary)*
    std::optional<uint32_t> ParseOr(Prev prev) { return ParseList('|', prev); }
    std::optional<uint32_t> ParseAnd(Prev prev) { return ParseList('&', prev); }

    std::optional<uint32_t> ParseList(char op, Prev prev) {
        std::vector<uint32_t> items;
        for (;;) {
            std::optional<uint32_t> item =
                op == '|' ? ParseAnd(prev) : ParseUnary(prev);
            if (!item) return std::nullopt;
            items.push_back(*item);
            SkipBlanks();
            if (Peek() != op) break;
            prev = Prev{Prev::kOperator, pos_};
            pos_++;
        }
        if (items.size() == 1) return items[0];
        uint32_t first = static_cast<uint32_t>(sel_.children_.size());
        sel_.children_.insert(sel_.children_.end(), items.begin(), items.end());
        return AddNode(op == '|' ? Kind::kOr : Kind::kAnd, false, first,
                       items.size());
    }

    // unary := '!' term | '(' expr ')' | term
    std::optional<uint32_t> ParseUnary(Prev prev) {
        SkipBlanks();
        char c = Peek();
        if (c == '!') {
            size_t bang = pos_++;
            SkipBlanks();
            char next = Peek();
            if (IsTermChar(next)) return ParseTerm(Kind::kNotTerm);
            if (next == '(') {
                Fail("'!' applies to one id pattern, not to a group (position " +
                     std::to_string(bang + 1) + ")");
            } else {
                Fail("'!' must be followed by an id pattern" + At(bang));
            }
            return std::nullopt;
        }
        if (c == '(') {
            size_t open = pos_++;
            if (++depth_ > kMaxDepth) {
                Fail("parentheses nested deeper than " +
                     std::to_string(kMaxDepth) + At(open));
                return std::nullopt;
            }
            std::optional<uint32_t> inner = ParseOr(Prev{Prev::kOpen, open});
            if (!inner) return std::nullopt;
            SkipBlanks();
            if (pos_ >= s_.size()) {
                Fail("missing ')' for '('" + At(open));
                return std::nullopt;
            }
            if (s_[pos_] != ')') {
                Fail("expected '|', '&' or ')' before " + Describe(s_[pos_]) +
                     At(pos_));
                return std::nullopt;
            }
            pos_++;
            depth_--;
            return inner;
        }
        if (IsTermChar(c)) return ParseTerm(Kind::kTerm);
        MissingOperand(prev);
        return std::nullopt;
    }

    // At an operator, ')' or the end where a pattern was expected.
    void MissingOperand(Prev prev) {
        bool end = pos_ >= s_.size();
        char c = Peek();
        switch (prev.kind) {
        case Prev::kOperator:
            Fail(std::string("missing pattern after '") + s_[prev.pos] + "'" +
                 At(prev.pos));
            return;
        case Prev::kOpen:
            if (end) {
                Fail("missing ')' for '('" + At(prev.pos));
            } else if (c == ')') {
                Fail("empty parentheses" + At(prev.pos));
            } else {
                Fail("missing pattern before " + Describe(c) + At(pos_));
            }
            return;
        case Prev::kStart:
            if (end) {
                Fail("empty selector");
            } else if (c == ')') {
                Fail("unexpected ')'" + At(pos_));
            } else {
                Fail("missing pattern before " + Describe(c) + At(pos_));
            }
            return;
        }
    }

    Selector& sel_;
    std::string_view s_;
    size_t pos_ = 0;
    int depth_ = 0;
    std::string error_;
};

std::optional<Selector> Selector::Parse(std::string_view text,
                                        std::string* error) {
    auto fail = [error](std::string message) -> std::optional<Selector> {
        if (error) *error = std::move(message);
        return std::nullopt;
    };
    if (text.size() > kMaxLength) {
        return fail("selector longer than " + std::to_string(kMaxLength) +
                    " characters");
    }
    bool blank = true;
    for (size_t i = 0; i < text.size(); i++) {
        if (!IsSyntaxChar(text[i])) {
            return fail("unexpected character " + Describe(text[i]) + At(i));
        }
        blank = blank && IsBlank(text[i]);
    }
    if (blank) return fail("empty selector");

    Selector sel;
    sel.text_ = std::string(text);
    if (!Parser(sel).Run(error)) return std::nullopt;
    sel.nodes_.shrink_to_fit();
    sel.children_.shrink_to_fit();
    return sel;
}

bool Selector::Matches(std::string_view id,
                       const std::vector<std::string>& tags,
                       std::string_view group) const {
    return !nodes_.empty() && Eval(root_, Subject{id, group, tags});
}

bool Selector::IdMatches(const Node& term, const Subject& subject) const {
    std::string_view pattern =
        std::string_view(text_).substr(term.begin, term.length);
    return GlobMatch(pattern, subject.id) ||
           (!subject.group.empty() && GlobMatch(pattern, subject.group));
}

bool Selector::Eval(uint32_t index, const Subject& subject) const {
    const Node& n = nodes_[index];
    switch (n.kind) {
    case Kind::kTerm: {
        if (IdMatches(n, subject)) return true;
        if (n.has_colon) {
            std::string_view pattern =
                std::string_view(text_).substr(n.begin, n.length);
            for (const std::string& tag : subject.tags) {
                if (GlobMatch(pattern, tag)) return true;
            }
        }
        return false;
    }
    case Kind::kNotTerm:
        return !IdMatches(n, subject);
    case Kind::kAnd:
        for (uint32_t i = 0; i < n.length; i++) {
            if (!Eval(children_[n.begin + i], subject)) return false;
        }
        return true;
    case Kind::kOr:
        for (uint32_t i = 0; i < n.length; i++) {
            if (Eval(children_[n.begin + i], subject)) return true;
        }
        return false;
    }
    return false;
}

// With only '*' as a wildcard, the pattern is prefix*seg*seg*...*suffix:
// the prefix and suffix are anchored, and taking each middle segment at its
// leftmost occurrence after the previous one never loses a match.
bool GlobMatch(std::string_view pattern, std::string_view text) {
    size_t first = pattern.find('*');
    if (first == std::string_view::npos) return pattern == text;
    size_t last = pattern.rfind('*');
    std::string_view prefix = pattern.substr(0, first);
    std::string_view suffix = pattern.substr(last + 1);
    if (text.size() < prefix.size() + suffix.size()) return false;
    if (text.substr(0, prefix.size()) != prefix) return false;
    if (text.substr(text.size() - suffix.size()) != suffix) return false;
    std::string_view middle = text.substr(
        prefix.size(), text.size() - prefix.size() - suffix.size());
    for (size_t i = first + 1; i <= last;) {
        size_t star = pattern.find('*', i);
        std::string_view segment = pattern.substr(i, star - i);
        if (!segment.empty()) {
            size_t at = middle.find(segment);
            if (at == std::string_view::npos) return false;
            middle.remove_prefix(at + segment.size());
        }
        i = star + 1;
    }
    return true;
}

bool IsSimpleGroupSelector(std::string_view text) {
    if (text.empty() || text.size() > 128) return false;
    for (size_t i = 0; i < text.size(); i++) {
        switch (text[i]) {
        case ' ': case '\t': case '\n': case '\r': case '\v': case '\f':
        case '|': case '&': case '(': case ')': case ',':
            return false;
        case '!':
            if (i != 0) return false;
            break;
        default:
            break;
        }
    }
    return true;
}

}  // namespace solgate
