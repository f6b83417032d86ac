// Random small edits of a JSON text, for the tests that check a fast
// reader against yajl: bytes that JSON's grammar turns on (brackets,
// quotes, digits, number and literal letters, escapes) are inserted,
// deleted or overwritten, so most edits land near a decision.
#pragma once

#include <random>
#include <string>

namespace solgate {

// One to three edits of body; the same rng gives the same edits.
inline std::string MutateJson(std::string body, std::mt19937& rng) {
    static const std::string kAlphabet = "{}[]\",:0123456789-+.eE tfnrul\\ax";
    int edits = 1 + rng() % 3;
    for (int e = 0; e < edits && !body.empty(); e++) {
        size_t at = rng() % body.size();
        char c = kAlphabet[rng() % kAlphabet.size()];
        switch (rng() % 3) {
        case 0: body.insert(body.begin() + at, c); break;
        case 1: body.erase(at, 1); break;
        default: body[at] = c; break;
        }
    }
    return body;
}

}  // namespace solgate
