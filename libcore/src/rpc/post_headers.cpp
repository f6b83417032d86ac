#include "rpc/post_headers.h"

#include <string>

#include "base/header_text.h"
#include "rpc/answers.h"
#include "rpc/rpc_request.h"

namespace solgate {
namespace {

enum Refused { kCompressed, kContentTypeTwice };

std::string_view Refusal(Refused why) {
    static const std::string kBodies[] = {
        ErrorAnswer(kInvalidRequest,
                    "Invalid request: send the body uncompressed (no "
                    "Content-Encoding)"),
        ErrorAnswer(kInvalidRequest,
                    "Invalid request: more than one Content-Type header"),
    };
    return kBodies[why];
}

}  // namespace

std::optional<PostRefusal> JudgePostHeaders(
    std::optional<std::string_view> content_encoding, size_t content_types) {
    if (content_encoding) {
        std::string_view coding = TrimmedOws(*content_encoding);
        if (!coding.empty() && !SameToken(coding, "identity")) {
            return PostRefusal{415, Refusal(kCompressed)};
        }
    }
    if (content_types > 1) {
        return PostRefusal{400, Refusal(kContentTypeTwice)};
    }
    return std::nullopt;
}

}  // namespace solgate
