// use-upstream selectors: grammar, matching by id and tag, errors, globs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "routing/selector.h"

namespace solgate {
namespace {

using Tags = std::vector<std::string>;

Selector MustParse(const std::string& text) {
    std::string error;
    std::optional<Selector> sel = Selector::Parse(text, &error);
    EXPECT_TRUE(sel.has_value()) << text << ": " << error;
    if (!sel) return *Selector::Parse("parse-failed-sentinel", nullptr);
    EXPECT_EQ(sel->text(), text);
    return *sel;
}

std::string ParseError(const std::string& text) {
    std::string error;
    std::optional<Selector> sel = Selector::Parse(text, &error);
    EXPECT_FALSE(sel.has_value()) << text << " parsed";
    return error;
}

bool Match(const std::string& text, const std::string& id,
           const Tags& tags = {}) {
    return MustParse(text).Matches(id, tags);
}

TEST(Selector, ExactId) {
    EXPECT_TRUE(Match("alchemy-1", "alchemy-1"));
    EXPECT_FALSE(Match("alchemy-1", "alchemy-2"));
    EXPECT_FALSE(Match("alchemy", "alchemy-1"));
    EXPECT_FALSE(Match("Alchemy-1", "alchemy-1"));  // case-sensitive
}

TEST(Selector, Globs) {
    EXPECT_TRUE(Match("alchemy-*", "alchemy-1"));
    EXPECT_TRUE(Match("alchemy-*", "alchemy-"));
    EXPECT_FALSE(Match("alchemy-*", "quicknode-1"));
    EXPECT_TRUE(Match("*-archive", "node-archive"));
    EXPECT_FALSE(Match("*-archive", "node-archive-2"));
    EXPECT_TRUE(Match("*", "anything"));
    EXPECT_TRUE(Match("*", ""));
    EXPECT_TRUE(Match("a*b*c", "abc"));
    EXPECT_TRUE(Match("a*b*c", "a-x-b-y-c"));
    EXPECT_FALSE(Match("a*b*c", "a-x-c-y-b"));
}

TEST(Selector, TermCharacters) {
    EXPECT_TRUE(Match("Node_1.eu:x-Y*", "Node_1.eu:x-Y-42"));
}

TEST(Selector, TagsMatchWhenTermHasColon) {
    Selector sel = MustParse("family:archive");
    EXPECT_TRUE(sel.Matches("node-1", {"region:eu", "family:archive"}));
    EXPECT_FALSE(sel.Matches("node-1", {"family:ledger"}));
    EXPECT_FALSE(sel.Matches("node-1", {}));
    // The id can match a term with a colon too.
    EXPECT_TRUE(sel.Matches("family:archive", {}));

    Selector any_family = MustParse("family:*");
    EXPECT_TRUE(any_family.Matches("node-1", {"family:ledger"}));
    EXPECT_TRUE(any_family.Matches("node-1", {"family:"}));
    EXPECT_FALSE(any_family.Matches("node-1", {"region:eu"}));
}

TEST(Selector, TermWithoutColonIgnoresTags) {
    // "archive" is an id pattern only; a tag spelled "archive" is not consulted.
    EXPECT_FALSE(Match("archive", "node-1", {"archive"}));
    EXPECT_FALSE(Match("*archive", "node-1", {"family:archive"}));
}

TEST(Selector, NegationIsByIdOnly) {
    Selector not_archive = MustParse("!family:archive");
    // Tagged family:archive but its id differs: not excluded.
    EXPECT_TRUE(not_archive.Matches("node-1", {"family:archive"}));
    EXPECT_FALSE(not_archive.Matches("family:archive", {}));

    Selector not_node = MustParse("!node-*");
    EXPECT_FALSE(not_node.Matches("node-1", {}));
    EXPECT_TRUE(not_node.Matches("alchemy-1", {"node-1"}));
    EXPECT_TRUE(not_node.Matches("alchemy-1", {}));

    EXPECT_TRUE(Match("! node-*", "alchemy-1"));  // blank after '!'
}

TEST(Selector, OrAndPrecedence) {
    // '&' binds tighter: a | (b & c).
    Selector sel = MustParse("a|b&c");
    EXPECT_TRUE(sel.Matches("a", {}));
    EXPECT_FALSE(sel.Matches("b", {}));
    EXPECT_FALSE(sel.Matches("c", {}));

    // (b & c) | a, same thing.
    Selector sel2 = MustParse("b&c|a");
    EXPECT_TRUE(sel2.Matches("a", {}));
    EXPECT_FALSE(sel2.Matches("b", {}));

    Selector both = MustParse("node-*&*-archive");
    EXPECT_TRUE(both.Matches("node-archive", {}));
    EXPECT_FALSE(both.Matches("node-ledger", {}));
    EXPECT_FALSE(both.Matches("x-archive", {}));

    Selector either = MustParse("alchemy-*|quicknode-*|helius");
    EXPECT_TRUE(either.Matches("alchemy-1", {}));
    EXPECT_TRUE(either.Matches("quicknode-2", {}));
    EXPECT_TRUE(either.Matches("helius", {}));
    EXPECT_FALSE(either.Matches("triton", {}));
}

TEST(Selector, Parentheses) {
    Selector sel = MustParse("(a|b)&!b");
    EXPECT_TRUE(sel.Matches("a", {}));
    EXPECT_FALSE(sel.Matches("b", {}));
    EXPECT_FALSE(sel.Matches("c", {}));

    Selector tagged = MustParse("(family:archive|family:ledger)&!node-2");
    EXPECT_TRUE(tagged.Matches("node-1", {"family:ledger"}));
    EXPECT_FALSE(tagged.Matches("node-2", {"family:ledger"}));
    EXPECT_FALSE(tagged.Matches("node-1", {"family:systx"}));

    EXPECT_TRUE(Match("((((a))))", "a"));
    EXPECT_TRUE(Match("(a)", "a"));
    EXPECT_FALSE(Match("(a)", "b"));
}

TEST(Selector, NegationAndBooleans) {
    Selector sel = MustParse("!a&!b|c");  // (!a & !b) | c
    EXPECT_FALSE(sel.Matches("a", {}));
    EXPECT_FALSE(sel.Matches("b", {}));
    EXPECT_TRUE(sel.Matches("c", {}));
    EXPECT_TRUE(sel.Matches("d", {}));
}

TEST(Selector, WhitespaceIsIgnored) {
    Selector sel = MustParse("  ( alchemy-*\t|  quicknode-* ) &  ! *-2  ");
    EXPECT_TRUE(sel.Matches("alchemy-1", {}));
    EXPECT_TRUE(sel.Matches("quicknode-1", {}));
    EXPECT_FALSE(sel.Matches("alchemy-2", {}));
    EXPECT_FALSE(sel.Matches("helius-1", {}));
    EXPECT_EQ(sel.text(), "  ( alchemy-*\t|  quicknode-* ) &  ! *-2  ");
    EXPECT_TRUE(Match(" a ", "a"));
}

TEST(Selector, CopiesStayValid) {
    std::optional<Selector> parsed = Selector::Parse("x-* | family:y", nullptr);
    ASSERT_TRUE(parsed);
    Selector copy = *parsed;
    parsed.reset();
    EXPECT_TRUE(copy.Matches("x-1", {}));
    EXPECT_TRUE(copy.Matches("z", {"family:y"}));
    EXPECT_FALSE(copy.Matches("z", {}));
    Selector moved = std::move(copy);
    EXPECT_TRUE(moved.Matches("x-1", {}));
}

TEST(Selector, NullErrorPointerIsAllowed) {
    EXPECT_FALSE(Selector::Parse("a|", nullptr));
    EXPECT_FALSE(Selector::Parse("a,b", nullptr));
    EXPECT_FALSE(Selector::Parse("", nullptr));
}

TEST(SelectorErrors, Empty) {
    EXPECT_EQ(ParseError(""), "empty selector");
    EXPECT_EQ(ParseError("   "), "empty selector");
    EXPECT_EQ(ParseError(" \t "), "empty selector");
}

TEST(SelectorErrors, InvalidCharacters) {
    EXPECT_EQ(ParseError("a,b"), "unexpected character ',' at position 2");
    EXPECT_EQ(ParseError("\"a\""), "unexpected character '\"' at position 1");
    EXPECT_EQ(ParseError("a?"), "unexpected character '?' at position 2");
    EXPECT_EQ(ParseError("a | b/c"), "unexpected character '/' at position 6");
    EXPECT_EQ(ParseError("a\nb"), "unexpected character 0x0a at position 2");
    EXPECT_EQ(ParseError("caf\xc3\xa9"),
              "unexpected character 0xc3 at position 4");
    EXPECT_EQ(ParseError(std::string("a\0b", 3)),
              "unexpected character 0x00 at position 2");
    // A bad character is reported before any syntax problem.
    EXPECT_EQ(ParseError("(a,"), "unexpected character ',' at position 3");
}

TEST(SelectorErrors, UnbalancedParentheses) {
    EXPECT_EQ(ParseError("(a"), "missing ')' for '(' at position 1");
    EXPECT_EQ(ParseError("a & (b | (c)"), "missing ')' for '(' at position 5");
    EXPECT_EQ(ParseError("("), "missing ')' for '(' at position 1");
    EXPECT_EQ(ParseError("a)"), "unexpected ')' at position 2");
    EXPECT_EQ(ParseError("(a|b))"), "unexpected ')' at position 6");
    EXPECT_EQ(ParseError("a | b)"), "unexpected ')' at position 6");
    EXPECT_EQ(ParseError(")"), "unexpected ')' at position 1");
    EXPECT_EQ(ParseError("()"), "empty parentheses at position 1");
    EXPECT_EQ(ParseError("a|( )"), "empty parentheses at position 3");
}

TEST(SelectorErrors, OperatorWithoutOperand) {
    EXPECT_EQ(ParseError("|a"), "missing pattern before '|' at position 1");
    EXPECT_EQ(ParseError(" & a"), "missing pattern before '&' at position 2");
    EXPECT_EQ(ParseError("a|"), "missing pattern after '|' at position 2");
    EXPECT_EQ(ParseError("a &  "), "missing pattern after '&' at position 3");
    EXPECT_EQ(ParseError("a||b"), "missing pattern after '|' at position 2");
    EXPECT_EQ(ParseError("a|&b"), "missing pattern after '|' at position 2");
    EXPECT_EQ(ParseError("(a|)"), "missing pattern after '|' at position 3");
    EXPECT_EQ(ParseError("(|a)"), "missing pattern before '|' at position 2");
}

TEST(SelectorErrors, NegationOfGroup) {
    EXPECT_EQ(ParseError("!(a|b)"),
              "'!' applies to one id pattern, not to a group (position 1)");
    EXPECT_EQ(ParseError("x & ! (a)"),
              "'!' applies to one id pattern, not to a group (position 5)");
    EXPECT_EQ(ParseError("!!a"),
              "'!' must be followed by an id pattern at position 1");
    EXPECT_EQ(ParseError("!"),
              "'!' must be followed by an id pattern at position 1");
    EXPECT_EQ(ParseError("a|!"),
              "'!' must be followed by an id pattern at position 3");
    EXPECT_EQ(ParseError("!|a"),
              "'!' must be followed by an id pattern at position 1");
}

TEST(SelectorErrors, TrailingInput) {
    EXPECT_EQ(ParseError("a b"), "expected '|' or '&' before 'b' at position 3");
    EXPECT_EQ(ParseError("a!b"), "expected '|' or '&' before '!' at position 2");
    EXPECT_EQ(ParseError("a(b)"),
              "expected '|' or '&' before '(' at position 2");
    EXPECT_EQ(ParseError("(a)(b)"),
              "expected '|' or '&' before '(' at position 4");
    EXPECT_EQ(ParseError("(a b)"),
              "expected '|', '&' or ')' before 'b' at position 4");
}

TEST(SelectorErrors, NestingLimit) {
    std::string ok = std::string(32, '(') + "a" + std::string(32, ')');
    EXPECT_TRUE(Match(ok, "a"));
    std::string deep = std::string(33, '(') + "a" + std::string(33, ')');
    EXPECT_EQ(ParseError(deep), "parentheses nested deeper than 32 at position 33");
    // Depth is nesting, not the number of groups.
    std::string wide;
    for (int i = 0; i < 40; i++) wide += (i ? "|(a" : "(a") + std::string(")");
    EXPECT_TRUE(Match(wide, "a"));
}

TEST(SelectorErrors, LengthLimit) {
    std::string max(1024, 'a');
    EXPECT_TRUE(Match(max, max));
    EXPECT_EQ(ParseError(std::string(1025, 'a')),
              "selector longer than 1024 characters");
    EXPECT_EQ(ParseError(std::string(1025, ' ')),
              "selector longer than 1024 characters");
}

TEST(Glob, Literal) {
    EXPECT_TRUE(GlobMatch("", ""));
    EXPECT_FALSE(GlobMatch("", "a"));
    EXPECT_FALSE(GlobMatch("a", ""));
    EXPECT_TRUE(GlobMatch("abc", "abc"));
    EXPECT_FALSE(GlobMatch("abc", "abd"));
    EXPECT_FALSE(GlobMatch("abc", "ABC"));
    EXPECT_FALSE(GlobMatch("abc", "abcd"));
    EXPECT_TRUE(GlobMatch("a.c", "a.c"));
    EXPECT_FALSE(GlobMatch("a.c", "abc"));  // '.' is literal
    EXPECT_FALSE(GlobMatch("a?c", "abc"));  // so is '?'
}

TEST(Glob, Stars) {
    EXPECT_TRUE(GlobMatch("*", ""));
    EXPECT_TRUE(GlobMatch("**", ""));
    EXPECT_TRUE(GlobMatch("***", "xyz"));
    EXPECT_TRUE(GlobMatch("a*", "a"));
    EXPECT_TRUE(GlobMatch("*a", "a"));
    EXPECT_TRUE(GlobMatch("*a*", "a"));
    EXPECT_FALSE(GlobMatch("*a*", "b"));
    EXPECT_TRUE(GlobMatch("a**b", "ab"));
    EXPECT_TRUE(GlobMatch("a*a", "aa"));
    EXPECT_FALSE(GlobMatch("a*a", "a"));  // prefix and suffix cannot overlap
    EXPECT_TRUE(GlobMatch("ab*ba", "aba-ba"));
    EXPECT_FALSE(GlobMatch("ab*ba", "aba"));
    EXPECT_TRUE(GlobMatch("*aab", "aaab"));
    EXPECT_TRUE(GlobMatch("a*b*c", "abbbbc"));
    EXPECT_TRUE(GlobMatch("a*bc*d", "abxbcyd"));
    EXPECT_FALSE(GlobMatch("a*bc*d", "abxbdyc"));
    EXPECT_TRUE(GlobMatch("*x*x*", "xx"));
    EXPECT_FALSE(GlobMatch("*x*x*", "x"));
    EXPECT_TRUE(GlobMatch("*-*-*", "a-b-c"));
    EXPECT_FALSE(GlobMatch("*-*-*", "a-b"));
}

// How long these take is measured by tools/bench/core_bench (glob); here
// only the answers. The alarm is a bound, not a measurement: a matcher
// that backtracks exponentially would never return, and the run fails
// instead of hanging.
TEST(Glob, PathologicalPatterns) {
    std::string text(100000, 'a');
    std::string pattern;
    for (int i = 0; i < 50; i++) pattern += "a*";
    pattern += "b";
    alarm(60);
    EXPECT_FALSE(GlobMatch(pattern, text));
    EXPECT_FALSE(GlobMatch("a*a*a*a*a*a*a*a*b", text));
    EXPECT_TRUE(GlobMatch(pattern.substr(0, pattern.size() - 1), text));
    std::string hard = text + "b";
    EXPECT_TRUE(GlobMatch(pattern, hard));
    EXPECT_FALSE(GlobMatch("*aaaaaaaaab*aaaaaaaaab", text));
    alarm(0);
}

TEST(SelectorSimple, SpecExamples) {
    EXPECT_TRUE(IsSimpleGroupSelector("flashblocks*"));
    EXPECT_TRUE(IsSimpleGroupSelector("!flashblocks*"));
    EXPECT_TRUE(IsSimpleGroupSelector("family:systx"));
    EXPECT_TRUE(IsSimpleGroupSelector("alchemy-*"));
    EXPECT_FALSE(IsSimpleGroupSelector("alchemy | quicknode"));
    EXPECT_FALSE(IsSimpleGroupSelector("(a | b)"));
    EXPECT_FALSE(IsSimpleGroupSelector("(a|b)"));
}

TEST(SelectorSimple, Rejections) {
    EXPECT_FALSE(IsSimpleGroupSelector(""));
    EXPECT_FALSE(IsSimpleGroupSelector("a,b"));
    EXPECT_FALSE(IsSimpleGroupSelector("a!b"));
    EXPECT_FALSE(IsSimpleGroupSelector("!!a"));
    EXPECT_FALSE(IsSimpleGroupSelector("a&b"));
    EXPECT_FALSE(IsSimpleGroupSelector("a|b"));
    EXPECT_FALSE(IsSimpleGroupSelector("(a)"));
    EXPECT_FALSE(IsSimpleGroupSelector("a)"));
    EXPECT_FALSE(IsSimpleGroupSelector(" a"));
    EXPECT_FALSE(IsSimpleGroupSelector("a\t"));
    EXPECT_FALSE(IsSimpleGroupSelector("a\nb"));
    EXPECT_TRUE(IsSimpleGroupSelector(std::string(128, 'a')));
    EXPECT_FALSE(IsSimpleGroupSelector(std::string(129, 'a')));
    EXPECT_TRUE(IsSimpleGroupSelector("!" + std::string(127, 'a')));
}

}  // namespace
}  // namespace solgate
