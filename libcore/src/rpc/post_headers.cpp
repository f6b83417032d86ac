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

std::optional<PostRefusal> JudgePostHeaders(const PostHeaders& headers) {
    // Two Content-Encoding headers are one list ("identity, gzip"): more
    // than one coding, so not the body as sent.
    if (headers.content_encodings > 1) {
        return PostRefusal{415, Refusal(kCompressed)};
    }
    if (headers.content_encoding) {
        std::string_view coding = TrimmedOws(*headers.content_encoding);
        if (!coding.empty() && !SameToken(coding, "identity")) {
            return PostRefusal{415, Refusal(kCompressed)};
        }
    }
    if (headers.content_types > 1) {
        return PostRefusal{400, Refusal(kContentTypeTwice)};
    }
    return std::nullopt;
}

}  // namespace solgate
