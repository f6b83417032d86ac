// use-upstream selectors: parse once, match upstreams by id and tags.
//
//   expr    := or
//   or      := and ('|' and)*
//   and     := unary ('&' unary)*
//   unary   := '!' term | primary
//   primary := '(' expr ')' | term
//   term    := one or more of [A-Za-z0-9_.:*-]
//
// Spaces and tabs around operators and parentheses are ignored. A term
// matches an upstream when it globs the upstream's id (for a node of an
// upstream split by server, "pool.2", also the upstream's own "pool"), or,
// if the term holds a ':', one of its "key:value" tags. A negated term
// matches by id only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace solgate {

class Selector {
public:
    // Limits: longer text, or deeper parenthesis nesting, is an error.
    static constexpr size_t kMaxLength = 1024;
    static constexpr int kMaxDepth = 32;

    // The parsed selector, or nullopt with *error (when error is non-null)
    // set to a short lowercase message naming the problem and its 1-based
    // position. Empty or whitespace-only text gives "empty selector".
    static std::optional<Selector> Parse(std::string_view text,
                                         std::string* error);

    // Whether an upstream with this id and these "key:value" tags is
    // selected; `group` (when not empty) is a second id it answers to.
    // Does not allocate.
    bool Matches(std::string_view id, const std::vector<std::string>& tags,
                 std::string_view group = {}) const;

    // The text the selector was parsed from, as given.
    const std::string& text() const { return text_; }

private:
    enum class Kind : uint8_t { kTerm, kNotTerm, kAnd, kOr };

    struct Node {
        Kind kind;
        bool has_colon;   // kTerm: may match tags as well as the id
        uint32_t begin;   // kTerm/kNotTerm: offset into text_;
                          // kAnd/kOr: first index into children_
        uint32_t length;  // term length, or number of children
    };

    class Parser;

    Selector() = default;
    struct Subject {
        std::string_view id;
        std::string_view group;
        const std::vector<std::string>& tags;
    };
    bool Eval(uint32_t node, const Subject& subject) const;
    bool IdMatches(const Node& term, const Subject& subject) const;

    std::string text_;
    std::vector<Node> nodes_;
    std::vector<uint32_t> children_;
    uint32_t root_ = 0;
};

// '*' matches any run of characters, including none; every other character
// matches itself, case-sensitively. O(len(pattern) * len(text)) at worst.
bool GlobMatch(std::string_view pattern, std::string_view text);

// The spec's "simple" selector, the only kind that forms a lane: not empty,
// at most 128 characters, no whitespace, '|', '&', '(', ')' or ',', and at
// most one '!', only at position 0.
bool IsSimpleGroupSelector(std::string_view text);

}  // namespace solgate
