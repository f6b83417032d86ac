// The extern "C" shims of a client request: parse, route, the attempts and
// the answers Solgate writes itself. They fail closed: a request Solgate
// could not judge is answered 500, never forwarded.
#include <algorithm>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <string>

#include "base/recycled.h"
#include "capi/c_api_util.h"
#include "capi/c_handles.h"
#include "json/error_answer.h"
#include "routing/router.h"
#include "rpc/answers.h"
#include "rpc/post_headers.h"
#include "solgate/solgate.h"

namespace {

using solgate::capi::Guard;
using solgate::capi::Present;
using solgate::capi::ToStr;
using solgate::capi::View;

sg_route_t Answer(unsigned status, const std::string& body) {
    return sg_route_t{SG_ROUTE_ANSWER, status, ToStr(body), 0, 0, 0, 0};
}

// An attempt's end as the glue reports it (the views point into its data).
solgate::RoutedRequest::AttemptEnd AttemptEndOf(const sg_attempt_end_t& end) {
    solgate::RoutedRequest::AttemptEnd e;
    e.http_status = end.http_status;
    e.timed_out = end.timed_out != 0;
    e.connected = end.connected != 0;
    e.retry_after = View(end.retry_after);
    e.answer = View(end.answer);
    return e;
}

// The requests this thread finished, cleared, for its next ones.
using RequestSpares = solgate::ThreadSpares<std::unique_ptr<sg_request_s>>;

// Said when even the answer could not be built.
constexpr std::string_view kInternalErrorBody =
    R"({"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error"},"id":null})";

}  // namespace

extern "C" {

int sg_request_parse(const char* body, size_t len,
                     sg_request_t** out) noexcept {
    if (out == nullptr || (body == nullptr && len > 0)) {
        return SG_INVALID;
    }
    *out = nullptr;
    return Guard(SG_ERROR, [&] {
        std::unique_ptr<sg_request_s> req = RequestSpares::Take();
        if (req == nullptr) {
            req = std::make_unique<sg_request_s>();
        }
        req->request.Parse(body, len);
        *out = req.release();
        return SG_OK;
    });
}

int sg_request_subscription(sg_request_t** out) noexcept {
    if (out == nullptr) {
        return SG_INVALID;
    }
    *out = nullptr;
    return Guard(SG_ERROR, [&] {
        solgate::RpcRequest subscription;
        subscription.shape = solgate::RpcRequest::Shape::kSubscription;
        *out = new sg_request_s(std::move(subscription));
        return SG_OK;
    });
}

void sg_request_free(sg_request_t* req) noexcept {
    std::unique_ptr<sg_request_s> owned(req);
    constexpr size_t kKept = solgate::RoutedRequest::kKeptAnswerBytes;
    if (owned == nullptr || !owned->request.WorthKeeping() ||
        owned->answer.capacity() > kKept ||
        owned->status_answer.capacity() > kKept) {
        return;   // let go
    }
    owned->request.Clear();
    owned->answer.clear();
    owned->status_answer.clear();
    try {
        RequestSpares::GiveWith([&](std::unique_ptr<sg_request_s>& spare) {
            spare = std::move(owned);
        });
    } catch (...) {
        // not kept: deleted here
    }
}

int sg_request_route(sg_request_t* req, const sg_network_t* net,
                     const sg_selector_sources_t* sources, int64_t now_ms,
                     sg_route_t* out) noexcept {
    if (req == nullptr || net == nullptr || sources == nullptr ||
        out == nullptr) {
        return SG_INVALID;
    }
    return Guard(SG_ERROR, [&] {
        solgate::SelectorSources from{
            Present(sources->has_header, sources->header),
            Present(sources->has_erpc_header, sources->erpc_header),
            Present(sources->has_query, sources->query),
            sources->header_twice != 0, sources->erpc_header_twice != 0,
            sources->query_twice != 0};
        solgate::RouteDecision decision =
            req->request.Route(net->network, from, now_ms);
        if (decision.forward) {
            req->answer = std::move(decision.forward_body);
            *out = sg_route_t{SG_ROUTE_FORWARD, 0, ToStr(req->answer),
                              req->request.merge().empty() ? 0 : 1,
                              req->request.pieces().size(),
                              req->request.MayFanOut() ? 1 : 0, 0};
            return SG_OK;
        }
        req->answer = std::move(decision.answer);
        *out = Answer(decision.http_status, req->answer);
        out->retry_after = decision.retry_after_s;
        return SG_OK;
    });
}

static_assert(static_cast<int>(solgate::BatchPiece::Kind::kRun) == SG_PIECE_RUN &&
                  static_cast<int>(solgate::BatchPiece::Kind::kAlone) ==
                      SG_PIECE_ALONE,
              "sg_piece_kind_e follows BatchPiece::Kind");

int sg_request_piece(const sg_request_t* req, size_t i,
                     sg_piece_t* out) noexcept {
    if (req == nullptr || out == nullptr ||
        i >= req->request.pieces().size()) {
        return SG_INVALID;
    }
    const solgate::BatchPiece& piece = req->request.pieces()[i];
    std::string_view text = piece.kind == solgate::BatchPiece::Kind::kAlone
                                ? piece.call
                                : std::string_view(piece.text);
    *out = sg_piece_t{static_cast<int>(piece.kind),
                      sg_str_t{text.data(), text.size()},
                      piece.answers ? 1 : 0};
    return SG_OK;
}

void sg_request_set_run(sg_request_t* req) noexcept {
    if (req != nullptr) {
        req->request.SetRun();
    }
}

int sg_request_status_answer(sg_request_t* req, unsigned http_status,
                             sg_str_t* out) noexcept {
    if (req == nullptr || out == nullptr) {
        return SG_INVALID;
    }
    return Guard(SG_ERROR, [&] {
        req->status_answer = req->request.StatusAnswer(http_status);
        *out = ToStr(req->status_answer);
        return SG_OK;
    });
}

int sg_request_pick(sg_request_t* req, int64_t now_ms,
                    sg_pick_t* out) noexcept {
    if (req == nullptr || out == nullptr) {
        return SG_INVALID;
    }
    return Guard(SG_ERROR, [&] {
        auto attempt = req->request.NextAttempt(now_ms);
        if (!attempt) {
            return SG_NONE;
        }
        *out = sg_pick_t{attempt->upstream, attempt->warn_all_cordoned ? 1 : 0};
        return SG_OK;
    });
}

int sg_request_report(sg_request_t* req, const sg_attempt_end_t* end,
                      int64_t now_ms, sg_attempt_report_t* out) noexcept {
    if (req == nullptr || end == nullptr || out == nullptr) {
        return SG_INVALID;
    }
    *out = sg_attempt_report_t{};
    return Guard(SG_ERROR, [&] {
        solgate::RoutedRequest::AttemptEnd e = AttemptEndOf(*end);
        solgate::RoutedRequest::AttemptReport report =
            req->request.Report(e, now_ms);
        using Retry = solgate::RoutedRequest::Retry;
        std::string_view cause =
            report.retry != Retry::kNone
                ? solgate::RoutedRequest::RetryName(report.retry)
                : solgate::AttemptCauseName(report.outcome.cause);
        out->failed =
            report.outcome.cause != solgate::AttemptCause::kOk ||
                    report.retry != Retry::kNone || report.answer_kept
                ? 1
                : 0;
        out->retry = report.retry != Retry::kNone ? 1 : 0;
        out->retry_delay_ms = report.retry_delay_ms;
        out->ejected_ms = static_cast<uint32_t>(report.ejected_ms);
        out->cause = sg_str_t{cause.data(), cause.size()};
        out->write_not_retried = report.write_not_retried ? 1 : 0;
        out->data_given_up = report.data_given_up ? 1 : 0;
        out->not_node_fault =
            report.outcome.cause == solgate::AttemptCause::kMinContextSlot
                ? 1
                : 0;
        if (report.write_not_retried) {
            req->answer = req->request.WriteNotRetriedAnswer(report);
        }
        return SG_OK;
    });
}

int sg_request_report_cut(sg_request_t* req, int64_t now_ms,
                          uint32_t* ejected_ms) noexcept {
    if (req == nullptr || ejected_ms == nullptr) {
        return SG_INVALID;
    }
    *ejected_ms = 0;
    return Guard(SG_ERROR, [&] {
        *ejected_ms = static_cast<uint32_t>(req->request.ReportCut(now_ms));
        return SG_OK;
    });
}

void sg_request_finish(sg_request_t* req, unsigned http_status, int rpc_error,
                       int64_t error_code, int64_t duration_ms) noexcept {
    if (req == nullptr) {
        return;
    }
    Guard(SG_ERROR, [&] {
        req->request.Finish(
            http_status, rpc_error != 0,
            error_code != SG_RPC_ERROR_CODE_UNREAD
                ? std::optional<int64_t>(error_code)
                : std::nullopt,
            duration_ms);
        return SG_OK;
    });
}

size_t sg_error_reason(const char* answer, size_t len, char* out,
                       size_t size) noexcept {
    static_assert(SG_MAX_REASON_PHRASE == solgate::kMaxReasonPhrase,
                  "the C ABI's bound is libcore's");
    if (answer == nullptr || out == nullptr) {
        return 0;
    }
    try {
        std::optional<std::string> message =
            solgate::ParseErrorMessage(std::string_view(answer, len));
        if (!message) {
            message =
                solgate::ParseBatchErrorMessage(std::string_view(answer, len));
        }
        if (!message) {
            return 0;
        }
        std::string reason = solgate::ReasonPhrase(*message);
        size_t n = std::min(reason.size(), size);
        std::memcpy(out, reason.data(), n);
        return n;
    } catch (...) {
        return 0;   // no reason phrase: nginx's own
    }
}

int sg_looks_like_rpc_error(const char* data, size_t len) noexcept {
    if (data == nullptr) {
        return 0;
    }
    return solgate::LooksLikeRpcError(std::string_view(data, len)) ? 1 : 0;
}

int64_t sg_rpc_error_code(const char* data, size_t len) noexcept {
    if (data == nullptr) {
        return SG_RPC_ERROR_CODE_UNREAD;
    }
    try {
        // agave's layout is read where it starts; any other is parsed
        // whole (yajl), which only an answer that is all there allows
        std::string_view text(data, len);
        std::optional<int64_t> code = solgate::LeadingErrorCode(text);
        if (!code) {
            code = solgate::ParseErrorCode(text);
        }
        return code ? *code : SG_RPC_ERROR_CODE_UNREAD;
    } catch (...) {
        return SG_RPC_ERROR_CODE_UNREAD;
    }
}

int sg_request_fanout(sg_request_t* req, int64_t now_ms, size_t* targets,
                      size_t cap, sg_fanout_t* out) noexcept {
    if (req == nullptr || out == nullptr || (targets == nullptr && cap > 0)) {
        return SG_INVALID;
    }
    *out = sg_fanout_t{};
    return Guard(SG_ERROR, [&] {
        solgate::RoutedRequest::FanOutStart start =
            req->request.StartFanOut(now_ms);
        out->kind = static_cast<sg_fanout_kind_t>(start.kind);
        out->hedge_after_ms = start.hedge_after_ms;
        for (size_t upstream : start.targets) {
            if (out->n < cap) {
                targets[out->n++] = upstream;
            }
        }
        return SG_OK;
    });
}

int sg_request_fanout_report(sg_request_t* req, size_t upstream,
                             const sg_attempt_end_t* end, int cancelled,
                             int64_t now_ms, sg_fanout_step_t* out) noexcept {
    if (req == nullptr || end == nullptr || out == nullptr ||
        req->request.network() == nullptr ||
        upstream >= req->request.network()->size()) {
        return SG_INVALID;
    }
    *out = sg_fanout_step_t{};
    return Guard(SG_ERROR, [&] {
        solgate::RoutedRequest::FanOutStep step = req->request.ReportFanOut(
            upstream, AttemptEndOf(*end), cancelled != 0, now_ms);
        out->decided = step.decided ? 1 : 0;
        out->launch = step.launch ? 1 : 0;
        out->upstream = step.launch ? *step.launch : 0;
        out->pending = req->request.FanOutPending();
        return SG_OK;
    });
}

int sg_request_hedge(sg_request_t* req, int64_t now_ms, size_t* upstream,
                     int* again) noexcept {
    if (req == nullptr || upstream == nullptr || again == nullptr) {
        return SG_INVALID;
    }
    *again = 0;
    return Guard(SG_ERROR, [&] {
        std::optional<size_t> next = req->request.NextHedge(now_ms);
        if (!next) {
            return SG_NONE;
        }
        *upstream = *next;
        *again = req->request.HedgeLeft() ? 1 : 0;
        return SG_OK;
    });
}

int sg_request_fanout_answer(sg_request_t* req, sg_route_t* out) noexcept {
    if (req == nullptr || out == nullptr) {
        return SG_INVALID;
    }
    return Guard(SG_ERROR, [&] {
        solgate::RoutedRequest::Answer answer = req->request.FanOutAnswer();
        req->answer = std::move(answer.body);
        *out = Answer(answer.http_status, req->answer);
        return SG_OK;
    });
}

int sg_request_write_answer(sg_request_t* req, sg_route_t* out) noexcept {
    if (req == nullptr || out == nullptr) {
        return SG_INVALID;
    }
    return Guard(SG_ERROR, [&] {
        *out = Answer(solgate::kAllFailedHttpStatus, req->answer);
        return SG_OK;
    });
}

int sg_request_fail(sg_request_t* req, sg_route_t* out) noexcept {
    if (req == nullptr || out == nullptr) {
        return SG_INVALID;
    }
    return Guard(SG_ERROR, [&] {
        if (const std::string* kept = req->request.KeptAnswer()) {
            req->answer = *kept;
            *out = Answer(200, req->answer);
            return SG_NONE;
        }
        solgate::RoutedRequest::Answer failed = req->request.AllFailed();
        req->answer = std::move(failed.body);
        *out = Answer(failed.http_status, req->answer);
        return SG_OK;
    });
}

size_t sg_request_attempts(const sg_request_t* req) noexcept {
    return req == nullptr ? 0 : req->request.attempts();
}

int sg_request_upstream(const sg_request_t* req, size_t* upstream) noexcept {
    if (req == nullptr || upstream == nullptr) {
        return SG_INVALID;
    }
    std::optional<size_t> answered_by = req->request.upstream();
    if (!answered_by) {
        return SG_NONE;
    }
    *upstream = *answered_by;
    return SG_OK;
}

sg_str_t sg_request_method(const sg_request_t* req) noexcept {
    if (req == nullptr) {
        return ToStr("");
    }
    return ToStr(solgate::RequestMethodName(req->request.parsed()));
}

sg_str_t sg_request_lane(const sg_request_t* req) noexcept {
    if (req == nullptr) {
        return ToStr("");
    }
    return ToStr(req->request.plan().lane_name);
}

sg_str_t sg_http_error_answer(unsigned http_status) noexcept {
    try {
        return ToStr(solgate::StatusAnswer(http_status));
    } catch (...) {
        return ToStr(kInternalErrorBody);
    }
}

unsigned sg_post_refusal(const sg_post_headers_t* headers,
                         sg_str_t* body) noexcept {
    if (body == nullptr) {
        return 400;
    }
    if (headers == nullptr) {
        *body = sg_http_error_answer(400);
        return 400;
    }
    solgate::PostHeaders judged;
    judged.content_encoding = Present(headers->content_encoding.data != nullptr,
                                      headers->content_encoding);
    judged.content_encodings = headers->content_encodings;
    judged.content_types = headers->content_types;
    try {
        auto refusal = solgate::JudgePostHeaders(judged);
        if (!refusal) {
            *body = sg_str_t{nullptr, 0};
            return 0;
        }
        *body = ToStr(refusal->body);
        return refusal->http_status;
    } catch (...) {
        *body = ToStr(kInternalErrorBody);
        return 500;
    }
}

}  // extern "C"
